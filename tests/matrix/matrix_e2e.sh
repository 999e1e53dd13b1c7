#!/usr/bin/env bash
# `bud matrix` as a release engineer runs it (docs/matrix.md): a change that does nothing ships, a
# change that only slows the memory rolls back, a mixed change is a bounded rollout or an
# escalation by the rule, a broken revision (a fault) rolls back on the correctness and corpus
# cells; the --json figures are checked against the rule recomputed here from the samples; the
# corpus names fixed, failing-differently and not re-runnable packets; the HTML report opens in
# headless Chromium; bad input is one error naming FILE:LINE:COL (exit 2, --json too).
# Usage: matrix_e2e.sh BUD SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
bud=$1 src=$2 work=$3 py=$4
rm -rf "$work" && mkdir -p "$work/corpus" && cd "$work"
fail() { echo "matrix_e2e: $*" >&2; exit 1; }
w=(--workloads gemm_small,mlp --seeds 2 --requests 300)

run() {  # run EXIT OUT ARGS...: bud matrix ARGS > OUT exits EXIT
  local want=$1 out=$2; shift 2
  local rc=0
  "$bud" matrix "$@" > "$out" 2> "$out.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$out" "$out.err" >&2; fail "matrix $* exited $rc, expected $want"; }
}

# 1. A change to the default value changes nothing: every cell inside its band, ship (0).
run 0 same.txt "${w[@]}" default '--point nominal'
grep -q 'Decision: ship' same.txt || fail "no-op change did not ship"
grep -q 'no performance cell moved beyond noise' same.txt || fail "no-op change moved a cell"

# 2. A narrow DRAM channel: slower everywhere, nothing better: rollback (1). The JSON's
#    movements follow the rule recomputed from the samples.
printf '# a quarter of the DRAM bandwidth\n--mem-bw 4\n' > narrow.flags
run 1 narrow.json "${w[@]}" --json default narrow.flags
"$py" - narrow.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["decision"]["verdict"] == "rollback", d["decision"]
assert d["new"]["flags"] == ["--mem-bw 4"], d["new"]
assert d["mem_seeds"] == [1, 2]
floor = d["rule"]["floor_fraction"]
moved = 0
for p in d["performance"]:
    b, n = p["base"], p["new"]
    assert len(b) == 2 and len(n) == 2, p
    mb, mn = sum(b) / 2, sum(n) / 2
    band = max(b) - min(b)
    thr = max(band, floor * abs(mb))
    assert abs(p["band"] - band) < 1e-9 * max(1, band) and abs(p["threshold"] - thr) < 1e-9 * max(1, thr), p
    up_good = p["metric"] in ("peak_fraction", "requests_per_joule")
    want = "same" if abs(mn - mb) <= thr else ("better" if (mn > mb) == up_good else "worse")
    assert p["movement"] == want, (p, want)
    moved += want != "same"
    assert want != "better", p
cyc = [p for p in d["performance"] if p["metric"] == "cycles"]
assert all(p["movement"] == "worse" for p in cyc), cyc
assert any(m["owner"] == "performance" and m["mechanism"] for m in d["moved"]), d["moved"]
assert d["decision"]["worse"] == moved
assert all(c["base_passed"] and c["new_passed"] for c in d["correctness"])
PY

# 3. Smaller tiles: faster and more energy per inference. The verdict follows the worst
#    regression against the rollout limit (bounded rollout 10 within it, escalate 11 beyond).
rc=0; "$bud" matrix "${w[@]}" --json default '--tile-rows 4' > mixed.json || rc=$?
"$py" - mixed.json "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rc = int(sys.argv[2])
dec = d["decision"]
assert dec["better"] > 0 and dec["worse"] > 0, dec
want = "bounded rollout" if dec["worst_regression"] <= d["rule"]["rollout_limit"] else "escalate"
assert dec["verdict"] == want, dec
assert rc == {"bounded rollout": 10, "escalate": 11}[want], rc
assert any(m["metric"] == "energy_uj" and m["owner"] == "power model" for m in d["moved"])
PY
# The same change with a 20% rollout limit is a bounded rollout.
run 10 mixed20.txt "${w[@]}" --rollout-pct 20 default '--tile-rows 4'
grep -q 'Decision: bounded rollout' mixed20.txt || fail "rollout limit not applied"

# 4. The replay corpus: a clean packet, an escaped failure, a packet made at the prompt.
"$bud" run gemm_small --record corpus/clean.bpk > /dev/null 2>&1
rc=0; "$bud" run gemm_small --precision bf16 --fault 'memflip:out:0x2d1[6]@1280' \
  --record corpus/escaped.bpk > /dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the escaped failure's recording exited $rc"
printf 'record start corpus/prompt.bpk\nstep 5\ndeposit dram 0x10000 0x55\ncontinue\nrecord stop\n' > prompt.cmds
"$bud" debug gemm_small -x prompt.cmds --batch > prompt.txt 2>&1 || true
[ -s corpus/prompt.bpk ] || fail "the prompt packet was not recorded"
#    A broken revision (a fault on every run of NEW): the workloads and the clean packet
#    regress, the escaped failure fails differently, the prompt packet cannot be re-run.
run 1 broken.json --workloads gemm_small --seeds 2 --requests 300 --corpus corpus --json \
  default "--fault memflip:dram:0x10000[3]@10"
"$py" - broken.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["decision"]["verdict"] == "rollback"
c = {x["packet"]: x for x in d["corpus"]}
assert sorted(c) == ["clean.bpk", "escaped.bpk", "prompt.bpk"], sorted(c)
assert c["clean.bpk"]["regressed"] and not c["clean.bpk"]["new_passed"], c["clean.bpk"]
e = c["escaped.bpk"]
assert e["recorded_failure"] and not e["base_passed"] and not e["new_passed"], e
assert e["base_failure"] != e["new_failure"], e
assert "prompt interventions" in c["prompt.bpk"]["unusable"], c["prompt.bpk"]
reasons = " | ".join(d["decision"]["reasons"])
for s in ("rollback: gemm_small: bit-exact on BASE, fails on NEW",
          "rollback: corpus clean.bpk (gemm_small): clean on BASE, fails on NEW",
          "escalate: corpus escaped.bpk (gemm_small): fails differently",
          "escalate: corpus prompt.bpk (gemm_small): cannot be re-run"):
    assert s in reasons, (s, reasons)
assert not any(p["workload"] == "gemm_small" for p in d["performance"]), "a failing cell has figures"
PY
#    int8 instead of the recorded bf16: the escaped failure's flip lands elsewhere (fixed on NEW
#    or failing differently, by the data): named either way, never silently passed.
run 11 int8.txt --workloads gemm_small --seeds 2 --requests 300 --corpus corpus default '--precision int8'
grep -E -q 'escaped.bpk +gemm_small +failure +FAIL +(bit-exact +FIXED ON NEW|FAIL +FAILS DIFFERENTLY)' int8.txt \
  || { cat int8.txt >&2; fail "corpus row of the escaped failure"; }

# 5. The HTML report in a real browser.
run 1 html.txt "${w[@]}" --html m.html default narrow.flags
"$py" "$src/tests/html/check_html.py" m.html --min-plots 1 --text 'Decision: rollback' \
  --text 'Correctness' --text 'Performance' --text 'noise band'

# 6. Bad input: one error naming where, exit 2, JSON on request.
printf -- '--tile-rows 4\n\n--mem-bw 4 --bogus 1\n' > bad.flags
run 2 bad.txt default bad.flags
grep -q 'bad.flags:3:1: ' bad.txt.err || { cat bad.txt.err >&2; fail "bad option not located"; }
printf -- '--tile-rows 4\n--tile-rows 2\n' > twice.flags
run 2 twice.json --json default twice.flags
grep -q 'twice.flags:2:1: --tile-rows given twice (first at twice.flags:1:1)' twice.json || fail "twice"
grep -q '"error"' twice.json || fail "twice: not JSON"
run 2 seed.txt default '--mem-seed 3'
grep -q 'mem-seed is the matrix' seed.txt.err || fail "--mem-seed accepted"
run 2 same2.txt default default
grep -q 'no change to measure' same2.txt.err || fail "same configurations"
run 2 missing.json --json default nothere.flags
grep -q 'nothere.flags: cannot read' missing.json || fail "missing file"
run 2 corpus.txt --workloads gemm_small --corpus "$work/nocorpus" default '--tile-rows 4'
grep -q 'nocorpus' corpus.txt.err || fail "missing corpus"

# 7. Shards: two local shards merge into the matrix one process measures; a merge with a shard
#    missing, twice, or from another matrix is one error naming it (exit 2).
sh=(--workloads gemm_small,mlp --seeds 2 --requests 300 --corpus corpus default '--tile-rows 4')
rc=0; "$bud" matrix "${sh[@]}" --json > whole.json || rc=$?
"$bud" matrix "${sh[@]}" --shard 0/2 --cells-out shards > /dev/null
"$bud" matrix "${sh[@]}" --shard 1/2 --cells-out shards --json > shard1.json
grep -q '"shard":"1/2"' shard1.json || fail "shard --json"
rc2=0; "$bud" matrix merge shards --json > merged.json || rc2=$?
[ "$rc" = "$rc2" ] || fail "merge exited $rc2, the whole matrix $rc"
"$py" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); assert a==b, [k for k in a if a[k]!=b.get(k)]' whole.json merged.json
mkdir -p half && cp shards/shard-0000-of-0002.json half/
run 2 missing-shard.txt merge half
grep -q 'missing shards.*shard-0001-of-0002 (tasks 1, 3)' missing-shard.txt.err || { cat missing-shard.txt.err >&2; fail "missing shard"; }
run 2 twice-shard.txt merge shards/shard-0000-of-0002.json shards/shard-0000-of-0002.json shards/shard-0001-of-0002.json
grep -q 'given twice' twice-shard.txt.err || fail "shard twice"
"$bud" matrix --workloads gemm_small --seeds 2 --requests 300 default '--tile-rows 4' --shard 1/2 --cells-out other > /dev/null
run 2 other.json --json merge shards/shard-0000-of-0002.json other/shard-0001-of-0002.json
grep -q 'another matrix than' other.json || fail "another matrix"
run 2 notshard.txt merge narrow.json
grep -q 'not a matrix shard file' notshard.txt.err || fail "not a shard file"
run 2 noout.txt "${sh[@]}" --shard 0/2
grep -q 'needs --cells-out' noout.txt.err || fail "--shard without --cells-out"
"$bud" matrix "${sh[@]}" --slurm slurm-dry --shards 2 --dry-run > dry.txt
grep -q 'matrix.sbatch (2 tasks of 5)' dry.txt || fail "dry run"
grep -q -- "--array=0-1" slurm-dry/matrix.sbatch || fail "array size"
grep -q -- "'--tile-rows 4'" slurm-dry/matrix.sbatch || fail "inline NEW quoted"
echo "matrix_e2e: ok"
