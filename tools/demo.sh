#!/usr/bin/env bash
# `make demo`: the loop a user cares about, on built-in workloads.
set -euo pipefail
build=${1:-build}
bud="$build/bud"
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
step() { printf '\n%s== %s%s\n$ %s\n' "$bold" "$1" "$plain" "$2"; }

step "The built-in workloads" "bud workloads"
"$bud" workloads

step "Run the default workload and check it bit-exactly against the golden model" "bud run gemm_small"
"$bud" run gemm_small

step "A compute-bound run: the MAC array stays busy while DMA is hidden by double buffering" \
     "bud run compute_bound"
"$bud" run compute_bound

step "Same data, another memory timing: different cycles, identical results" \
     "bud run conv --mem-seed 7 --mem-jitter 60 --mem-bursty --json"
"$bud" run conv --mem-seed 7 --mem-jitter 60 --mem-bursty --json | head -c 400; echo " ..."
