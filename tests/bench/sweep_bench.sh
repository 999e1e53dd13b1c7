#!/usr/bin/env bash
# The measured intervention plan and the memo's energy figures for docs/performance.md ("The
# intervention plan and tile size") and docs/power.md. Everything printed here is deterministic
# (simulated cycles, priced counters, seeded request streams), except the CPU seconds of
# `bud profile --sweep` against `bud profile` (median of BENCH_REPS, alternating).
#   tests/bench/sweep_bench.sh [BUILD_DIR]      Environment: BENCH_REPS (default 3)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"  # cpu, med
build=${1:-build}
reps=${BENCH_REPS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
resnet="$root/examples/onnx/resnet_tiny.onnx"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null

echo "## Cycles of one inference by tile-row cap (bud run W --tile-rows N; every run bit-exact)"
echo
printf "%-12s %8s %10s %10s %9s\n" "workload" "cap" "cycles" "commands" "vs plan"
for w in mlp "$resnet"; do
  base=""
  for cap in "" 32 16 8 4; do
    read -r cycles commands passed < <("$bud" run "$w" ${cap:+--tile-rows "$cap"} --json |
      python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["cycles"], j["commands"], j["passed"])')
    [ "$passed" = "True" ] || { echo "$w --tile-rows $cap did not pass" >&2; exit 1; }
    base=${base:-$cycles}
    awk -v w="$(basename "$w" .onnx)" -v c="${cap:-plan}" -v y="$cycles" -v n="$commands" \
        -v b="$base" 'BEGIN { printf "%-12s %8s %10d %10d %+8.1f%%\n", w, c, y, n, 100 * (y / b - 1) }'
  done
done
echo

echo "## bud serve-load mlp --sweep --sla-p99-us 100 (2,000 requests per load point)"
"$bud" serve-load mlp --sweep --sla-p99-us 100 | sed -n '/^Sustained/,$p'
echo
echo "## bud serve-load resnet_tiny.onnx --sweep --sla-p99-us 500"
"$bud" serve-load "$resnet" --sweep --sla-p99-us 500 | sed -n '/^Sustained/,$p'
echo

echo "## Cost of --sweep: bud profile mlp --sweep --sla-p99-us 100 vs bud profile mlp"
echo "## (CPU seconds, median of $reps, alternating)"
plain=(); swept=()
for ((i = 0; i < reps; i++)); do
  plain+=("$(cpu "$bud" profile mlp)")
  swept+=("$(cpu "$bud" profile mlp --sweep --sla-p99-us 100)")
done
p=$(printf '%s\n' "${plain[@]}" | med)
s=$(printf '%s\n' "${swept[@]}" | med)
awk -v p="$p" -v s="$s" 'BEGIN { printf "bud profile %.3fs, with --sweep %.3fs (x%.1f)\n", p, s, s / p }'
echo

echo "## Memo energy: compute_bound against --thermal, mlp against --point low"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bud" profile compute_bound --json >"$tmp/cb.json"
"$bud" profile compute_bound --thermal --json >"$tmp/cb_hot.json"
"$bud" memo "$tmp/cb.json" "$tmp/cb_hot.json" | sed -n '/^## Energy and perf/,/^## First failing/p' |
  grep -v '^## First failing'
"$bud" profile mlp --json >"$tmp/mlp.json"
"$bud" profile mlp --point low --json >"$tmp/mlp_low.json"
"$bud" memo "$tmp/mlp.json" "$tmp/mlp_low.json" | sed -n '/^## Energy and perf/,/^\*\*Leading/p'
