#!/bin/sh
# FTP in ns-2 (ftp.tcl), 30 seeds per point, for tests/ftp_ns2.rs and the Fig. 2 "Raw drops
# ~30 %" claims. Writes ref/ftp-<profile>.txt, one line per run
# ("<link> <p> <seed> thr_bps <x> timeouts <n>"), and prints mean +- sd per point.
# Usage: ./run_ftp.sh [profile]   (2.35 (default) or 2.1b4; needs `ns`, Debian ns-2.35; ~45 s)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
profile=${1:-2.35}
out="$here/ref/ftp-$profile.txt"
: > "$out"
for pt in hscsd:0.01:100000 hscsd:0.02:100000 wlan11b:131072:100000 wlan11b:65536:100000 \
          hscsd2:0.01:100000 hscsd2:0.02:100000 wlan:32768:100000 wlan:16384:100000; do
    link=${pt%%:*}; rest=${pt#*:}; p=${rest%%:*}; n=${rest#*:}
    for seed in $(seq 1 30); do
        printf '%s %s %s ' "$link" "$p" "$seed" >> "$out"
        ns "$here/ftp.tcl" "$profile" "$link" "$p" "$seed" "$n" 2>/dev/null >> "$out"
    done
done
awk '{ k = $1 " p=" $2; t[k] += $5; tt[k] += $5 * $5; to[k] += $7; n[k]++ }
     END { for (k in n) { m = t[k] / n[k]; printf "%s runs %d thr_bps %.0f sd %.0f timeouts %.1f\n", k, n[k], m, sqrt(tt[k] / n[k] - m * m), to[k] / n[k] } }' "$out" | sort
