#!/bin/sh
# Lossy chain runs: 30 seeds x loss {1%, 2%, 5%} x profile {2.1b4, 2.35}, 5000 packets each.
# Writes one summary line per run to ref/lossy-<profile>.txt (needs `ns`; a few minutes).
# Usage: ./run_lossy.sh [npkts]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
npkts=${1:-5000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for profile in 2.1b4 2.35; do
    outf="$here/ref/lossy-$profile.txt"
    : > "$outf"
    for loss in 0.01 0.02 0.05; do
        seed=1
        while [ "$seed" -le 30 ]; do
            (cd "$tmp" && ns "$here/chain.tcl" "$profile" "$loss" "$seed" "$npkts" "$tmp/r")
            cat "$tmp/r.summary" >> "$outf"
            seed=$((seed + 1))
        done
    done
done
