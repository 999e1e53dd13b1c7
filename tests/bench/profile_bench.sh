#!/usr/bin/env bash
# Profiler benchmarks for docs/performance.md ("Profiling"), side by side in one run (alternating,
# medians) because the machines are shared and noisy:
#   - `bud profile` vs `bud run` throughput on the same workload (the attribution observer's cost
#     per cycle: eight signal reads and four compares; a PMU read per command change)
#   - `bud profile --trace` (counter samples every 1024 cycles plus the trace file)
#   - the trace's size
# Times are CPU seconds (user + system) of the process, not wall time: on a machine shared with
# other builds the wall time of a 3-second run varies by more than the profiler's cost.
#   tests/bench/profile_bench.sh [BUILD_DIR] [WORKLOAD]   Environment: BENCH_REPS (default 5)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"  # cpu, med
build=${1:-build}
reps=${BENCH_REPS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
work=${2:-$root/tests/replay/data/long_gemm.textpb}
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "## Profiling ($(basename "$work"); CPU seconds, median of $reps, alternating)"
echo
plain=(); prof=(); traced=()
for ((i = 0; i < reps; i++)); do
  plain+=("$(cpu "$bud" run "$work")")
  prof+=("$(cpu "$bud" profile "$work")")
  traced+=("$(cpu "$bud" profile "$work" --trace "$tmp/t.json")")
done
p=$(printf '%s\n' "${plain[@]}" | med)
f=$(printf '%s\n' "${prof[@]}" | med)
t=$(printf '%s\n' "${traced[@]}" | med)
cycles=$("$bud" run "$work" --json | sed -n 's/.*"cycles":\([0-9]*\).*/\1/p')
tbytes=$(stat -c %s "$tmp/t.json")
awk -v p="$p" -v f="$f" -v t="$t" -v n="$cycles" -v tb="$tbytes" 'BEGIN {
  printf "%-60s %12s\n", "measure", "value"
  printf "%-60s %11.3fs\n", "bud run", p
  printf "%-60s %11.3fs\n", "bud profile", f
  printf "%-60s %12.3f\n", "throughput profiled / bud run (target >= 0.97)", p / f
  printf "%-60s %11.3fs\n", "bud profile --trace (window 1024)", t
  printf "%-60s %12.3f\n", "throughput with --trace / bud run", p / t
  printf "%-60s %12d\n", "cycles", n
  printf "%-60s %12d\n", "trace bytes", tb
}'
