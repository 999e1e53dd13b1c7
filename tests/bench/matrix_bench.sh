#!/usr/bin/env bash
# The cost of `bud matrix BASE NEW` for docs/performance.md ("Before/after matrix"): wall and CPU
# time, RTL runs and simulated cycles of one bounded change (`--tile-rows 4`) on the built-ins,
# and on three ONNX examples as performance workloads and quality models (int8 and bf16), with
# the default 3 memory seeds; and the same built-in matrix as 2 local shards plus a merge, whose
# merged document must equal the single run's. Cells and decisions are deterministic; the times
# are this machine's (median of BENCH_REPS runs).
#   tests/bench/matrix_bench.sh [BUILD_DIR]   Environment: BENCH_REPS (default 3)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"  # now, secs, cpu, med
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud=$(cd "$build" && pwd)/bud
reps=${BENCH_REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ex="$root/examples/onnx"
onnx="$ex/resnet_tiny.onnx,$ex/mobilenet_tiny.onnx,$ex/transformer_tiny.onnx"

matrix() { "$bud" matrix "$@" || true; }  # any decision's exit status

figures() {  # figures NAME ARGS...: one line of the table
  local name=$1; shift
  local rc=0
  "$bud" matrix "$@" --json > "$tmp/m.json" || rc=$?
  local w c
  w=$(for _ in $(seq "$reps"); do secs matrix "$@"; done | med)
  c=$(for _ in $(seq "$reps"); do cpu matrix "$@"; done | med)
  python3 - "$tmp/m.json" "$name" "$w" "$c" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name, w, c, rc = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
r = d["runs"]
print(f"| {name} | {len(d['workloads'])} | {len(d['quality'])} | {r['rtl_runs']} | "
      f"{r['simulated_cycles']:,} | {w:.2f} s | {c:.2f} s | {r['simulated_cycles'] / w / 1e6:.2f} M/s | "
      f"{d['decision']['verdict']} (exit {rc}) |")
PY
}

echo "| matrix | workloads | quality cells | RTL runs | simulated cycles | wall | CPU | cycles/s | decision |"
echo "|---|---|---|---|---|---|---|---|---|"
figures "built-ins, --tile-rows 4" default '--tile-rows 4'
figures "3 ONNX examples + quality, --tile-rows 4" --workloads "$onnx" --models "$onnx" default '--tile-rows 4'

# Sharded: 2 shards one after the other, then the merge; the merged document equals the whole.
"$bud" matrix default '--tile-rows 4' --json > "$tmp/whole.json" || true
t0=$(now)
for i in 0 1; do "$bud" matrix default '--tile-rows 4' --shard "$i/2" --cells-out "$tmp/shards" > /dev/null; done
t1=$(now)
"$bud" matrix merge "$tmp/shards" --json > "$tmp/merged.json" || true
t2=$(now)
python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert a==b, "merged differs"' \
  "$tmp/whole.json" "$tmp/merged.json"
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "\nbuilt-ins as 2 shards: %.2f s for both shards, %.3f s to merge; merged document = the single run'"'"'s\n", b - a, c - b }'
