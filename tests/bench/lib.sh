# Shared helpers of the benchmark scripts (source it; not run on its own).
# Wall-clock time is used for the figures of docs/performance.md only, never by tests.

now() { date +%s.%N; }

# secs CMD...: wall seconds of one run (exit status ignored, output discarded)
secs() {
  local t0 t1
  t0=$(now)
  "$@" >/dev/null 2>&1 || true
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}

# cpu CMD...: CPU seconds (user + system) of one run (exit status ignored, output discarded); on
# a shared machine less noisy than wall time
cpu() {
  local TIMEFORMAT='%3U %3S'
  { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.3f\n", $1 + $2 }'
}

# med: the median of the numbers on standard input (one per line or separated by blanks)
med() { tr -s ' \t' '\n\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# conditions_script FILE: `bud debug` script arming four conditional breakpoints on counters that
# never fire, then `continue` (the "continue with 4 conditions" figure).
conditions_script() {
  cat >"$1" <<'BUD'
break if gemm.stall_mem > 1000000000
break if load.stall_mem > 1000000000
break if store.idle > 1000000000
break if dram_rd_bytes > 1000000000000
continue
BUD
}

# goto_script FILE CYCLES: `continue`, then twenty `goto`s to cycles below CYCLES spread by a
# fixed LCG (the same cycles every run), out of order.
goto_script() {
  local x=12345 i
  {
    echo continue
    for ((i = 0; i < 20; i++)); do
      x=$(((x * 1103515245 + 12345) % 2147483648))
      echo "goto $((x % $2))"
    done
  } >"$1"
}
