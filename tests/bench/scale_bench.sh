#!/usr/bin/env bash
# Scaling benchmarks for docs/performance.md ("Long runs"): the conv residual block (the `conv`
# built-in) repeated (`repeat: N`, docs/workloads.md) to about 1M, 10M and 100M cycles; for each,
# wall time and peak RSS (/usr/bin/time -v) of a plain `bud run`, `--record`, `--triggers`
# (examples/triggers/memory_stall_burst.trig), packet bytes, `goto` to 90% of the run in
# `bud debug --packet`, and `bud bisect` of a packet with a fault at 90% of the run (re-simulated
# cycles). One repetition each: the long runs take minutes. Times are CPU seconds (user + sys).
#   tests/bench/scale_bench.sh [BUILD_DIR] [TARGET_CYCLES...]   (default 1000000 10000000 100000000)
#   Environment: BENCH_BASE, the workload file repeated (default the `conv` built-in)
set -euo pipefail
build=${1:-build}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(1000000 10000000 100000000)
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
trig="$root/examples/triggers/memory_stall_burst.trig"
base=${BENCH_BASE:-$root/emu/workload/builtins/conv.textpb}
bud=$(cd "$(dirname "$bud")" && pwd)/bud
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"  # --triggers captures go to ./bud-captures

field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | head -1; }  # field NAME < JSON: a number
# measure LOG CMD...: runs CMD under /usr/bin/time -v (exit status ignored); prints
# "cpu_seconds peak_rss_mib": CPU (user + sys), since wall time on the shared machine mostly
# measures the other builders
measure() {
  local log=$1
  shift
  /usr/bin/time -v -o "$log" "$@" >"$log.out" 2>"$log.err" || true
  local cpu rss
  cpu=$(sed -n 's/.*\(User\|System\) time (seconds): //p' "$log" | awk '{ s += $1 } END { printf "%.1f", s }')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
  echo "$cpu $((rss / 1024))"
}
workload() {  # workload N FILE: conv repeated N times
  {
    cat "$base"
    echo "repeat: $1"
  } >"$2"
}

workload 1 "$tmp/one.textpb"
one=$("$bud" run "$tmp/one.textpb" --json | field cycles)
echo "## Long runs ($(basename "$base" .textpb), $one cycles a pass, repeat N)"
echo
printf "%-12s %7s %9s | %-14s | %-14s %9s | %-14s | %-14s | %-14s | %-14s %12s\n" "cycles" \
  "passes" "commands" "run s/MiB" "record s/MiB" "packet" "triggers s/MiB" "goto s/MiB" \
  "goto no-check" "bisect s/MiB" "re-simulated"
for target in "${targets[@]}"; do
  n=$(((target + one - 1) / one))
  w="$tmp/conv_$n.textpb"
  workload "$n" "$w"
  read -r run_s run_m < <(measure "$tmp/run.log" "$bud" run "$w" --json)
  cycles=$(field cycles <"$tmp/run.log.out")
  commands=$(field commands <"$tmp/run.log.out")
  read -r rec_s rec_m < <(measure "$tmp/rec.log" "$bud" run "$w" --record "$tmp/p.bpk")
  bytes=$(stat -c %s "$tmp/p.bpk")
  read -r trg_s trg_m < <(measure "$tmp/trg.log" "$bud" run "$w" --triggers "$trig")
  late=$((cycles * 9 / 10))
  printf 'goto %s\nprint cycle\n' "$late" >"$tmp/goto.bud"
  read -r goto_s goto_m < <(measure "$tmp/goto.log" "$bud" debug --packet "$tmp/p.bpk" \
    -x "$tmp/goto.bud" --batch)
  grep -q "$late" "$tmp/goto.log.out" || echo "warning: goto did not reach $late" >&2
  # The same without the golden-model stage check (its golden trace is the part that grows).
  read -r gnc_s gnc_m < <(measure "$tmp/gnc.log" "$bud" debug --packet "$tmp/p.bpk" \
    -x "$tmp/goto.bud" --batch --no-check)
  "$bud" run "$w" --fault "flip:compute.accum[3][5]@$late" --record "$tmp/bad.bpk" \
    >/dev/null 2>&1 || true
  read -r bis_s bis_m < <(measure "$tmp/bis.log" "$bud" bisect --json "$tmp/bad.bpk")
  resim=$(field resimulated_cycles <"$tmp/bis.log.out")
  printf "%-12s %7s %9s | %6s s %4s M | %6s s %4s M %9s | %6s s %4s M | %6s s %4s M | %6s s %4s M | %6s s %4s M %12s\n" \
    "$cycles" "$n" "$commands" "$run_s" "$run_m" "$rec_s" "$rec_m" "$bytes" "$trg_s" "$trg_m" \
    "$goto_s" "$goto_m" "$gnc_s" "$gnc_m" "$bis_s" "$bis_m" "$resim"
  rm -f "$tmp/p.bpk" "$tmp/bad.bpk"
done
