#!/bin/sh
# Regenerate the trace references in ref/ (needs the `ns` binary, e.g. Debian's
# `apt-get install ns2`, which is ns-2.35). Not used by CI: the tests read the committed files.
#
# ref/errfree-<profile>.csv        1000 packets, no loss
# ref/replay-<profile>-l<loss>-s<seed>.csv
#                                  1000 packets, uniform loss on n1->n2, default-RNG seed
#
# CSV format, header first, one event per line:
#   send,<time s>,<packet number>,<bytes>,<dropped 0/1>
#        every data packet n0 puts on the n0->n1 queue ("+"), retransmissions included;
#        dropped = 1 if the error model at the head of n1->n2 dropped it (no "-" there)
#   cwnd,<time s>,<cwnd_>,,        every assignment of cwnd_ (ns-2 traced variable, 5 decimals)
#   done,<time s>,,,               when the sender's `done` fired (all data ACKed)
#   boot,<b1>,<b2>,<b3>,<b4>       first draws of an RNG seeded like the default RNG, times
#                                  tcpTick_: candidates for the sender's boot_time_ (see chain.tcl)
#   ack,<k>,<dropped 0/1>          only in runs with ACK loss: the k-th ACK the sink sent, and
#                                  whether the error model at the head of n2->n1 dropped it
#
# ref/cell-<profile>-l<loss>-s<seed>.csv: the same for topo "cell" (2Mb/50ms + 14.4kb/100ms,
# 50-byte packets, 300 packets), where RTT samples span 1-2 ticks and boot_time_ matters.
# ref/delack-<profile>-l<loss>-s<seed>.csv: topo "lan" with Agent/TCPSink/DelAck.
# ref/short-<profile>-s<seed>.csv: topo "lan", short transfers (5 packets, the size of a typical
# WWW reply) with 20 % loss in BOTH directions: SYN, data and ACK losses, timeouts before and after
# the first RTT sample (what WWW transfers live on).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

extract() { # <prefix> <output csv>
    {
        echo "event,time,value,bytes,dropped"
        awk '$1 == "-" && $3 == 1 && $4 == 2 { passed[$12] = 1 }
             $1 == "+" && $3 == 0 && $4 == 1 && $5 == "tcp" { n++; t[n] = $2; s[n] = $11; b[n] = $6; u[n] = $12 }
             END { for (i = 1; i <= n; i++) print "send," t[i] "," s[i] "," b[i] "," ((u[i] in passed) ? 0 : 1) }' "$1.pkt"
        awk '$6 == "cwnd_" { print "cwnd," $1 "," $7 ",," }' "$1.cwnd"
        awk '{ for (i = 1; i < NF; i++) if ($i == "done") print "done," $(i + 1) ",,," }' "$1.summary"
        awk '{ for (i = 1; i < NF; i++) if ($i == "boot_candidates") print "boot," $(i + 1) }' "$1.summary"
        if [ "${2#*short-}" != "$2" ]; then
            awk '$1 == "+" && $3 == 2 && $4 == 1 && $5 == "ack" { m++; a[m] = $12 }
                 $1 == "d" && $3 == 2 && $4 == 1 { dropped[$12] = 1 }
                 END { for (i = 1; i <= m; i++) print "ack," i "," ((a[i] in dropped) ? 1 : 0) }' "$1.pkt"
        fi
    } > "$2"
}

for profile in 2.1b4 2.35; do
    (cd "$tmp" && ns "$here/chain.tcl" "$profile" 0 1 1000 "$tmp/ef")
    extract "$tmp/ef" "$here/ref/errfree-$profile.csv"
    cp "$tmp/ef.summary" "$here/ref/errfree-$profile.summary"
    for ls in 0.03:7 0.03:8 0.10:9 0.10:10; do
        loss=${ls%:*}
        seed=${ls#*:}
        (cd "$tmp" && ns "$here/chain.tcl" "$profile" "$loss" "$seed" 1000 "$tmp/l" 1)
        extract "$tmp/l" "$here/ref/replay-$profile-l$loss-s$seed.csv"
        cp "$tmp/l.summary" "$here/ref/replay-$profile-l$loss-s$seed.summary"
    done
    for ls in 0:1 0.02:3 0.05:4; do
        loss=${ls%:*}
        seed=${ls#*:}
        (cd "$tmp" && ns "$here/chain.tcl" "$profile" "$loss" "$seed" 300 "$tmp/c" 1 cell)
        extract "$tmp/c" "$here/ref/cell-$profile-l$loss-s$seed.csv"
        cp "$tmp/c.summary" "$here/ref/cell-$profile-l$loss-s$seed.summary"
    done
    for ls in 0:1 0.03:7; do
        loss=${ls%:*}
        seed=${ls#*:}
        (cd "$tmp" && ns "$here/chain.tcl" "$profile" "$loss" "$seed" 1000 "$tmp/d" 1 lan delack)
        extract "$tmp/d" "$here/ref/delack-$profile-l$loss-s$seed.csv"
        cp "$tmp/d.summary" "$here/ref/delack-$profile-l$loss-s$seed.summary"
    done
    for seed in $(seq 1 12); do
        (cd "$tmp" && ns "$here/chain.tcl" "$profile" 0.2 "$seed" 5 "$tmp/s" 1 lan plain 0.2)
        extract "$tmp/s" "$here/ref/short-$profile-s$seed.csv"
    done
done

# ref/vegas-<profile>-l<loss>-s<seed>.csv: topo "lan" with Agent/TCP/Vegas (ns-2's v_alpha_ 1,
# v_beta_ 3, v_gamma_ 1), error-free and lossy (seed 003 compares Vegas with Reno).
for profile in 2.1b4 2.35; do
    for ls in 0:1 0.01:5 0.03:7 0.03:8 0.10:9 0.10:10; do
        loss=${ls%:*}
        seed=${ls#*:}
        (cd "$tmp" && ns "$here/chain.tcl" "$profile" "$loss" "$seed" 1000 "$tmp/v" 1 lan plain 0 Vegas)
        extract "$tmp/v" "$here/ref/vegas-$profile-l$loss-s$seed.csv"
        cp "$tmp/v.summary" "$here/ref/vegas-$profile-l$loss-s$seed.summary"
    done
done
