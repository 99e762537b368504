#!/usr/bin/env bash
# Upper bound of a payload-free packet representation (docs/performance.md, "Session 33").
# Every simulated packet carries its real bytes (a 1,000-byte segment is a 1,000-byte zero-filled
# allocation). This runs case a (Default) and case b-sr (SR/M2), 100 MB each, against the same runs
# with every size divided by 10 (100-byte segments and frames, the wireless link at 200 kbit/s,
# byte errors every 3,276.8 bytes on average): the same timings and about the same events, a tenth
# of the bytes. The CPU time saved bounds what packets without payload bytes could save.
# Usage: tools/payload-bound/run.sh [rounds, default 25] (alternating whole processes, one thread)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-25}
(cd "$root" && cargo build --release -q --bin msll)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for scheme in default sr-m2; do
    for scale in 1 10; do
        rate=$((2000000 / scale)); seg=$((1000 / scale)); bytes=$((100000000 / scale))
        mean=$(python3 -c "print(32768 / $scale)")
        cat > "$tmp/$scheme-x$scale.toml" <<TOML
[scenario]
name = "payload_bound_${scheme}_x${scale}"
replications = 1
seed = 1
[link]
preset = "wlan"
rate_bps = $rate
frame_payload = $seg
levels = [{ model = "byte-interval", mean = $mean, unit = "bytes" }]
[topology]
name = "LAN1"
[[app]]
kind = "ftp"
bytes = $bytes
segment_size = $seg
[sweep]
level = [1]
scheme = ["$scheme"]
TOML
    done
done
python3 - "$root/target/release/msll" "$rounds" "$tmp" <<'PY'
import os, statistics, subprocess, sys
exe, rounds, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = [f"{s}-x{k}" for s in ("default", "sr-m2") for k in (1, 10)]
cpu = {n: [] for n in names}
for _ in range(rounds):
    for n in names:
        p = subprocess.Popen([exe, "run", f"{tmp}/{n}.toml", "--threads", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        assert status == 0, n
        cpu[n].append(ru.ru_utime + ru.ru_stime)
for s in ("default", "sr-m2"):
    a, b = cpu[f"{s}-x1"], cpu[f"{s}-x10"]
    print(f"{s:8} 1000-byte segments: best {min(a):.4f} s, median {statistics.median(a):.4f} s | "
          f"100-byte: best {min(b):.4f} s, median {statistics.median(b):.4f} s | "
          f"saved: best {1 - min(b) / min(a):+.1%}, median {1 - statistics.median(b) / statistics.median(a):+.1%}")
PY
