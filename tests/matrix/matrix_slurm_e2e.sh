#!/usr/bin/env bash
# `bud matrix --slurm` on a real single-node Slurm cluster started and stopped here
# (tests/corpus/slurm_cluster.sh): the matrix of two workloads and a three-packet corpus as a
# job array of 3 shards and a merge job; the merged report must equal, member for member, the
# --json of the same matrix measured in one process.
#   matrix_slurm_e2e.sh BUD SOURCE_DIR WORK_DIR    (as root; ctest matrix:slurm-e2e)
# Environment: BUD_SLURM_PORT (16817), BUD_SLURM_TIMEOUT (300 s).
set -uo pipefail
bud=$1 src=$2 work=$3
timeout_s=${BUD_SLURM_TIMEOUT:-300}
. "$src/tests/corpus/slurm_cluster.sh"
start_slurm_cluster

mkdir -p "$work/corpus"
"$bud" run gemm_small --record "$work/corpus/clean.bpk" >/dev/null 2>&1 || fail "record clean"
"$bud" run mlp --record "$work/corpus/mlp.bpk" >/dev/null 2>&1 || fail "record mlp"
"$bud" run gemm_small --precision bf16 --fault 'memflip:out:0x2d1[6]@1280' \
  --record "$work/corpus/escaped.bpk" >/dev/null 2>&1
[ -s "$work/corpus/escaped.bpk" ] || fail "record escaped"
printf -- '--tile-rows 4\n' > "$work/new.flags"
args=(default "$work/new.flags" --workloads gemm_small,mlp --seeds 2 --requests 300
      --corpus "$work/corpus")

"$bud" matrix "${args[@]}" --slurm "$work/run" --shards 3 --json > "$work/submit.json" \
  2> "$work/submit.err" || fail "bud matrix --slurm failed: $(cat "$work/submit.err")"
cat "$work/submit.json"
merge_job=$(sed -n 's/.*"merge_job":"\([0-9]*\)".*/\1/p' "$work/submit.json")
[ -n "$merge_job" ] || fail "no merge job id in $(cat "$work/submit.json")"
grep -q '"tasks":5' "$work/submit.json" || fail "2 workloads + 3 packets should be 5 tasks"
wait_for_job "$merge_job" "$timeout_s"

ls "$work/run/results"
[ "$(ls "$work/run/results" | wc -l)" = 3 ] || fail "expected 3 shard files"
merged=$work/run/merged
[ -s "$merged/matrix.json" ] || fail "the merge job wrote no matrix.json: $(cat "$work"/run/logs/merge-*.out)"
grep -q '^Decision: ' "$merged/matrix.txt" || fail "no decision in matrix.txt"
[ -s "$merged/matrix.html" ] || fail "no matrix.html"

rc=0
"$bud" matrix "${args[@]}" --json > "$work/local.json" || rc=$?
case $rc in 0|1|10|11) ;; *) fail "the local matrix exited $rc" ;; esac
python3 - "$work/local.json" "$merged/matrix.json" <<'PY' || fail "the merged matrix differs from the local run"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
diff = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
assert not diff, ("members differ", diff)
assert len(a["corpus"]) == 3 and len(a["correctness"]) == 2
PY
echo "matrix_slurm_e2e: PASS: 3 shards through Slurm merged into the matrix one process measures ($(python3 -c "import json;print(json.load(open('$merged/matrix.json'))['decision']['verdict'])"))"
