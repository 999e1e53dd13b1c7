#!/usr/bin/env bash
# The evidence report over a history of 100,000 rows, for docs/performance.md ("Corpora on Slurm
# and the evidence report"): 4 runs of 25,000 packets on 2 model revisions (1 in 11 failing, each
# packet with 2 armed triggers and a counter list), generated as shard results files, recorded
# with `bud corpus record`, then `bud corpus report --json` (and --html) timed, medians.
#   tests/bench/evidence_bench.sh [BUILD_DIR]     Environment: BENCH_REPS (default 3),
#   BENCH_PACKETS (per run, default 25000)
set -euo pipefail
build=${1:-build}
reps=${BENCH_REPS:-3}
packets=${BENCH_PACKETS:-25000}
root=$(cd "$(dirname "$0")/../.." && pwd)
bud="$build/bud"
source "$root/tests/bench/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3 4; do
  python3 - "$tmp/shard-$run.json" "$run" "$packets" <<'PY'
import json, sys
path, run, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
counters = ["cycles", "load.active", "load.stall_mem", "gemm.active", "store.active"]
packets = []
for i in range(n):
    failing = (i + run) % 11 == 0
    packets.append({
        "packet": f"p{i:06d}.bpk", "verdict": "reproduced" if failing else "passed",
        "exit_code": 1 if failing else 0, "message": "", "notes": [], "recorded_revision": "r",
        "start_cycle": 0, "end_cycle": 100000, "digests_checked": 10, "windows_checked": 4,
        "divergence": None, "recorded_symptom": None, "replay_symptom": None,
        "evidence": {"triggers_armed": ["t%d" % (i % 7), "u"], "triggers_hit": ["u"] if i % 3 else [],
                     "counters": counters, "counters_observed": counters[: 1 + i % 5]},
        "corpus_index": i, "seconds": 0.1})
json.dump({"format": "bud-corpus-shard", "version": 1, "shard": {"index": 0, "total": 1},
           "source": "--shard", "revision": "rev%d" % ((run + 1) // 2), "total_packets": n,
           "exit_code": 1, "packets": packets}, open(path, "w"))
PY
  /usr/bin/time -f "%e" -a -o "$tmp/record" "$bud" corpus record "$tmp/e.db" "$tmp/shard-$run.json" \
    --run "run-$run" >/dev/null
done
rows=$(sqlite3 "$tmp/e.db" "SELECT COUNT(*) FROM results" 2>/dev/null || echo "$((4 * packets))")
for ((i = 0; i < reps; i++)); do
  /usr/bin/time -f "%e %U %S" -a -o "$tmp/report" "$bud" corpus report "$tmp/e.db" --json >/dev/null
  /usr/bin/time -f "%e %U %S" -a -o "$tmp/html" "$bud" corpus report "$tmp/e.db" \
    --html "$tmp/e.html" >/dev/null
done
echo "## Evidence report over $rows rows (4 runs of $packets packets, 2 revisions; median of $reps)"
printf "%-44s elapsed %6s s (each of 4 runs: %s)\n" "bud corpus record (one run)" \
  "$(med <"$tmp/record")" "$(tr '\n' ' ' <"$tmp/record")"
printf "%-44s elapsed %6s s   CPU %6s s\n" "bud corpus report --json" \
  "$(awk '{print $1}' "$tmp/report" | med)" "$(awk '{print $2 + $3}' "$tmp/report" | med)"
printf "%-44s elapsed %6s s   CPU %6s s\n" "bud corpus report --html" \
  "$(awk '{print $1}' "$tmp/html" | med)" "$(awk '{print $2 + $3}' "$tmp/html" | med)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
