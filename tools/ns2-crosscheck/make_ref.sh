#!/bin/sh
# Regenerate the error-free reference traces in ref/ (needs the `ns` binary, e.g. Debian's
# `apt-get install ns2`, which is ns-2.35). Not used by CI: the tests read the committed files.
#
# Output format (CSV, one event per line, header first):
#   send,<time s>,<packet number>,<bytes>   every data packet n0 puts on the n0->n1 queue ("+")
#   cwnd,<time s>,<cwnd_>                   every assignment of cwnd_ (ns-2 traced variable)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for profile in 2.1b4 2.35; do
    (cd "$tmp" && ns "$here/chain.tcl" "$profile" 0 1 1000 "$tmp/ef")
    {
        echo "event,time,value,bytes"
        awk '$1 == "+" && $3 == 0 && $4 == 1 && $5 == "tcp" { print "send," $2 "," $11 "," $6 }' "$tmp/ef.pkt"
        awk '$6 == "cwnd_" { print "cwnd," $1 "," $7 "," }' "$tmp/ef.cwnd"
    } > "$here/ref/errfree-$profile.csv"
    cp "$tmp/ef.summary" "$here/ref/errfree-$profile.summary"
done
