# ns-2 cross-check scenario for msll-sim's TCP (crates/msll-sim/src/tcp).
#
#   topo lan  (default): n0 (FTP, TCP Reno) --10Mb/1ms-- n1 --2Mb/3ms, ErrorModel-- n2 (TCPSink)
#                        packetSize_ 1000 (WLAN-like last hop, LAN1-like wired part)
#   topo cell          : n0 --2Mb/50ms-- n1 --14.4kb/100ms, ErrorModel-- n2, packetSize_ 50
#                        (seed 004 Cellular/WAN1: RTTs above the 0.5 s tick)
#
# Usage: ns chain.tcl <profile> <loss> <seed> <npkts> <outprefix> [trace [topo [sink [revloss [agent]]]]]
#   profile  2.1b4 : ns-2.35 configured to behave like ns-2.1b4 (ns2-semantics.md sec. 9/10:
#                    IW 1, no SYN, no headers, no Limited Transmit, integer halving, repeated FR,
#                    timer restart before the RTT update, RTO init 6 s, no RTO floor)
#            2.35  : stock ns-2.35 defaults
#            Both use tcpTick_ 0.5, window_ 20, packetSize_ 1000 (the dissertation's settings).
#   loss     per-packet drop probability on n1->n2 (ErrorModel, unit pkt, uniform), 0 = none
#   seed     seed of the default RNG (error model draws and TCP boot_time_)
#   sink     plain (Agent/TCPSink, default) or delack (Agent/TCPSink/DelAck, interval_ 100 ms)
#   revloss  per-packet drop probability on n2->n1 (the ACK direction), default 0
#   agent    Reno (Agent/TCP/Reno, default) or Vegas (Agent/TCP/Vegas, v_alpha_ 1, v_beta_ 3,
#            v_gamma_ 1: ns-2's defaults)
#   npkts    packets the FTP source produces
#   outprefix  writes <outprefix>.summary; if loss == 0 or trace == 1 also <outprefix>.pkt
#              (packet trace of n0<->n1 and n1->n2) and <outprefix>.cwnd (cwnd_ trace)
#
# Written for this repository; no ns-2 code copied.

if {$argc < 5 || $argc > 10} {
    puts stderr "usage: ns chain.tcl profile loss seed npkts outprefix \[trace \[topo \[sink \[revloss \[agent\]\]\]\]\]"
    exit 1
}
set profile [lindex $argv 0]
set loss    [lindex $argv 1]
set seed    [lindex $argv 2]
set npkts   [lindex $argv 3]
set out     [lindex $argv 4]
set tracing [expr {$loss == 0}]
if {$argc >= 6} { set tracing [lindex $argv 5] }
set topo lan
if {$argc >= 7} { set topo [lindex $argv 6] }
set sinktype plain
if {$argc >= 8} { set sinktype [lindex $argv 7] }
set revloss 0
if {$argc >= 9} { set revloss [lindex $argv 8] }
set agent Reno
if {$argc >= 10} { set agent [lindex $argv 9] }

Agent/TCP set tcpTick_ 0.5
Agent/TCP set window_ 20
if {$topo == "cell"} {
    Agent/TCP set packetSize_ 50
} else {
    Agent/TCP set packetSize_ 1000
}

source [file join [file dirname [info script]] profile.tcl]
tcp_profile $profile

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed

set n0 [$ns node]
set n1 [$ns node]
set n2 [$ns node]
if {$topo == "cell"} {
    $ns duplex-link $n0 $n1 2Mb 50ms DropTail
    $ns duplex-link $n1 $n2 14.4Kb 100ms DropTail
} else {
    $ns duplex-link $n0 $n1 10Mb 1ms DropTail
    $ns duplex-link $n1 $n2 2Mb 3ms DropTail
}
# Large queues: the seeds avoid congestion losses (seed004-ch4 sec. 2.2).
$ns queue-limit $n0 $n1 1000
$ns queue-limit $n1 $n2 1000
$ns queue-limit $n2 $n1 1000
$ns queue-limit $n1 $n0 1000

# Per-packet loss at the head of a link, before its queue (ns2-semantics.md 4.1).
proc lossy_head {rate from to} {
    global ns
    set em [new ErrorModel]
    $em set rate_ $rate
    $em unit pkt
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    $ns lossmodel $em $from $to
}
if {$loss > 0} {
    lossy_head $loss $n1 $n2
}
if {$revloss > 0} {
    # ACK losses: the same model on the first hop back. Created after the forward model, so
    # with both on, the two draw from the default RNG in event order.
    lossy_head $revloss $n2 $n1
}
if {$tracing} {
    # A packet dropped by the error model never reaches the n1->n2 queue, so it has no
    # dequeue ("-") event there; that is how extract scripts find the dropped transmissions.
    set pf [open $out.pkt w]
    $ns trace-queue $n0 $n1 $pf
    $ns trace-queue $n1 $n0 $pf
    $ns trace-queue $n1 $n2 $pf
    # ACKs: "+" for each ACK the sink sends, "d" if the reverse error model drops it.
    $ns trace-queue $n2 $n1 $pf
}

set tcp [new Agent/TCP/$agent]
if {$sinktype == "delack"} {
    set sink [new Agent/TCPSink/DelAck]
} else {
    set sink [new Agent/TCPSink]
}
$ns attach-agent $n0 $tcp
$ns attach-agent $n2 $sink
$ns connect $tcp $sink
if {$tracing} {
    set cf [open $out.cwnd w]
    $tcp attach $cf
    $tcp trace cwnd_
}
# boot_time_ (the TCP tick-clock phase) is a default-RNG draw in the agent's reset() and not
# visible from Tcl; print the first draws of an identically seeded RNG as candidates.
set shadow [new RNG]
$shadow seed $seed
set boot_candidates {}
for {set i 0} {$i < 4} {incr i} {
    lappend boot_candidates [$shadow uniform 0 [Agent/TCP set tcpTick_]]
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
    global ns tcp out t_done npkts profile loss seed boot_candidates
    set f [open $out.summary w]
    puts $f "profile $profile loss $loss seed $seed npkts $npkts done $t_done ndatapack [$tcp set ndatapack_] nrexmitpack [$tcp set nrexmitpack_] nrexmit [$tcp set nrexmit_] cwnd [$tcp set cwnd_] ssthresh [$tcp set ssthresh_] boot_candidates [join $boot_candidates ,]"
    close $f
    $ns halt
}

$ns at 0.0 "$ftp produce $npkts"
$ns at 100000.0 "finish"
$ns run
