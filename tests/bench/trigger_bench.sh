#!/usr/bin/env bash
# Trigger benchmarks for docs/performance.md ("Triggers"), side by side in one run (alternating,
# medians) because the machines are shared and noisy:
#   - `bud run --triggers tests/bench/trigger_bench.trig` (8 triggers: 2 rate windows, 1 state
#     machine, thresholds, k-th occurrence, sample period, symptoms) vs `bud run` throughput
#   - the same evaluated inline (--inline-triggers: no second thread), to show what the
#     evaluation thread takes off the simulation thread
#   - the same with one capture action armed (pre 2048): history snapshots kept and their bytes
#   tests/bench/trigger_bench.sh [BUILD_DIR] [WORKLOAD]   Environment: BENCH_REPS (default 5)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
build=${1:-build}
reps=${BENCH_REPS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
work=${2:-$root/tests/replay/data/long_gemm.textpb}
trig="$root/tests/bench/trigger_bench.trig"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ cat "$trig"; printf 'trigger cap shots 1\n  when cycle == 3000000\n  do capture pre 2048 post 256\nend\n'; } >"$tmp/capture.trig"


echo "## Triggers ($(basename "$work"); median of $reps, alternating)"
echo
plain=(); trig8=(); inl=(); cap=()
for ((i = 0; i < reps; i++)); do
  plain+=("$(secs "$bud" run "$work")")
  trig8+=("$(secs "$bud" run "$work" --triggers "$trig")")
  inl+=("$(secs "$bud" run "$work" --triggers "$trig" --inline-triggers)")
  cap+=("$(secs "$bud" run "$work" --triggers "$tmp/capture.trig" --capture-dir "$tmp/caps")")
done
p=$(printf '%s\n' "${plain[@]}" | med)
t=$(printf '%s\n' "${trig8[@]}" | med)
n=$(printf '%s\n' "${inl[@]}" | med)
c=$(printf '%s\n' "${cap[@]}" | med)
cycles=$("$bud" run "$work" --json | sed -n 's/.*"cycles":\([0-9]*\).*/\1/p')
hist=$("$bud" run "$work" --triggers "$tmp/capture.trig" --capture-dir "$tmp/caps" --json |
  sed -n 's/.*"history":{"interval":\([0-9]*\),"snapshots":\([0-9]*\),"bytes":\([0-9]*\),"resimulated_cycles":\([0-9]*\)}.*/\1 \2 \3 \4/p')
read -r interval snaps hbytes resim <<<"$hist"
awk -v p="$p" -v t="$t" -v inl="$n" -v c="$c" -v n="$cycles" -v iv="$interval" -v s="$snaps" -v b="$hbytes" \
  -v r="$resim" 'BEGIN {
  printf "%-60s %12s\n", "measure", "value"
  printf "%-60s %11.3fs\n", "bud run (no triggers)", p
  printf "%-60s %11.3fs\n", "bud run --triggers (8 triggers)", t
  printf "%-60s %12.3f\n", "throughput with 8 triggers / without (target >= 0.95)", p / t
  printf "%-60s %11.3fs\n", "bud run --triggers --inline-triggers (no second thread)", inl
  printf "%-60s %12.3f\n", "throughput with 8 triggers inline / without", p / inl
  printf "%-60s %11.3fs\n", "bud run --triggers (8 + 1 capture, pre 2048 post 256)", c
  printf "%-60s %12.3f\n", "throughput with the capture armed / without", p / c
  printf "%-60s %12d\n", "cycles", n
  printf "%-60s %12s\n", "pre-trigger history: snapshot interval (cycles)", iv
  printf "%-60s %12s\n", "pre-trigger history: snapshots kept per armed capture", s
  printf "%-60s %12s\n", "pre-trigger history: bytes per armed capture", b
  printf "%-60s %12s\n", "cycles re-executed for the capture", r
}'
