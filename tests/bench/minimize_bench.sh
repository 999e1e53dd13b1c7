#!/usr/bin/env bash
# Minimize reductions for docs/performance.md ("Minimize"): for every built-in workload, a packet
# failing in POST (the requantiser's shift flipped 2 cycles into the first POST after half the
# run, found with `bud debug`; other fractions if bisect does not say `post`), minimized with
# `bud minimize`; commands and cycles before and after, and the ratio. Counts, not timings: the
# figures do not depend on the machine.
#   tests/bench/minimize_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }    # num NAME < JSON: a numeric member
str() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; } # str NAME < JSON: a string member

echo "## Minimize (a POST fault in every built-in: flip:compute.shift[1]@CYCLE)"
echo
printf "%-14s %9s %12s %12s %8s %10s %10s  %s\n" workload "fault at" "cycles" "after" "ratio" \
  "commands" "after" "faults follow their command"
for w in $("$bud" workloads | awk 'NF { print $1 }'); do
  cycles=$("$bud" run "$w" --json | num cycles || true)
  found=""
  # The first POST the compute engine runs after half the run (bud debug finds it), a few
  # cycles into it, then later ones until bisect says post.
  for frac in 50 60 40 70 30; do
    printf 'until %d\nbreak if compute.state == 3\ncontinue\n' $((cycles * frac / 100)) >"$tmp/s.bud"
    post=$("$bud" debug "$w" --batch -x "$tmp/s.bud" 2>/dev/null |
      sed -n 's/^stopped at cycle \([0-9]*\): breakpoint.*/\1/p' | tail -1 || true)
    [ -n "$post" ] || continue
    at=$((post + 2))
    pkt="$tmp/$w.bpk"
    "$bud" run "$w" --fault "flip:compute.shift[1]@$at" --record "$pkt" >/dev/null 2>&1 || true
    stage=$("$bud" bisect --json "$pkt" | str first_failing_stage || true)
    if [ "$stage" = post ]; then found=$at; break; fi
  done
  if [ -z "$found" ]; then
    printf "%-14s no POST fault found\n" "$w"
    continue
  fi
  j=$("$bud" minimize --json "$pkt" -o "$tmp/$w.min.bpk" || true)
  follows=$(grep -c "follows command" <<<"$j" || true)
  awk -v w="$w" -v a="$found" -v cb="$(num cycles_before <<<"$j")" -v ca="$(num cycles_after <<<"$j")" \
    -v mb="$(num commands_before <<<"$j")" -v ma="$(num commands_after <<<"$j")" -v f="$follows" \
    'BEGIN { printf "%-14s %9d %12d %12d %7.1fx %10d %10d  %s\n", w, a, cb, ca, cb / ca, mb, ma,
             (f > 0 ? "yes" : "no") }'
done

# Faults on one element (field trial 3): an accumulator flip and an OUT scratchpad flip follow
# the element's transaction (or its last writer), not only the command.
echo
echo "## Minimize (faults on one element)"
echo
printf "%-14s %-9s %-34s %9s %9s %8s\n" workload precision fault cycles after ratio
while read -r w prec fault; do
  pkt="$tmp/el.bpk"
  "$bud" run "$w" --precision "$prec" --fault "$fault" --record "$pkt" >/dev/null 2>&1 || true
  j=$("$bud" minimize --json "$pkt" -o "$tmp/el.min.bpk" || true)
  awk -v w="$w" -v p="$prec" -v f="$fault" -v cb="$(num cycles_before <<<"$j")" \
    -v ca="$(num cycles_after <<<"$j")" \
    'BEGIN { printf "%-14s %-9s %-34s %9d %9d %7.1fx\n", w, p, f, cb, ca, cb / ca }'
done <<'CASES'
gemm_small bf16 flip:compute.accum[3][20]@900
gemm_small bf16 memflip:out:0x2d1[6]@1280
compute_bound int8 flip:compute.accum[3][5]@200001
CASES
