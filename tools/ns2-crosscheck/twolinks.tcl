# FTP over two 802.11b-like links with and without Snoop, for claim S001.F3.a ("Snoop only minor
# gains over Raw, like GBN" on two WLAN links, seed 001 Fig. 3). Written for this repository.
#
#   a ~~ b1 --10Mb/1ms-- b2 ~~ b      (seed 001 LAN2: wireless host, two base stations)
# Each wireless hop is a LAN (ns-2.35 runs Snoop only inside one) of 5 Mbit/s, 3 ms, plain Mac,
# with byte errors at exponential intervals of mean <mean> bytes (ErrorModel unit byte between
# each interface's MAC and LL); <ll> on the base stations b1, b2 only, plain LL on the hosts.
# Stock ns-2.35 Reno, tcpTick_ 0.5, window_ 20, 1000-byte packets, queues of 1000.
# Coarse: ns-2's LAN (one channel for both directions, MAC, LL) runs at 4.52 Mbit/s error-free where
# msll's links run at 4.99, so only Snoop's ratio to the plain link compares.
#
# Usage: ns twolinks.tcl <LL|LL/LLSnoop> <mean_bytes, 0 = error-free> <seed> <npkts>
# Prints: thr_bps <application bits / completion time> timeouts <nrexmit_>
set bsll [lindex $argv 0]; set mean [lindex $argv 1]; set seed [lindex $argv 2]; set npkts [lindex $argv 3]
Agent/TCP set tcpTick_ 0.5
Agent/TCP set window_ 20
Agent/TCP set packetSize_ 1000
set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
set a [$ns node]; set b1 [$ns node]; set b2 [$ns node]; set b [$ns node]
$ns duplex-link $b1 $b2 10Mb 1ms DropTail
$ns queue-limit $b1 $b2 1000; $ns queue-limit $b2 $b1 1000
proc mklan {bs host} {
    global ns bsll mean
    set lan [new LanNode $ns -bw 5Mb -delay 3ms -llType LL -ifqType Queue/DropTail -ifqLen "" -macType Mac -chanType Channel -phyType Phy/WiredPhy -mactrace false]
    $lan addNode $bs 5Mb 3ms $bsll Queue/DropTail Mac Phy/WiredPhy false ""
    $lan addNode $host 5Mb 3ms LL Queue/DropTail Mac Phy/WiredPhy false ""
    foreach n [list $bs $host] {
        set ifc [$lan set lanIface_($n)]
        [$ifc set ifq_] set limit_ 1000
        # The LAN's Mac runs at its class default (2 Mbit/s) unless told: LanNode's -bw is not passed on.
        [$ifc set mac_] set bandwidth_ 5Mb
        if {$mean > 0} {
            set em [new ErrorModel]; $em unit byte; $em set rate_ [expr {1.0/$mean}]
            $em ranvar [new RandomVariable/Uniform]; $em drop-target [new Agent/Null]
            $em target [$ifc set ll_]; [$ifc set mac_] up-target $em
        }
    }
}
mklan $b1 $a
mklan $b2 $b
set tcp [new Agent/TCP/Reno]; set sink [new Agent/TCPSink]
$ns attach-agent $a $tcp; $ns attach-agent $b $sink; $ns connect $tcp $sink
set ftp [new Application/FTP]; $ftp attach-agent $tcp
$tcp proc done {} { global ns npkts tcp; puts [format "thr_bps %.1f timeouts %d" [expr {$npkts*1000*8.0/[$ns now]}] [$tcp set nrexmit_]]; exit 0 }
$ns at 0.0 "$ftp produce $npkts"
$ns run
