#!/usr/bin/env bash
# Energy, DVFS and thermal figures for docs/performance.md ("Energy, DVFS and thermal (issue 17)"):
#   - `bud profile` with the energy account vs `--no-energy`, and `bud run --thermal` vs
#     `bud run`, side by side in one run (alternating, medians of CPU seconds: the machines are
#     shared and noisy);
#   - the DVFS sweep of compute_bound and mem_bound (deterministic: printed once);
#   - a clamped run's nominal vs sustained throughput (deterministic).
#   tests/bench/energy_bench.sh [BUILD_DIR] [WORKLOAD]   Environment: BENCH_REPS (default 5)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"  # cpu, med
build=${1:-build}
reps=${BENCH_REPS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
work=${2:-$root/tests/replay/data/long_gemm.textpb}
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null

echo "## Energy overhead ($(basename "$work"); CPU seconds, median of $reps, alternating)"
echo
run=(); thermal=(); off=(); on=()
for ((i = 0; i < reps; i++)); do
  run+=("$(cpu "$bud" run "$work")")
  thermal+=("$(cpu "$bud" run "$work" --thermal)")
  off+=("$(cpu "$bud" profile "$work" --no-energy)")
  on+=("$(cpu "$bud" profile "$work")")
done
r=$(printf '%s\n' "${run[@]}" | med)
t=$(printf '%s\n' "${thermal[@]}" | med)
f=$(printf '%s\n' "${off[@]}" | med)
e=$(printf '%s\n' "${on[@]}" | med)
awk -v r="$r" -v t="$t" -v f="$f" -v e="$e" 'BEGIN {
  printf "%-52s %10s\n", "measure", "value"
  printf "%-52s %9.3fs\n", "bud run", r
  printf "%-52s %9.3fs\n", "bud run --thermal", t
  printf "%-52s %10.3f\n", "throughput --thermal / bud run", r / t
  printf "%-52s %9.3fs\n", "bud profile --no-energy", f
  printf "%-52s %9.3fs\n", "bud profile (energy)", e
  printf "%-52s %10.3f\n", "throughput energy / --no-energy", f / e
  printf "%-52s %10.3f\n", "throughput bud profile (energy) / bud run", r / e
}'
echo
for w in compute_bound mem_bound; do
  echo "## bud profile $w --dvfs"
  echo
  "$bud" profile "$w" --dvfs
  echo
done
echo "## bud profile compute_bound --thermal (nominal vs sustained)"
"$bud" profile compute_bound --thermal | sed -n '/^thermal (/,$p'
echo
echo "## bud profile compute_bound --thermal --point turbo"
"$bud" profile compute_bound --thermal --point turbo | sed -n '/^thermal (/,$p'
