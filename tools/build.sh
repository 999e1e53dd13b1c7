#!/usr/bin/env bash
# Builds targets of a configured tree with one line of progress: `tools/build.sh BUILD JOBS
# [TARGET...]` (no target: everything). On a terminal the line is rewritten in place with the
# build's percentage and its current step; elsewhere (CI, a pipe) it prints one line when done.
# On failure it prints the compiler's output (the last 200 lines of the log) and exits non-zero.
set -uo pipefail
build=$1 jobs=$2
shift 2
targets=()
for t in "$@"; do targets+=(--target "$t"); done
log="$build/build.log"
mkdir -p "$build"
what=${*:-everything}
start=$SECONDS
if [ -t 1 ]; then
  cols=$(tput cols 2>/dev/null || echo 100)
  cmake --build "$build" -j "$jobs" "${targets[@]}" 2>&1 | tee "$log" |
    while IFS= read -r line; do
      case "$line" in
        \[*%\]*) printf '\r\033[K%s' "build $what: ${line:0:$((cols - 10 - ${#what}))}" ;;
      esac
    done
  rc=${PIPESTATUS[0]}
  printf '\r\033[K'
else
  cmake --build "$build" -j "$jobs" "${targets[@]}" >"$log" 2>&1
  rc=$?
fi
if [ "$rc" -ne 0 ]; then
  tail -n 200 "$log"
  echo "build: $what failed (full log: $log)"
  exit "$rc"
fi
echo "build: $what up to date ($((SECONDS - start)) s; log: $log)"
