#!/usr/bin/env bash
# Replay-packet benchmarks for docs/performance.md ("Replay packets"), measured side by side in
# one run (alternating, medians) because the machines are shared and noisy:
#   - recording overhead: `bud run --record` vs `bud run` throughput on a 3.3M-cycle run
#   - packet bytes per million cycles at the default checkpoint and digest intervals
#   - time to reach a symptom at the end of the long run: `bud replay --at` vs the whole replay
#   tests/bench/replay_bench.sh [BUILD_DIR]     Environment: BENCH_REPS (default 5)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
build=${1:-build}
reps=${BENCH_REPS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
work="$root/tests/replay/data/long_gemm.textpb"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


echo "## Replay packets (long_gemm: 12 dense 256x256x256 layers; median of $reps, alternating)"
echo
plain=() ; rec=()
for ((i = 0; i < reps; i++)); do
  plain+=("$(secs "$bud" run "$work")")
  rec+=("$(secs "$bud" run "$work" --record "$tmp/long.bpk")")
done
p=$(printf '%s\n' "${plain[@]}" | med)
r=$(printf '%s\n' "${rec[@]}" | med)
cycles=$("$bud" packet inspect --json "$tmp/long.bpk" | sed -n 's/.*"result":{"cycles":\([0-9]*\).*/\1/p')
bytes=$(stat -c %s "$tmp/long.bpk")
awk -v p="$p" -v r="$r" -v c="$cycles" 'BEGIN {
  printf "%-52s %10s\n", "measure", "value"
  printf "%-52s %10.3f s\n", "bud run (no recording)", p
  printf "%-52s %10.3f s\n", "bud run --record (defaults)", r
  printf "%-52s %10.3f   (target >= 0.95)\n", "recording throughput / plain throughput", p / r
  printf "%-52s %10d\n", "cycles", c }'
awk -v b="$bytes" -v c="$cycles" 'BEGIN {
  printf "%-52s %10d\n", "packet bytes", b
  printf "%-52s %10.3f MB (target <= 1)\n", "packet bytes per million cycles", b / c }'
"$bud" packet inspect "$tmp/long.bpk" | sed -n '/size by record kind/,$p'
echo

# A symptom at the very end of the long run: a lost DRAM response 99% of the way through.
drop=$((cycles * 99 / 100))
"$bud" run "$work" --fault "dram-drop@$drop" --hang-cycles 20000 --record "$tmp/hang.bpk" \
  >/dev/null 2>&1 || true
sym=$("$bud" packet inspect --json "$tmp/hang.bpk" | sed -n 's/.*"symptom":{"kind":"\([a-z-]*\)","cycle":\([0-9]*\).*/\1 \2/p')
at=${sym#* }
whole=() ; from=()
for ((i = 0; i < reps; i++)); do
  whole+=("$(secs "$bud" replay "$tmp/hang.bpk")")
  from+=("$(secs "$bud" replay --at "$at" "$tmp/hang.bpk")")
done
w=$(printf '%s\n' "${whole[@]}" | med)
f=$(printf '%s\n' "${from[@]}" | med)
awk -v w="$w" -v f="$f" -v s="$sym" 'BEGIN {
  printf "%-52s %10s\n", "symptom recorded", s
  printf "%-52s %10.3f s\n", "bud replay (whole run)", w
  printf "%-52s %10.3f s\n", "bud replay --at SYMPTOM_CYCLE (nearest checkpoint)", f
  printf "%-52s %10.3f   (target <= 0.1)\n", "--at time / whole-replay time", f / w }'
"$bud" replay --at "$at" "$tmp/hang.bpk" || true
