# FTP over the seeds' wireless links in ns-2: the presets and topologies of seeds 000/001, and the
# "Raw drops ~30 %" claims of their Fig. 2 (S000.F2.a, S001.F2.a in scenarios/claims.toml).
# Written for this repository.
#
#   hscsd  : n0 --2Mb/50ms-- n1 --86.4kb/100ms-- n2, 100-byte packets, per-packet loss <p>
#            (seed 000 Fig. 2: HSCSD, WAN1)
#   hscsd2 : n0 --86.4kb/100ms-- n1 --2Mb/50ms-- n2 --86.4kb/100ms-- n3, the same on both wireless
#            links (HSCSD, WAN2: two wireless hosts)
#   wlan11b: n0 --10Mb/1ms-- n1 --5Mb/3ms-- n2, 1000-byte packets, byte errors at exponential
#            intervals of mean <p> bytes (ErrorModel unit byte, rate 1/<p>; seed 001 Fig. 2, LAN1)
#   wlan   : the same with seed 004's 2 Mb/s WLAN (Table 3.3; msll bench case a at p = 32768)
# Loss in both directions of the wireless hop; queues of 1000 packets; Reno with tcpTick_ 0.5,
# window_ 20; profile 2.1b4 = ns-2.35 with the knobs of ns2-semantics.md sec. 10 (as chain.tcl).
#
# Usage: ns ftp.tcl <profile 2.1b4|2.35> <hscsd|hscsd2|wlan11b|wlan> <p> <seed> <npkts>
# Prints: thr_bps <application bits / completion time> timeouts <nrexmit_>

if {$argc != 5} {
    puts stderr "usage: ns ftp.tcl 2.1b4|2.35 hscsd|hscsd2|wlan11b|wlan p seed npkts"
    exit 1
}
set profile [lindex $argv 0]
set link    [lindex $argv 1]
set p       [lindex $argv 2]
set seed    [lindex $argv 3]
set npkts   [lindex $argv 4]

Agent/TCP set tcpTick_ 0.5
Agent/TCP set window_ 20
if {[string match hscsd* $link]} {
    set size 100
} else {
    set size 1000
}
Agent/TCP set packetSize_ $size
source [file join [file dirname [info script]] profile.tcl]
tcp_profile $profile

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
set n0 [$ns node]
set n1 [$ns node]
set n2 [$ns node]
set last $n2
if {$link == "hscsd"} {
    $ns duplex-link $n0 $n1 2Mb 50ms DropTail
    $ns duplex-link $n1 $n2 86.4Kb 100ms DropTail
    set lossy [list $n1 $n2 $n2 $n1]
} elseif {$link == "hscsd2"} {
    set n3 [$ns node]
    set last $n3
    $ns duplex-link $n0 $n1 86.4Kb 100ms DropTail
    $ns duplex-link $n1 $n2 2Mb 50ms DropTail
    $ns duplex-link $n2 $n3 86.4Kb 100ms DropTail
    $ns queue-limit $n2 $n3 1000
    $ns queue-limit $n3 $n2 1000
    set lossy [list $n0 $n1 $n1 $n0 $n2 $n3 $n3 $n2]
} elseif {$link == "wlan"} {
    $ns duplex-link $n0 $n1 10Mb 1ms DropTail
    $ns duplex-link $n1 $n2 2Mb 3ms DropTail
    set lossy [list $n1 $n2 $n2 $n1]
} else {
    $ns duplex-link $n0 $n1 10Mb 1ms DropTail
    $ns duplex-link $n1 $n2 5Mb 3ms DropTail
    set lossy [list $n1 $n2 $n2 $n1]
}
foreach {a b} [list $n0 $n1 $n1 $n0 $n1 $n2 $n2 $n1] {
    $ns queue-limit $a $b 1000
}
if {$p > 0} {
    foreach {x y} $lossy {
        set em [new ErrorModel]
        if {[string match hscsd* $link]} {
            $em unit pkt
            $em set rate_ $p
        } else {
            $em unit byte
            $em set rate_ [expr {1.0 / $p}]
        }
        $em ranvar [new RandomVariable/Uniform]
        $em drop-target [new Agent/Null]
        $ns lossmodel $em $x $y
    }
}
set tcp [new Agent/TCP/Reno]
set sink [new Agent/TCPSink]
$ns attach-agent $n0 $tcp
$ns attach-agent $last $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$tcp proc done {} {
    global ns npkts size tcp
    puts [format "thr_bps %.1f timeouts %d" [expr {$npkts * $size * 8.0 / [$ns now]}] [$tcp set nrexmit_]]
    exit 0
}
$ns at 0.0 "$ftp produce $npkts"
$ns run
