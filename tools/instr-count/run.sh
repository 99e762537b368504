#!/usr/bin/env bash
# Instructions executed by `msll bench` cases under callgrind, against a committed baseline: the
# speed measure that does not move with the machine's load or its fast and slow states
# (docs/performance.md; one build's wall time moves by up to 75 % between runs on these VMs, its
# instruction count by a few instructions in 10^8). opp_repl's "speed tests" do the same for OMNeT++ (peers.md 3.4).
#
# Usage: tools/instr-count/run.sh [--bin PATH] [--update] [--max-rise PCT] [CASE ...]
#   CASE        bench cases (default: a10 e f d-sr; b-sr takes ~20 s more under callgrind)
#   --bin PATH  measure this msll binary (default: build target/release/msll)
#   --update    write the counts as the new baseline (tools/instr-count/baseline.tsv)
#   --max-rise  exit 1 if a case needs more than PCT % more instructions than its baseline
#               (default 2)
# Prints, per case: instructions, the baseline's, the change, and whether the case simulated the
# same thing (events, hops, simulated end, throughput): an optimisation must keep results, so a
# difference also exits 1 (a deliberate model change takes a new baseline: --update).
# Counts compare only under the same toolchain, target flags and PGO profile; the baseline records
# the rustc version and PGO profile hash it was taken with, and a mismatch is reported.
# Needs valgrind (apt-get install valgrind).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base="$here/baseline.tsv"
bin=""
update=0
max_rise=2
cases=()
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) bin=$2; shift ;;
    --update) update=1 ;;
    --max-rise) max_rise=$2; shift ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) cases+=("$1") ;;
    esac
    shift
done
[ ${#cases[@]} -gt 0 ] || cases=(a10 e f d-sr)
command -v valgrind >/dev/null || { echo "run.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
if [ -z "$bin" ]; then
    (cd "$root" && cargo build --release -q --bin msll)
    bin="$root/target/release/msll"
fi
[ -x "$bin" ] || { echo "run.sh: $bin is not an executable" >&2; exit 2; }
rustc_v=$(rustc -V | awk '{ print $2 }')
pgo=$(sha256sum "$root/tools/pgo/msll.profdata" | cut -c1-12)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# baseline.tsv: case, instructions, events, hops, sim_end_s, ftp_throughput_bps, rustc, pgo
declare -A B_INSTR B_RES B_TOOL
if [ -f "$base" ]; then
    while IFS=$'\t' read -r c n ev hops end thr rv pg; do
        [ "$c" = case ] && continue
        B_INSTR[$c]=$n
        B_RES[$c]="$ev $hops $end $thr"
        B_TOOL[$c]="$rv $pg"
    done < "$base"
fi

field() { # the value of a top-level key in bench's one-line JSON (numbers and null only)
    sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" "$2"
}

status=0
printf '%-6s %14s %14s %8s  %s\n' case instructions baseline change verdict
new="$tmp/baseline.tsv"
printf 'case\tinstructions\tevents\thops\tsim_end_s\tftp_throughput_bps\trustc\tpgo\n' > "$new"
for c in "${cases[@]}"; do
    if ! valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$c" "$bin" bench --case "$c" \
        > "$tmp/$c.json" 2> "$tmp/$c.err"; then
        echo "run.sh: case $c failed:" >&2; tail -5 "$tmp/$c.err" >&2; exit 2
    fi
    n=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$tmp/$c.err")
    [ -n "$n" ] || { echo "run.sh: no callgrind total for case $c" >&2; exit 2; }
    res="$(field events "$tmp/$c.json") $(field hops "$tmp/$c.json") $(field sim_end_s "$tmp/$c.json") $(field ftp_throughput_bps "$tmp/$c.json")"
    printf '%s\t%s\t%s\t%s\t%s\n' "$c" "$n" "$(echo "$res" | tr ' ' '\t')" "$rustc_v" "$pgo" >> "$new"
    b=${B_INSTR[$c]:-}
    if [ -z "$b" ]; then
        printf '%-6s %14s %14s %8s  %s\n' "$c" "$n" - - "no baseline"
        continue
    fi
    change=$(awk -v n="$n" -v b="$b" 'BEGIN { printf "%+.2f%%", 100 * (n - b) / b }')
    verdict=""
    if awk -v n="$n" -v b="$b" -v m="$max_rise" 'BEGIN { exit !(100 * (n - b) / b > m) }'; then
        verdict="MORE THAN +$max_rise %"
        status=1
    else
        verdict="ok"
    fi
    if [ "${B_RES[$c]}" = "$res" ]; then
        verdict="$verdict, same results"
    else
        verdict="$verdict, RESULTS DIFFER (events hops end throughput: $res, baseline ${B_RES[$c]})"
        status=1
    fi
    if [ "${B_TOOL[$c]}" != "$rustc_v $pgo" ]; then
        verdict="$verdict; baseline from rustc/PGO ${B_TOOL[$c]}, now $rustc_v $pgo"
    fi
    printf '%-6s %14s %14s %8s  %s\n' "$c" "$n" "$b" "$change" "$verdict"
done
if [ "$update" = 1 ]; then
    # Keep the baseline's other cases.
    cp "$new" "$tmp/merged.tsv"
    if [ -f "$base" ]; then
        awk -F'\t' 'NR == FNR { if (FNR > 1) seen[$1] = 1; next } FNR > 1 && !($1 in seen)' \
            "$new" "$base" >> "$tmp/merged.tsv"
    fi
    cp "$tmp/merged.tsv" "$base"
    echo "wrote $base"
fi
exit $status
