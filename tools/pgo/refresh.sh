#!/usr/bin/env bash
# Write tools/pgo/msll.profdata, the profile that tools/pgo/rustc-wrapper (the build's rustc
# wrapper, .cargo/config.toml) feeds to rustc in every optimised build (tools/pgo/README.md).
# Functions edited since the profile was taken are compiled without profile data: rerun after
# changing hot paths, and commit the new profile with the change.
#   1. build msll instrumented (-Cprofile-generate) in target/pgo-gen;
#   2. run the training workload: the whole catalogue once in its --quick form (every scenario,
#      every scheme, the code paths of the full run). Not the `msll bench` cases: they are what
#      tools/bench-vs-peers measures, so they are not trained on (session 11; with them case a ran
#      ~4 % faster still). Not `mslld bench`: its encryption loops run as often as the CPU allows,
#      dominate the counts, and push the simulator below LLVM's "hot" threshold (a10 then gains
#      1 % of instructions, not 13 %);
#   3. merge the raw counts with the llvm-profdata of rustc's own LLVM and record that LLVM's
#      major version (the wrapper uses the profile only with the same major version).
# Needs: rustup component add llvm-tools. Takes about 3 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
host=$(rustc -vV | sed -n 's/^host: //p')
pd="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
[ -x "$pd" ] || { echo "refresh.sh: $pd missing; run: rustup component add llvm-tools" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen="$root/target/pgo-gen"
# Instrumented through the wrapper (MSLL_PGO_GENERATE), not RUSTFLAGS: RUSTFLAGS would replace
# .cargo/config.toml's target flags, and the profile would then not match the functions the real
# build compiles under them (session 14: 4 such functions, one of them the WWW model's CDF lookup).
# The wrapper instruments optimised compilations only, so build scripts write no counts.
MSLL_PGO_GENERATE="$gen/raw-default" CARGO_TARGET_DIR="$gen" cargo build --release -q --bin msll
# Cargo does not see the wrapper's flag, so artifacts may keep an older default path: the run
# names its output itself.
LLVM_PROFILE_FILE="$tmp/raw/msll-%p-%m.profraw" "$gen/release/msll" reproduce --quick --out "$tmp/quick" >/dev/null
out="$root/tools/pgo"
"$pd" merge -o "$out/msll.profdata" "$tmp/raw"
rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p' > "$out/llvm-version"
echo "wrote tools/pgo/msll.profdata ($(du -k "$out/msll.profdata" | cut -f1) KiB, LLVM $(cat "$out/llvm-version"))"
echo "every optimised build uses it now (MSLL_PGO=0 builds without); commit it with the change it follows"
