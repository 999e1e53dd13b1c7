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

# The whole loop on compute_bound: watch a run with a trigger, break it on purpose, record the
# failure, replay it, bisect it to its stage and shrink it (docs/bisect.md).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fault='flip:compute.accum[3][5]@200001'

step "A run with a counter trigger armed: the MAC array waits on its first loads" \
     "bud run compute_bound --triggers examples/triggers/dependency_starvation.trig"
"$bud" run compute_bound --triggers examples/triggers/dependency_starvation.trig \
  --capture-dir "$tmp/captures" | grep -E '^  cycle [0-9]+:|captured cycles' | head -2 |
  sed "s|$tmp/||g" | cut -c1-150

step "Inject a fault (one accumulator bit, at cycle 200001) and record the failing run" \
     "bud run compute_bound --fault '$fault' --record bad.bpk --checkpoint-interval 32768"
"$bud" run compute_bound --fault "$fault" --record "$tmp/bad.bpk" --checkpoint-interval 32768 2>&1 |
  grep -E '^(bud run: recorded|cycles|result|  - outputs)' | sed -E "s|$tmp/||g; s/ \(([0-9]+ bytes), .*/ (\1)/" || true

step "Replay the packet: the same symptom, bit-exactly" "bud replay bad.bpk"
"$bud" replay "$tmp/bad.bpk" | sed -E "s|$tmp/||g; s/(at cycle [0-9]+): .*/\1/" || true

step "Bisect it: the first persistent failing stage, re-simulating one window" "bud bisect bad.bpk"
"$bud" bisect "$tmp/bad.bpk" | grep -E '^(first failing|cycle|command|element|expected|actual|downstream|cost)' || true

step "Minimize it: the smallest run with the same symptom and stage" \
     "bud minimize bad.bpk -o min.bpk"
"$bud" minimize "$tmp/bad.bpk" -o "$tmp/min.bpk" | grep -E '^(kept|cycles|commands|packet)' |
  sed "s|$tmp/||g" || true
