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

# med: the median of the numbers on standard input (one per line or separated by blanks)
med() { tr -s ' \t' '\n\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
