# ns-2 side of msll's peer benchmark (issue 8), written for this repository.
#
#   wlan  : n0 --10Mb/1ms-- n1 --2Mb/3ms-- n2    100 MB FTP, 1000 B packets, byte errors 1/32768
#           in both directions of the last hop (ErrorModel unit byte = exponential byte intervals,
#           the WLAN level-3 model of seed 004 Table 3.3)
#   hscsd : n0 --86.4kb/100ms-- n1 --2Mb/50ms-- n2 --86.4kb/100ms-- n3   10 MB FTP, 100 B packets,
#           2% per-packet loss in both directions of both wireless links (seeds 000/001 HSCSD WAN2)
#
# TCP Reno, tcpTick_ 0.5, window_ 20 (the dissertation's settings).
# Usage: ns ns2-ftp.tcl wlan|hscsd seed
set which [lindex $argv 0]
set seed  [lindex $argv 1]
ns-random $seed
set ns [new Simulator]
Agent/TCP set tcpTick_ 0.5
Agent/TCP set window_ 20

proc lossy {ns a b unit rate} {
    foreach {x y} [list $a $b $b $a] {
        set em [new ErrorModel]
        $em unit $unit
        $em set rate_ $rate
        $em ranvar [new RandomVariable/Uniform]
        $ns lossmodel $em $x $y
    }
}

if {$which == "wlan"} {
    Agent/TCP set packetSize_ 1000
    set npkts 100000
    set n0 [$ns node]; set n1 [$ns node]; set n2 [$ns node]
    $ns duplex-link $n0 $n1 10Mb 1ms DropTail
    $ns duplex-link $n1 $n2 2Mb 3ms DropTail
    lossy $ns $n1 $n2 byte [expr {1.0 / 32768}]
    set dst $n2
} else {
    Agent/TCP set packetSize_ 100
    set npkts 100000
    set n0 [$ns node]; set n1 [$ns node]; set n2 [$ns node]; set n3 [$ns node]
    $ns duplex-link $n0 $n1 86.4Kb 100ms DropTail
    $ns duplex-link $n1 $n2 2Mb 50ms DropTail
    $ns duplex-link $n2 $n3 86.4Kb 100ms DropTail
    lossy $ns $n0 $n1 pkt 0.02
    lossy $ns $n2 $n3 pkt 0.02
    set dst $n3
}
set tcp [new Agent/TCP/Reno]
set sink [new Agent/TCPSink]
$ns attach-agent $n0 $tcp
$ns attach-agent $dst $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.0 "$ftp produce $npkts"
proc check {} {
    global ns tcp npkts
    if {[$tcp set ack_] >= [expr {$npkts - 1}]} {
        puts "done [$ns now] acked [$tcp set ack_] timeouts [$tcp set nrexmit_]"
        exit 0
    }
    $ns at [expr {[$ns now] + 1.0}] "check"
}
$ns at 1.0 "check"
$ns run
