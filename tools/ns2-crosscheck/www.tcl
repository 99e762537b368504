# ns-2 cross-check scenario for msll-sim's WWW application (crates/msll-sim/src/app/www.rs) and,
# coarsely, its host-pair Snoop. Written for this repository; no ns-2 code copied.
#
#   n0 (server) --10Mb/1ms-- n1 (base station) --2Mb/3ms, lossy-- n2 (client)
#
# The page transaction follows ns-2's Http module (ns2-semantics.md 7.4, class `Http` of
# tcl/http/http.tcl) with maxConn 4, phttp 0, think time 0, server time 0: request on pair 0; the
# reply starts when the request's ACK reaches the client; after the page, NumImg object requests go
# out on pairs 0..3 in parallel, and each finished object starts the next on its pair. Every
# transfer resets its agent pair first. Two deliberate deviations, both msll's documented choices
# (docs/www.md), so that the two simulators run the same workload:
#   - a request is ceil(len / 1000) full-size packets (not one packet of `len` bytes);
#   - the Mah CDFs (data/http-mah) are sampled by RandomVariable/Empirical (interpolation_ 0, as
#     Http does) from their own RNG seeded with seed + 1000.
# Stock ns-2.35 TCP Reno / TCPSink with tcpTick_ 0.5, window_ 20, packetSize_ 1000.
#
# Usage: ns www.tcl <link> <loss> <seed> <duration_s> <cdfdir> [profile]
#   link   p2p      : duplex-link n1-n2, ErrorModel (unit pkt) at the head of both directions
#          lan-ll   : n1-n2 as a LAN (plain Mac, Channel), plain LL on both nodes, ErrorModel
#                     between each interface's MAC and LL
#          lan-snoop: the same LAN with LL/LLSnoop on the base station n1 only (the dissertation's
#                     placement; make-lan would put it on both nodes)
#          lan-ll-pairs, lan-snoop-pairs: the same LANs with four client nodes, pair i's client
#                     agents on the i-th. ns-2.35 keys Snoop state by node pair, so this gives each
#                     connection pair its own Snoop state, as the dissertation's ns-2.1b4 did
#                     (state per connection: the port was part of the address)
#   loss   per-packet drop probability, each direction
#   profile 2.35 (default: stock) or 2.1b4 (ns-2.35 with 2.1b4's knobs, as chain.tcl: IW 1, no SYN,
#          no headers, 6 s initial RTO, ...; `reset` stays 2.35's, so 2.1b4's stale-RTT artefact of
#          reused pairs (docs/www.md) is not reproduced)
#
# Prints one line: thr_bps pages requests objects lat_mean_s timeouts transfers, where objects
# counts every completed reply (pages and embedded objects), lat_mean_s is their mean latency
# (request issued -> reply fully ACKed at the server) and thr_bps = reply bytes of completed
# pages x 8 / (last page end - first page start).

if {$argc != 5 && $argc != 6} {
    puts stderr "usage: ns www.tcl p2p|lan-ll|lan-snoop|lan-ll-pairs|lan-snoop-pairs loss seed duration_s cdfdir \[2.35|2.1b4\]"
    exit 1
}
set profile [expr {$argc == 6 ? [lindex $argv 5] : "2.35"}]
set link   [lindex $argv 0]
set loss   [lindex $argv 1]
set seed   [lindex $argv 2]
set dur    [lindex $argv 3]
set cdfdir [lindex $argv 4]

Agent/TCP set tcpTick_ 0.5
Agent/TCP set window_ 20
Agent/TCP set packetSize_ 1000
source [file join [file dirname [info script]] profile.tcl]
tcp_profile $profile

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $seed
set n0 [$ns node]
set n1 [$ns node]
set n2 [$ns node]
$ns duplex-link $n0 $n1 10Mb 1ms DropTail
$ns queue-limit $n0 $n1 1000
$ns queue-limit $n1 $n0 1000

proc errmodel {} {
    global loss
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $loss
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    return $em
}

if {$link == "p2p"} {
    $ns duplex-link $n1 $n2 2Mb 3ms DropTail
    $ns queue-limit $n1 $n2 1000
    $ns queue-limit $n2 $n1 1000
    if {$loss > 0} {
        $ns lossmodel [errmodel] $n1 $n2
        $ns lossmodel [errmodel] $n2 $n1
    }
} elseif {[string match lan-* $link]} {
    set bsll [expr {[string match lan-snoop* $link] ? "LL/LLSnoop" : "LL"}]
    set clients [list $n2]
    if {[string match *-pairs $link]} {
        for {set i 1} {$i < 4} {incr i} { lappend clients [$ns node] }
    }
    set lan [new LanNode $ns -bw 2Mb -delay 3ms -llType LL -ifqType Queue/DropTail -ifqLen "" \
                 -macType Mac -chanType Channel -phyType Phy/WiredPhy -mactrace false]
    $lan addNode $n1 2Mb 3ms $bsll Queue/DropTail Mac Phy/WiredPhy false ""
    foreach c $clients {
        $lan addNode $c 2Mb 3ms LL Queue/DropTail Mac Phy/WiredPhy false ""
    }
    foreach n [concat $n1 $clients] {
        set ifc [$lan set lanIface_($n)]
        [$ifc set ifq_] set limit_ 1000
        # The LAN's Mac runs at its class default (2 Mbit/s) unless told: LanNode's -bw is not passed on.
        [$ifc set mac_] set bandwidth_ 2Mb
        if {$loss > 0} {
            set em [errmodel]
            $em target [$ifc set ll_]
            [$ifc set mac_] up-target $em
        }
    }
} else {
    puts stderr "unknown link $link"
    exit 1
}

set hrng [new RNG]
$hrng seed [expr {$seed + 1000}]
foreach {name file} {req HttpRequestLength rep HttpReplyLength num HttpConnections} {
    set rv($name) [new RandomVariable/Empirical]
    $rv($name) use-rng $hrng
    $rv($name) loadCDF $cdfdir/$file.cdf
}

set maxConn 4
for {set i 0} {$i < $maxConn} {incr i} {
    set cn [expr {[info exists clients] && [llength $clients] > 1 ? [lindex $clients $i] : $n2}]
    set creq($i) [new Agent/TCP/Reno]; set sreq($i) [new Agent/TCPSink]
    set srep($i) [new Agent/TCP/Reno]; set crep($i) [new Agent/TCPSink]
    $ns attach-agent $cn $creq($i); $ns attach-agent $n0 $sreq($i); $ns connect $creq($i) $sreq($i)
    $ns attach-agent $n0 $srep($i); $ns attach-agent $cn $crep($i); $ns connect $srep($i) $crep($i)
    $creq($i) proc done {} "doneRequest $i"
    $srep($i) proc done {} "doneReply $i"
}

set bytes 0; set pages 0; set requests 0; set objects 0; set latsum 0.0
set timeouts 0; set transfers 0; set tfirst -1; set tlast 0; set pagebytes 0

proc transmit {src snk nbytes} {
    global timeouts transfers
    if {$nbytes <= 0} { set nbytes 1000 }
    incr timeouts [$src set nrexmit_]
    incr transfers
    $src reset
    $snk reset
    $src advanceby [expr {int(ceil($nbytes / 1000.0))}]
}
proc request {i} {
    global ns creq sreq rv reqt requests
    set reqt($i) [$ns now]
    incr requests
    transmit $creq($i) $sreq($i) [expr {round([$rv(req) value])}]
}
proc start {} {
    global ns numGet numPut tStart tfirst pagebytes
    set tStart [$ns now]
    if {$tfirst < 0} { set tfirst $tStart }
    set numGet 0; set numPut 0; set pagebytes 0
    request 0
}
proc doneRequest {i} {
    global srep crep rv pagebytes
    set len [expr {round([$rv(rep) value])}]
    if {$len <= 0} { set len 1000 }
    incr pagebytes $len
    transmit $srep($i) $crep($i) $len
}
proc doneReply {i} {
    global numGet numPut numImg maxConn rv ns bytes pages tlast pagebytes reqt objects latsum
    incr objects
    set latsum [expr {$latsum + [$ns now] - $reqt($i)}]
    set ids [list $i]
    if {$numPut == 0} {
        set numImg [expr {round([$rv(num) value])}]
        for {set k 1} {$k < $maxConn} {incr k} { lappend ids $k }
    }
    incr numPut
    if {$numPut > $numImg} {
        incr bytes $pagebytes
        incr pages
        set tlast [$ns now]
        start
        return
    }
    foreach id $ids {
        incr numGet
        if {$numGet > $numImg} break
        request $id
    }
}
proc report {} {
    global bytes pages requests objects latsum timeouts transfers tfirst tlast maxConn creq srep
    for {set i 0} {$i < $maxConn} {incr i} {
        incr timeouts [$creq($i) set nrexmit_]
        incr timeouts [$srep($i) set nrexmit_]
    }
    set thr [expr {$tlast > $tfirst ? $bytes * 8.0 / ($tlast - $tfirst) : 0}]
    set lat [expr {$objects > 0 ? $latsum / $objects : 0}]
    puts [format "thr_bps %.1f pages %d requests %d objects %d lat_mean_s %.4f timeouts %d transfers %d" \
              $thr $pages $requests $objects $lat $timeouts $transfers]
    exit 0
}
$ns at 0.0 "start"
$ns at $dur "report"
$ns run
