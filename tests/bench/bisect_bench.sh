#!/usr/bin/env bash
# Bisect benchmarks for docs/performance.md ("Bisect"), measured side by side in one run
# (alternating, medians) because the machines are shared and noisy:
#   - re-simulated cycles / run cycles of `bud bisect` on a 3.3M-cycle failing packet, with the
#     fault early, in the middle and late, at the default and at a 4x finer checkpoint interval,
#     and with --wave (which re-executes the divergence window once more);
#   - wall time of `bud bisect P` vs `bud replay P` of the same packet.
#   tests/bench/bisect_bench.sh [BUILD_DIR]     Environment: BENCH_REPS (default 5)
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

field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }  # field NAME < JSON: a numeric member

echo "## Bisect (long_gemm: 12 dense 256x256x256 layers, a flipped accumulator bit)"
echo
printf "%-10s %-12s %-8s %10s %12s %8s  %s\n" "fault at" "checkpoints" "wave" "run" \
  "re-simulated" "ratio" "verdict: first stage @ cycle"
for at in 100001 2000001 3200001; do
  for ck in 262144 65536; do
    pkt="$tmp/long_${at}_${ck}.bpk"
    "$bud" run "$work" --fault "flip:compute.accum[3][5]@$at" --record "$pkt" \
      --checkpoint-interval "$ck" >/dev/null 2>&1 || true
    for wave in no yes; do
      args=(bisect --json "$pkt")
      [ "$wave" = yes ] && args+=(--wave "$tmp/w.fst")
      j=$("$bud" "${args[@]}" || true)
      run=$(field run_cycles <<<"$j")
      re=$(field resimulated_cycles <<<"$j")
      verdict=$(sed -n 's/^{"verdict":"\([a-z]*\)".*/\1/p' <<<"$j")
      stage=$(sed -n 's/.*"first_failing_stage":"\([a-z]*\)".*/\1/p' <<<"$j")
      where="$verdict: ${stage:--} @ $(field first_divergence_cycle <<<"$j")"
      awk -v a="$at" -v c="$ck" -v w="$wave" -v r="$run" -v s="$re" -v x="$where" \
        'BEGIN { printf "%-10s %-12s %-8s %10d %12d %8.3f  %s\n", a, c, w, r, s, s / r, x }'
    done
  done
done
echo

pkt="$tmp/long_2000001_262144.bpk"
bis=() ; rep=()
for ((i = 0; i < reps; i++)); do
  bis+=("$(secs "$bud" bisect "$pkt")")
  rep+=("$(secs "$bud" replay "$pkt")")
done
b=$(printf '%s\n' "${bis[@]}" | med)
r=$(printf '%s\n' "${rep[@]}" | med)
echo "Wall time on the same packet (fault at 2000001, default intervals; median of $reps, alternating)"
awk -v b="$b" -v r="$r" 'BEGIN {
  printf "%-40s %8.3f s\n", "bud bisect P", b
  printf "%-40s %8.3f s\n", "bud replay P (re-runs the whole run)", r
  printf "%-40s %8.3f\n", "bisect / replay", b / r }'
