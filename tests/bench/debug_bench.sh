#!/usr/bin/env bash
# Debugger benchmarks for docs/performance.md ("Debugger"), measured side by side in one run
# (alternating, medians) because the machines are shared and noisy:
#   - `continue` with 4 conditional breakpoints on counters armed (never firing) vs `bud run`
#     on the same workload, and what the automatic checkpoints cost on their own
#   - `goto` on a 10.7M-cycle run: re-executed cycles per jump (bounded by the checkpoint
#     interval), wall time per jump vs simulating one interval, bytes per checkpoint and total
#   - `continue` with the golden-model stage checks (the default) vs `bud run` and vs
#     `bud debug --no-check`
#   tests/bench/debug_bench.sh [BUILD_DIR]     Environment: BENCH_REPS (default 3)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
build=${1:-build}
reps=${BENCH_REPS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$root/$build/bud"
[ -x "$bud" ] || bud="$build/bud"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
# examples/long_run.textpb, clock-enabled one cycle in three: 10.7M cycles.
work=("$root/examples/long_run.textpb" --throttle 1 --throttle-period 3)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


conditions_script "$tmp/bps.bud"
printf 'continue\n' >"$tmp/plain.bud"
printf 'echo prepared\n' >"$tmp/none.bud"

cycles=$("$bud" debug "${work[@]}" -x "$tmp/plain.bud" --batch --json |
  sed -n 's/.*"stop":{"cycle":\([0-9]*\).*/\1/p')
goto_script "$tmp/goto.bud" "$cycles"

echo "## Debugger (long_run throttled 1 of 3: $cycles cycles; median of $reps, alternating)"
echo
run=() ; nock=() ; none=() ; plain=() ; bps=() ; bps_nock=() ; jumps=()
for ((i = 0; i < reps; i++)); do
  run+=("$(secs "$bud" run "${work[@]}")")
  none+=("$(secs "$bud" debug "${work[@]}" -x "$tmp/none.bud" --batch)")
  nock+=("$(secs "$bud" debug "${work[@]}" -x "$tmp/plain.bud" --batch --no-check)")
  plain+=("$(secs "$bud" debug "${work[@]}" -x "$tmp/plain.bud" --batch)")
  bps+=("$(secs "$bud" debug "${work[@]}" -x "$tmp/bps.bud" --batch)")
  bps_nock+=("$(secs "$bud" debug "${work[@]}" -x "$tmp/bps.bud" --batch \
    --checkpoint-interval 1000000000)")
  jumps+=("$(secs "$bud" debug "${work[@]}" -x "$tmp/goto.bud" --batch)")
done
R=$(printf '%s\n' "${run[@]}" | med)
N=$(printf '%s\n' "${none[@]}" | med)
P=$(printf '%s\n' "${plain[@]}" | med)
NC=$(printf '%s\n' "${nock[@]}" | med)
B=$(printf '%s\n' "${bps[@]}" | med)
BN=$(printf '%s\n' "${bps_nock[@]}" | med)
J=$(printf '%s\n' "${jumps[@]}" | med)
awk -v r="$R" -v n="$N" -v p="$P" -v nc="$NC" -v b="$B" -v bn="$BN" -v c="$cycles" 'BEGIN {
  printf "%-66s %10s\n", "measure", "value"
  printf "%-66s %10.3f s\n", "bud run", r
  printf "%-66s %10.3f s\n", "bud debug, load only (no continue)", n
  printf "%-66s %10.3f s\n", "bud debug, continue, no breakpoints (automatic checkpoints)", p
  printf "%-66s %10.3f s\n", "bud debug --no-check, continue, no breakpoints", nc
  printf "%-66s %10.3f   (target >= 0.95)\n", "throughput: continue with golden-model checks / bud run", r / p
  printf "%-66s %10.3f\n", "throughput: continue without checks / bud run", r / nc
  printf "%-66s %10.3f s\n", "bud debug, continue, 4 conditions armed (automatic checkpoints)", b
  printf "%-66s %10.3f s\n", "bud debug, continue, 4 conditions armed, no automatic checkpoints", bn
  printf "%-66s %10.3f   (target >= 0.95)\n", "throughput: 4 conditions + checkpoints / bud run", r / b
  printf "%-66s %10.3f\n", "throughput: 4 conditions, no checkpoints / bud run", r / bn
  printf "%-66s %10.3f\n", "continue only (load subtracted): 4 conditions / none", (p - n) / (b - n)
  printf "%-66s %10.2f Mcycles/s\n", "continue, no breakpoints", c / (p - n) / 1e6 }'

# Checkpoints and jumps, from one --json session.
"$bud" debug "${work[@]}" -x "$tmp/goto.bud" --batch --json >"$tmp/goto.json"
printf 'continue\ninfo checkpoints\n' >"$tmp/ck.bud"
"$bud" debug "${work[@]}" -x "$tmp/ck.bud" --batch --json | tail -1 >"$tmp/ck.json"
count=$(grep -o '"cycle":[0-9]*,"name":""' "$tmp/ck.json" | wc -l)
total=$(sed -n 's/.*"data":{"checkpoints":\[.*\],"bytes":\([0-9]*\),"interval":\([0-9]*\)}.*/\1/p' "$tmp/ck.json")
interval=$(sed -n 's/.*"interval":\([0-9]*\)}.*/\1/p' "$tmp/ck.json")
raw=$(grep -o 'raw [0-9]*' "$tmp/ck.json" | awk '{s += $2} END {print s / NR}')
maxre=$(grep -o '"resimulated":[0-9]*' "$tmp/goto.json" | cut -d: -f2 | sort -n | tail -1)
meanre=$(grep -o '"resimulated":[0-9]*' "$tmp/goto.json" | cut -d: -f2 |
  awk '{s += $1} END {printf "%.0f", s / NR}')
awk -v j="$J" -v p="$P" -v n="$N" -v c="$cycles" -v iv="$interval" -v mx="$maxre" -v mr="$meanre" \
  -v cnt="$count" -v tot="$total" -v raw="$raw" 'BEGIN {
  per_jump = (j - p) / 20; per_interval = (p - n) / c * iv
  printf "%-66s %10d\n", "automatic checkpoint interval (cycles)", iv
  printf "%-66s %10d (bound %d)\n", "re-executed cycles per goto: max of 20", mx, iv
  printf "%-66s %10d\n", "re-executed cycles per goto: mean of 20", mr
  printf "%-66s %10.1f ms\n", "wall time per goto", per_jump * 1000
  printf "%-66s %10.1f ms\n", "wall time to simulate one interval (continue)", per_interval * 1000
  printf "%-66s %10.2f\n", "goto / one interval", per_jump / per_interval
  printf "%-66s %10d\n", "automatic checkpoints for the run", cnt
  printf "%-66s %10.2f MB (raw %.2f MB)\n", "bytes per checkpoint (new deduplicated chunks, zstd)", tot / cnt / 1e6, raw / 1e6
  printf "%-66s %10.1f MB\n", "total checkpoint memory", tot / 1e6 }'
echo
