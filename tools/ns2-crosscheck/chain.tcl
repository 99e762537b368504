# ns-2 cross-check scenario for msll-sim's TCP (crates/msll-sim/src/tcp).
#
#   n0 (FTP, TCP Reno) --10Mb/1ms-- n1 --2Mb/3ms, optional ErrorModel-- n2 (TCPSink)
#
# Usage: ns chain.tcl <profile> <loss> <seed> <npkts> <outprefix> [trace]
#   profile  2.1b4 : ns-2.35 configured to behave like ns-2.1b4 (ns2-semantics.md sec. 9/10:
#                    IW 1, no SYN, no headers, no Limited Transmit, integer halving, repeated FR,
#                    timer restart before the RTT update, RTO init 6 s, no RTO floor)
#            2.35  : stock ns-2.35 defaults
#            Both use tcpTick_ 0.5, window_ 20, packetSize_ 1000 (the dissertation's settings).
#   loss     per-packet drop probability on n1->n2 (ErrorModel, unit pkt, uniform), 0 = none
#   seed     seed of the default RNG (error model draws and TCP boot_time_)
#   npkts    packets the FTP source produces
#   outprefix  writes <outprefix>.summary; if loss == 0 or trace == 1 also <outprefix>.pkt
#              (packet trace of n0<->n1 and n1->n2) and <outprefix>.cwnd (cwnd_ trace)
#
# Written for this repository; no ns-2 code copied.

if {$argc != 5 && $argc != 6} {
    puts stderr "usage: ns chain.tcl profile loss seed npkts outprefix \[trace\]"
    exit 1
}
set profile [lindex $argv 0]
set loss    [lindex $argv 1]
set seed    [lindex $argv 2]
set npkts   [lindex $argv 3]
set out     [lindex $argv 4]
set tracing [expr {$loss == 0}]
if {$argc == 6} { set tracing [lindex $argv 5] }

Agent/TCP set tcpTick_ 0.5
Agent/TCP set window_ 20
Agent/TCP set packetSize_ 1000

if {$profile == "2.1b4"} {
    Agent/TCP set windowInit_ 1
    Agent/TCP set syn_ false
    Agent/TCP set delay_growth_ false
    Agent/TCP set useHeaders_ false
    Agent/TCP set singledup_ 0
    Agent/TCP set precisionReduce_ false
    Agent/TCP set exitFastRetrans_ false
    Agent/TCP set timerfix_ false
    Agent/TCP set bugfix_ss_ 0
    Agent/TCP set rfc2988_ false
    Agent/TCP set minrto_ 0
    Agent/TCP set maxrto_ 100000
    Agent/TCP set rtxcur_init_ 6.0
} elseif {$profile != "2.35"} {
    puts stderr "unknown profile $profile"
    exit 1
}

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed

set n0 [$ns node]
set n1 [$ns node]
set n2 [$ns node]
$ns duplex-link $n0 $n1 10Mb 1ms DropTail
$ns duplex-link $n1 $n2 2Mb 3ms DropTail
# Large queues: the seeds avoid congestion losses (seed004-ch4 sec. 2.2).
$ns queue-limit $n0 $n1 1000
$ns queue-limit $n1 $n2 1000
$ns queue-limit $n2 $n1 1000
$ns queue-limit $n1 $n0 1000

if {$loss > 0} {
    set em [new ErrorModel]
    $em set rate_ $loss
    $em unit pkt
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    # Link head, before the queue (ns2-semantics.md 4.1).
    $ns lossmodel $em $n1 $n2
}
if {$tracing} {
    # A packet dropped by the error model never reaches the n1->n2 queue, so it has no
    # dequeue ("-") event there; that is how extract scripts find the dropped transmissions.
    set pf [open $out.pkt w]
    $ns trace-queue $n0 $n1 $pf
    $ns trace-queue $n1 $n0 $pf
    $ns trace-queue $n1 $n2 $pf
}

set tcp [new Agent/TCP/Reno]
set sink [new Agent/TCPSink]
$ns attach-agent $n0 $tcp
$ns attach-agent $n2 $sink
$ns connect $tcp $sink
if {$tracing} {
    set cf [open $out.cwnd w]
    $tcp attach $cf
    $tcp trace cwnd_
}
set ftp [new Application/FTP]
$ftp attach-agent $tcp

set t_done -1
$tcp proc done {} {
    global ns t_done
    set t_done [$ns now]
    $ns at-now "finish"
}

proc finish {} {
    global ns tcp out t_done npkts profile loss seed
    set f [open $out.summary w]
    puts $f "profile $profile loss $loss seed $seed npkts $npkts done $t_done ndatapack [$tcp set ndatapack_] nrexmitpack [$tcp set nrexmitpack_] nrexmit [$tcp set nrexmit_] cwnd [$tcp set cwnd_] ssthresh [$tcp set ssthresh_]"
    close $f
    $ns halt
}

$ns at 0.0 "$ftp produce $npkts"
$ns at 100000.0 "finish"
$ns run
