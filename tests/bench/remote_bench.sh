#!/usr/bin/env bash
# Remote attach benchmarks for docs/performance.md ("Remote attach"), side by side in one run
# (alternating, medians) because the machines are shared and noisy:
#   - `continue` driven by a remote client (bud serve + Continue over a Unix socket) vs a local
#     `bud run` of the same workload: end to end (start, run, exit) and simulation only (the
#     Continue call vs `bud debug -x continue`, whose Session is the same)
#   - round-trip latency of reading one counter over loopback: Unix socket and TCP 127.0.0.1,
#     with the emulation stopped and while it runs (reads are served between two cycles)
#   tests/bench/remote_bench.sh [BUILD_DIR]     Environment: BENCH_REPS (default 3)
set -euo pipefail
# shellcheck source=tests/bench/lib.sh
source "$(dirname "$0")/lib.sh"
build=${1:-build}
reps=${BENCH_REPS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$root/$build/bud"
[ -x "$bud" ] || bud="$build/bud"
client="$(dirname "$bud")/bud-bench-remote"
cmake --build "$build" --target bud bud-bench-remote -j "$(nproc)" >/dev/null
work=("$root/examples/long_run.textpb" --throttle 1 --throttle-period 3)
tmp=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }

# start_server ADDR ARGS...: bud serve in the background (pid in $server); waits for its
# listening line and sets $addr to the bound address. Not in a subshell: $server must survive.
start_server() {
  local listen=$1
  shift
  rm -f "$tmp/serve.out"
  "$bud" serve "$@" --listen "$listen" --output-dir "$tmp/out" --json >"$tmp/serve.out" 2>&1 &
  server=$!
  for ((i = 0; i < 600; i++)); do
    grep -q listening "$tmp/serve.out" 2>/dev/null && break
    sleep 0.05
  done
  addr=$(sed -n 's/.*"listening":"\([^"]*\)".*/\1/p' "$tmp/serve.out")
}
stop_server() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

printf 'continue\n' >"$tmp/c.bud"
run=() ; e2e=() ; e2e_nock=() ; cont=() ; local_cont=() ; local_none=()
printf 'echo prepared\n' >"$tmp/none.bud"
for ((i = 0; i < reps; i++)); do
  t0=$(now); "$bud" run "${work[@]}" >/dev/null 2>&1 || true; t1=$(now)
  run+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
  t0=$(now); "$bud" debug "${work[@]}" -x "$tmp/c.bud" --batch >/dev/null 2>&1; t1=$(now)
  local_cont+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
  t0=$(now); "$bud" debug "${work[@]}" -x "$tmp/none.bud" --batch >/dev/null 2>&1; t1=$(now)
  local_none+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
  t0=$(now)
  start_server "unix:$tmp/b.sock" "${work[@]}"
  c=$("$client" "$addr" continue)
  "$client" "$addr" shutdown
  wait "$server" 2>/dev/null || true
  server=""
  t1=$(now)
  e2e+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
  cont+=("$(echo "$c" | field seconds)")
  cycles=$(echo "$c" | field cycle)
  # The same without automatic checkpoints (they are the Session's cost, local or remote).
  t0=$(now)
  start_server "unix:$tmp/n.sock" "${work[@]}" --checkpoint-interval 1000000000
  "$client" "$addr" continue >/dev/null
  "$client" "$addr" shutdown
  wait "$server" 2>/dev/null || true
  server=""
  t1=$(now)
  e2e_nock+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
done
R=$(printf '%s\n' "${run[@]}" | med)
E=$(printf '%s\n' "${e2e[@]}" | med)
EN=$(printf '%s\n' "${e2e_nock[@]}" | med)
C=$(printf '%s\n' "${cont[@]}" | med)
L=$(printf '%s\n' "${local_cont[@]}" | med)
N=$(printf '%s\n' "${local_none[@]}" | med)

echo "## Remote attach (long_run throttled 1 of 3: $cycles cycles; median of $reps, alternating)"
echo
awk -v r="$R" -v e="$E" -v en="$EN" -v c="$C" -v l="$L" -v n="$N" -v cy="$cycles" 'BEGIN {
  printf "%-66s %10s\n", "measure", "value"
  printf "%-66s %10.3f s\n", "bud run (local)", r
  printf "%-66s %10.3f s\n", "bud serve + remote continue + shutdown (end to end)", e
  printf "%-66s %10.3f s\n", "the same, no automatic checkpoints", en
  printf "%-66s %10.3f s\n", "remote Continue call alone (unix socket)", c
  printf "%-66s %10.3f s\n", "bud debug -x continue, continue alone (load subtracted)", l - n
  printf "%-66s %10.3f   (target >= 0.95)\n", "throughput: remote end to end / bud run", r / e
  printf "%-66s %10.3f   (target >= 0.95)\n", "throughput: remote end to end, no checkpoints / bud run", r / en
  printf "%-66s %10.3f\n", "throughput: remote continue / local debug continue", (l - n) / c
  printf "%-66s %10.2f Mcycles/s\n", "remote continue", cy / c / 1e6 }'
echo

# Latency of one counter read: stopped (Unix, TCP) and while running (Unix).
printf 'bench-token-%s\n' "$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$tmp/token"
chmod 600 "$tmp/token"
start_server "unix:$tmp/l.sock" gemm_small
lu=$("$client" "$addr" latency 5000)
stop_server
start_server "tcp:127.0.0.1:0" gemm_small --token-file "$tmp/token"
lt=$(BUD_BENCH_TOKEN_FILE="$tmp/token" "$client" "$addr" latency 5000)
stop_server
start_server "unix:$tmp/r.sock" "${work[@]}" --run
lr=$("$client" "$addr" latency 5000)
stop_server
printf "%-44s %12s %12s %12s %12s\n" "one counter read, round trip" "median us" "p99 us" \
  "print med us" "print p99 us"
for row in "unix socket, stopped|$lu" "tcp 127.0.0.1 + token, stopped|$lt" \
           "unix socket, while running|$lr"; do
  name=${row%%|*}
  j=${row#*|}
  printf "%-44s %12s %12s %12s %12s\n" "$name" "$(echo "$j" | field counter_median_us)" \
    "$(echo "$j" | field counter_p99_us)" "$(echo "$j" | field print_median_us)" \
    "$(echo "$j" | field print_p99_us)"
done
echo
