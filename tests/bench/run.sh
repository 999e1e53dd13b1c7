#!/usr/bin/env bash
# Benchmarks for docs/performance.md. Every figure is a ratio or rate measured side by side in
# one run (the machines are shared and noisy); nothing here is a pass/fail test.
#   tests/bench/run.sh [BUILD_DIR]      (make bench)
# Environment: BENCH_REPS (default 5), BENCH_SKIP_BUILD_TIME=1 to skip the clean-build timing.
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
build=${1:-build}
reps=${BENCH_REPS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
cmake --build "$build" --target bench-tools bud -j "$(nproc)" >/dev/null

echo "## Simulation speed: bud run vs the bare Verilated model (median of $reps, alternating)"
echo
"$build/bud-bench-npu" --reps "$reps"
echo

echo "## Cost of debug visibility (compute_bound, bare-model replay, median of $reps rounds)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bud-bench-npu" --reps 1 --dump-inputs "$tmp" compute_bound >/dev/null
declare -A rates
for v in curated bare pub; do rates[$v]=""; done
for ((i = 0; i < reps; i++)); do
  for v in curated bare pub; do
    rates[$v]+="$("$build/bud-bench-replay-$v" "$tmp/compute_bound.inputs" --reps 1) "
  done
done
c=$(echo "${rates[curated]}" | med); b=$(echo "${rates[bare]}" | med); p=$(echo "${rates[pub]}" | med)
printf "%-38s %10s %8s\n" "model variant" "Mcycles/s" "vs none"
row() { awk -v n="$1" -v r="$2" -v b="$b" 'BEGIN { printf "%-38s %10.2f %8.3f\n", n, r / 1e6, r / b }'; }
row "no public signals" "$b"
row "curated set (rtl/npu_debug.vlt)" "$c"
row "everything public (--public-flat-rw)" "$p"
echo

if [ "${BENCH_SKIP_BUILD_TIME:-0}" != "1" ]; then
  echo "## Build time from clean ($(nproc) cores)"
  clean=$(mktemp -d)
  start=$(date +%s)
  cmake -S "$root" -B "$clean" -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$clean" --target bud -j "$(nproc)" >/dev/null
  mid=$(date +%s)
  rm -rf "$clean"
  cmake -S "$root" -B "$clean" >/dev/null
  cmake --build "$clean" -j "$(nproc)" >/dev/null
  end=$(date +%s)
  rm -rf "$clean"
  echo "bud binary only: $((mid - start)) s; everything incl. tests: $((end - mid)) s"
fi

# Replay packets (docs/performance.md, "Replay packets").
"$root/tests/bench/replay_bench.sh" "$build"

# Debugger (docs/performance.md, "Debugger").
"$root/tests/bench/debug_bench.sh" "$build"

# Triggers (docs/performance.md, "Triggers").
"$root/tests/bench/trigger_bench.sh" "$build"

# Bisect (docs/performance.md, "Bisect").
"$root/tests/bench/bisect_bench.sh" "$build"

# Minimize (docs/performance.md, "Minimize").
"$root/tests/bench/minimize_bench.sh" "$build"

# Profiling (docs/performance.md, "Profiling").
"$root/tests/bench/profile_bench.sh" "$build"

# Energy, DVFS and thermal (docs/performance.md, "Energy, DVFS and thermal (issue 17)").
"$root/tests/bench/energy_bench.sh" "$build"

# The intervention plan, tile size and the memo's energy (docs/performance.md, "The intervention
# plan and tile size").
"$root/tests/bench/sweep_bench.sh" "$build"

# Remote attach (docs/performance.md, "Remote attach").
"$root/tests/bench/remote_bench.sh" "$build"
