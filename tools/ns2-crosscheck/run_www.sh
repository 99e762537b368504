#!/bin/sh
# Regenerate ref/www-<link>-l<loss>[-<profile>].txt: www.tcl over 20 seeds, one line per run
# ("seed <s> thr_bps .. pages .. requests .. objects .. lat_mean_s .. timeouts .. transfers ..").
# Needs the `ns` binary (Debian `apt-get install ns2`, ns-2.35); not used by CI. About a minute.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cdf="$here/../../data/http-mah"
# <link>:<loss>[:<profile>]; profile 2.35 unless given (the file name then ends in -<profile>).
for cfg in p2p:0 p2p:0.01 p2p:0.03 p2p:0.06 lan-ll:0 lan-ll:0.03 lan-snoop:0 lan-snoop:0.03 \
           lan-ll-pairs:0.01 lan-ll-pairs:0.03 lan-snoop-pairs:0.01 lan-snoop-pairs:0.03 \
           p2p:0.01:2.1b4 p2p:0.03:2.1b4; do
    link=${cfg%%:*}
    rest=${cfg#*:}
    loss=${rest%%:*}
    profile=2.35
    suffix=
    if [ "$rest" != "$loss" ]; then
        profile=${rest#*:}
        suffix="-$profile"
    fi
    out="$here/ref/www-$link-l$loss$suffix.txt"
    : > "$out"
    for seed in $(seq 1 20); do
        printf 'seed %s ' "$seed" >> "$out"
        ns "$here/www.tcl" "$link" "$loss" "$seed" 500 "$cdf" "$profile" 2>/dev/null | grep '^thr_bps' >> "$out"
    done
done
