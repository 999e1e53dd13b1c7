#!/usr/bin/env bash
# Window-parallel replay for docs/performance.md ("Window-parallel replay"): `bud replay P -j 1`
# against `-j 2` on tests/replay/data/long_gemm.textpb (3.3M cycles, 13 checkpoint windows; the
# 2048-command ring keeps built-in workloads below ~5M cycles), alternating, medians of elapsed
# and of user+system CPU seconds (the CPU time shows the cost of the extra restores; elapsed
# time shows the speedup only on an otherwise idle machine).
# BENCH_RUN replaces the recorded run's `bud run` arguments: the 10.7M-cycle packet is
# BENCH_RUN="examples/long_run.textpb --throttle 1 --throttle-period 3" (clock enabled one cycle
# in three: the ring's command cap is not reached, throttling stretches the run).
#   tests/bench/window_replay_bench.sh [BUILD_DIR]     Environment: BENCH_REPS (default 3),
#   BENCH_RUN
set -euo pipefail
build=${1:-build}
reps=${BENCH_REPS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$(cd "$build" && pwd)/bud"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
read -r -a run_args <<<"${BENCH_RUN:-$root/tests/replay/data/long_gemm.textpb}"
(cd "$root" && "$bud" run "${run_args[@]}" --record "$tmp/long.bpk" >/dev/null 2>&1)
cycles=$("$bud" packet inspect --json "$tmp/long.bpk" | sed -n 's/.*"result":{"cycles":\([0-9]*\).*/\1/p')
# Same output whatever -j (the figure is meaningless otherwise).
diff <("$bud" replay "$tmp/long.bpk") <("$bud" replay -j 2 "$tmp/long.bpk")
for ((i = 0; i < reps; i++)); do
  for j in 1 2; do
    /usr/bin/time -f "%e %U %S" -a -o "$tmp/j$j" "$bud" replay -j "$j" "$tmp/long.bpk" >/dev/null
  done
done
windows=$("$bud" packet inspect --json "$tmp/long.bpk" | grep -o '"windows":[0-9]*' | head -1 | cut -d: -f2)
echo "## Window-parallel replay (${run_args[*]}: $cycles cycles, ${windows:-?} windows; median of $reps, alternating)"
for j in 1 2; do
  e=$(awk '{print $1}' "$tmp/j$j" | med)
  c=$(awk '{print $2 + $3}' "$tmp/j$j" | med)
  printf "%-28s elapsed %8.3f s   CPU %8.3f s\n" "bud replay -j $j" "$e" "$c"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
