#!/usr/bin/env bash
# Precision figures for docs/performance.md ("Precision modes (issue 16)"): every built-in at
# int8 and at BF16, side by side in one run - NPU cycles, % of the precision's peak (int8: rows x
# cols MACs per cycle; BF16: half), and simulation speed (CPU seconds, median of BENCH_REPS,
# alternating int8/bf16, and cycles per CPU second).
#   tests/bench/precision_bench.sh [BUILD_DIR]   Environment: BENCH_REPS (default 3)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"  # cpu, med
build=${1:-build}
reps=${BENCH_REPS:-3}
bud="$build/bud"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
py=/usr/bin/python3

figure() {  # figure WORKLOAD PRECISION -> "cycles peak_fraction"
  "$bud" run "$1" --precision "$2" --json | "$py" -c '
import json, sys
r = json.load(sys.stdin)
c = r["counters"]
peak = r["array"]["macs_per_cycle"] / (2 if sys.argv[1] == "bf16" else 1)
print(r["cycles"], c["macs_useful"] / (r["cycles"] * peak), "PASS" if r["passed"] else "FAIL")
' "$2"
}

echo "| workload | int8 cycles | int8 % of peak | bf16 cycles | bf16 % of peak | bf16/int8 cycles | int8 CPU s | bf16 CPU s | int8 Mcycles/s | bf16 Mcycles/s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for w in gemm_small mlp conv mem_bound compute_bound; do
  read -r c8 p8 ok8 <<<"$(figure "$w" int8)"
  read -r c16 p16 ok16 <<<"$(figure "$w" bf16)"
  [[ $ok8 == PASS && $ok16 == PASS ]] || { echo "$w: a run failed its checks" >&2; exit 1; }
  t8=(); t16=()
  for ((i = 0; i < reps; i++)); do
    t8+=("$(cpu "$bud" run "$w" --precision int8)")
    t16+=("$(cpu "$bud" run "$w" --precision bf16)")
  done
  s8=$(printf '%s\n' "${t8[@]}" | med)
  s16=$(printf '%s\n' "${t16[@]}" | med)
  awk -v w="$w" -v c8="$c8" -v p8="$p8" -v c16="$c16" -v p16="$p16" -v s8="$s8" -v s16="$s16" \
    'BEGIN { printf "| %s | %d | %.1f%% | %d | %.1f%% | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
             w, c8, 100 * p8, c16, 100 * p16, c16 / c8, s8, s16, c8 / s8 / 1e6, c16 / s16 / 1e6 }'
done
