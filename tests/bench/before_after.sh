#!/usr/bin/env bash
# Two builds of bud side by side in one run (alternating rounds, medians), for the "before and
# after" tables of docs/performance.md: the same commands, the same inputs, the same machine load.
#   tests/bench/before_after.sh BEFORE_BUILD [AFTER_BUILD]     Environment: BENCH_REPS (default 3)
# BEFORE_BUILD is a build tree of an earlier commit, e.g.
#   git worktree add --detach ../before <commit> && cmake -S ../before -B ../before/build &&
#   cmake --build ../before/build --target bud
# Measures on tests/replay/data/long_gemm.textpb: `bud run`; `--triggers` with the 8 triggers of
# trigger_bench.trig; `--record`; `bud debug` continue with 4 conditions armed; 20 `goto`s; and
# the checkpoint bytes of that session. Each is wall seconds per build (median, and the minimum:
# the least disturbed run on a shared machine), then after/before.
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { echo "usage: $0 BEFORE_BUILD [AFTER_BUILD]" >&2; exit 2; }
reps=${BENCH_REPS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
before="$1/bud"
after="${2:-build}/bud"
for b in "$before" "$after"; do [ -x "$b" ] || { echo "no bud binary at $b" >&2; exit 2; }; done
work="$root/tests/replay/data/long_gemm.textpb"
trig="$root/tests/bench/trigger_bench.trig"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

conditions_script "$tmp/bps.bud"
cycles=$("$after" run "$work" --json | sed -n 's/.*"cycles":\([0-9]*\).*/\1/p' | head -1)
goto_script "$tmp/goto.bud" "$cycles"
printf 'continue\ninfo checkpoints\n' >"$tmp/ck.bud"

names=("bud run" "bud run --triggers (8 armed)" "bud run --record" "bud debug: continue, 4 conditions"
  "bud debug: continue + 20 goto")
measure() {  # measure BUD INDEX -> seconds
  local bud=$1
  case $2 in
    0) secs "$bud" run "$work" ;;
    1) secs "$bud" run "$work" --triggers "$trig" ;;
    2) secs "$bud" run "$work" --record "$tmp/p.bpk" ;;
    3) secs "$bud" debug "$work" -x "$tmp/bps.bud" --batch ;;
    4) secs "$bud" debug "$work" -x "$tmp/goto.bud" --batch ;;
  esac
}
declare -A t
for ((r = 0; r < reps; r++)); do
  for ((m = 0; m < ${#names[@]}; m++)); do
    t[b$m]+="$(measure "$before" $m) "
    t[a$m]+="$(measure "$after" $m) "
  done
done

echo "## Before/after ($(basename "$work"), $cycles cycles; median of $reps, alternating)"
echo
echo "before: $1    after: ${2:-build}"
echo
printf "| %-40s | %10s | %10s | %12s | %9s | %9s | %12s |\n" "measure" "before s" "after s" \
  "after/before" "before min" "after min" "min ratio"
printf "|%s|%s|%s|%s|%s|%s|%s|\n" "------------------------------------------" "------------" \
  "------------" "--------------" "-----------" "-----------" "--------------"
for ((m = 0; m < ${#names[@]}; m++)); do
  b=$(echo "${t[b$m]}" | med)
  a=$(echo "${t[a$m]}" | med)
  bm=$(echo "${t[b$m]}" | tr -s ' ' '\n' | grep -v '^$' | sort -n | head -1)
  am=$(echo "${t[a$m]}" | tr -s ' ' '\n' | grep -v '^$' | sort -n | head -1)
  awk -v n="${names[$m]}" -v b="$b" -v a="$a" -v bm="$bm" -v am="$am" 'BEGIN {
    printf "| %-40s | %10.3f | %10.3f | %12.3f | %9.3f | %9.3f | %12.3f |\n", n, b, a, a / b, bm, am, am / bm }'
done
# Relative figures per build: overhead of each feature over a plain run of the same build.
echo
printf "| %-40s | %10s | %10s |\n" "throughput vs bud run of the same build" "before" "after"
printf "|%s|%s|%s|\n" "------------------------------------------" "------------" "------------"
b0=$(echo "${t[b0]}" | med)
a0=$(echo "${t[a0]}" | med)
for m in 1 2 3; do
  b=$(echo "${t[b$m]}" | med)
  a=$(echo "${t[a$m]}" | med)
  awk -v n="${names[$m]}" -v b="$b" -v a="$a" -v b0="$b0" -v a0="$a0" \
    'BEGIN { printf "| %-40s | %10.3f | %10.3f |\n", n, b0 / b, a0 / a }'
done
# Checkpoint bytes of one session (deterministic: no timing).
for side in before after; do
  bud=$before
  [ $side = after ] && bud=$after
  "$bud" debug "$work" -x "$tmp/ck.bud" --batch --json | tail -1 >"$tmp/ck.json"
  total=$(sed -n 's/.*"bytes":\([0-9]*\),"interval".*/\1/p' "$tmp/ck.json")
  count=$(grep -o '"cycle":[0-9]*,"name":""' "$tmp/ck.json" | wc -l)
  echo "$side: $count automatic checkpoints, ${total:-?} bytes"
done
