#!/usr/bin/env bash
# End to end on a real single-node Slurm cluster (Debian's slurm-wlm and munge), started and
# stopped here: munged with a generated key, slurmctld and slurmd as root with a generated
# slurm.conf (proctrack/linuxproc, task/none, one partition with this host's CPUs). Submits a
# corpus with injected failures through `bud corpus submit --slurm`, waits for the merge job
# (bounded poll), and checks the merged report against a serial replay of the same corpus.
# A daemon that does not start FAILS the test with its log; nothing is skipped.
#   slurm_e2e.sh BUD CORPUS_DIR WORK_DIR        (as root; ctest corpus:slurm-e2e)
# Environment: BUD_SLURM_PORT (16817), BUD_SLURM_TIMEOUT (300 s), BUD_SLURM_SHARDS (array tasks;
# default one per packet).
set -uo pipefail
bud=$1
corpus=$(cd "$2" && pwd)  # absolute, as bud corpus submit writes it
work=$3
timeout_s=${BUD_SLURM_TIMEOUT:-300}

# The cluster (fail, the EXIT trap and wait_for_job too).
. "$(dirname "$0")/slurm_cluster.sh"
start_slurm_cluster


t0=$(date +%s.%N)
"$bud" corpus submit --slurm "$corpus" --out "$work/run" ${BUD_SLURM_SHARDS:+--shards "$BUD_SLURM_SHARDS"} \
  --json >"$work/submit.json" \
  2>"$work/submit.err" || fail "bud corpus submit failed: $(cat "$work/submit.err")"
cat "$work/submit.json"
merge_job=$(sed -n 's/.*"merge_job":"\([0-9]*\)".*/\1/p' "$work/submit.json")
[ -n "$merge_job" ] || fail "no merge job id in $(cat "$work/submit.json")"

wait_for_job "$merge_job" "$timeout_s"
t1=$(date +%s.%N)
echo "slurm_e2e: corpus of $(ls "$corpus"/*.bpk | wc -l) packets through Slurm in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

merged=$work/run/merged
[ -f "$merged/replay.xml" ] || fail "the merge job wrote no $merged/replay.xml"
grep -q '"missing": \[\]' "$merged/summary.json" || fail "shards missing: $(cat "$merged/summary.json")"
grep -q '"exit_code": 1' "$merged/summary.json" || fail "merged exit code is not 1: $(cat "$merged/summary.json")"

"$bud" replay "$corpus" --junit "$work/serial.xml" >/dev/null
strip() { sed -E 's/time="[0-9.]+"/time="T"/g' "$1"; }
if ! diff <(strip "$work/serial.xml") <(strip "$merged/replay.xml") >"$work/diff.txt"; then
  cat "$work/diff.txt" >&2
  fail "the merged report differs from a serial replay of the same corpus"
fi
echo "slurm_e2e: PASS: merged report of $(grep -c '<testcase' "$merged/replay.xml") packets equals the serial replay's"
