#!/usr/bin/env bash
# The bring-up loop of issue 29 on each example design, as a user runs it with the real binary
# (docs/designs.md, "The whole loop"): the design PASSes; a fault from its FAULTS.md fails and is
# recorded; the design's directory is deleted; the packet replays to the same failure; bisect
# names the stage and transaction FAULTS.md declares, and a cycle that `bud debug --packet`
# confirms independently (the stage's transaction count steps from T to T+1 over that cycle, the
# payload signal holds the bad value bisect reports); minimize gives a smaller packet (stimulus or
# memory, firmware, cycles) that replays to the same failure and bisects to the same stage, and
# whose debug session shows the bad value at the cycle its own bisect names. Then bad input: an
# NPU packet still takes the NPU path, a corrupt design packet is exit 125 naming the byte, a
# --good packet of another design is exit 2 naming both, a packet without overrides or good side
# is exit 2, a packet that passes is reported and not bisected, --json errors are JSON.
# Usage: design_loop_e2e.sh BUD SOURCE_DIR WORK_DIR [SCENARIO...]   (SCENARIO: example:DEFINE)
set -euo pipefail
bud=$1 src=$2 work=$3
shift 3
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
  scenarios=(vec_dma:BUG_NO_SATURATE vec_dma:BUG_DROP_LAST_BEAT fir_stream:BUG_SKIP_TAP3)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export BUD_DESIGN_CACHE="$work/cache"  # models and the packets' private copies
fail() { echo "design_loop_e2e: $*" >&2; exit 1; }
# run_rc WANT OUT CMD...: CMD exits WANT, its stdout in OUT (stderr in OUT.err)
run_rc() {
  local want=$1 out=$2; shift 2
  local rc=0
  "$@" > "$out" 2> "$out.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$out" "$out.err" >&2; fail "$* exited $rc, expected $want"; }
}

# What FAULTS.md declares for DEFINE: "STAGE TRANSACTION BYTE" (the first stage whose digest
# differs, its transaction index, the first byte of the output that differs).
declared() {
  python3 - "$1" "$2" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("| `%s`" % sys.argv[2]):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        byte = re.search(r"at byte (\d+)", cells[2]).group(1)
        m = re.match(r"\d+ `(\w+)`, transaction #(\d+)", cells[3])
        print(m.group(1), m.group(2), byte)
        break
else:
    sys.exit("no row for " + sys.argv[2])
PY
}

# check_session PACKET BISECT_JSON TAG: `bud debug --packet` at the cycle bisect names: the
# first failing stage has T transactions there and T+1 one cycle later, the last one at that
# cycle; the first payload signal that differs holds bisect's bad value.
check_session() {
  local packet=$1 bj=$2 tag=$3
  read -r cycle stage signal < <(python3 - "$bj" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
st = next(s for s in b["stages"] if s["name"] == b["first_failing_stage"])
sig = next(v["signal"] for v in st["values"] if v["good"] != v["bad"])
print(b["first_divergence_cycle"], st["name"], sig)
PY
)
  printf 'goto %s\ninfo stages\nprint/x %s\nstep 1\ninfo stages\n' "$cycle" "$signal" > "$tag.bud"
  run_rc 0 "$tag.debug.json" "$bud" debug --packet "$packet" -x "$tag.bud" --batch --json
  "$bud" debug --packet "$packet" -x "$tag.bud" --batch > "$tag.debug.txt" 2>&1 ||
    fail "$tag: the console session failed"
  grep -q "stopped at cycle $cycle" "$tag.debug.txt" || { cat "$tag.debug.txt" >&2; fail "$tag: goto $cycle"; }
  python3 - "$tag.debug.json" "$bj" "$stage" "$signal" "$cycle" <<'PY'
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
b = json.load(open(sys.argv[2]))
stage, signal, cycle = sys.argv[3], sys.argv[4], int(sys.argv[5])
assert all(l["ok"] for l in lines), lines
assert lines[0]["cycle"] == cycle, lines[0]
st = next(s for s in b["stages"] if s["name"] == stage)
t = st["first_difference"]
def detail(l):
    e = next(e for e in l["data"]["engines"] if e["engine"] == stage)
    return e["detail"]
before, after = detail(lines[1]), detail(lines[4])
assert re.match(r"%d transactions" % t, before), (before, t)
assert re.match(r"%d transactions, last at cycle %d$" % (t + 1, cycle), after), (after, t, cycle)
bad = next(v["bad"] for v in st["values"] if v["signal"] == signal)
assert lines[2]["data"]["name"] == signal and lines[2]["data"]["value"] == int(bad, 16), (lines[2], bad)
PY
}

for sc in "${scenarios[@]}"; do
  ex=${sc%%:*} bug=${sc#*:}
  tag="$ex-$bug"
  toml="$tag/$ex.toml"
  read -r want_stage want_txn want_byte < <(declared "$src/examples/designs/$ex/FAULTS.md" "$bug")
  cp -r "$src/examples/designs/$ex" "$tag"
  rm -f "$tag"/*.bin  # a sink file an earlier run left in the source tree

  # 1. PASS; the fault FAILs (exit 1) at the byte FAULTS.md says, and is recorded.
  run_rc 0 "$tag.pass.json" "$bud" design run --json "$toml"
  grep -q '"passed":true' "$tag.pass.json" || fail "$tag: the design does not pass"
  run_rc 1 "$tag.run.json" "$bud" design run --json "$toml" --define "$bug" --record "$tag.bpk"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['first_mismatch_byte']==int(sys.argv[2]), j" \
    "$tag.run.json" "$want_byte" || fail "$tag: not the byte FAULTS.md declares"

  # 2. The design's directory is gone: the packet alone reproduces the failure.
  rm -rf "$tag"
  run_rc 1 "$tag.replay.txt" "$bud" replay "$tag.bpk"
  grep -q "reproduced: symptom reproduced bit-exactly: FAIL" "$tag.replay.txt" || fail "$tag: replay"

  # 3. Bisect: the stage and transaction FAULTS.md declares; a cycle; the table says the same.
  run_rc 1 "$tag.bisect.json" "$bud" bisect "$tag.bpk" --json
  python3 - "$tag.bisect.json" "$want_stage" "$want_txn" "$bug" <<'PY' || fail "$tag: bisect"
import json, sys
b = json.load(open(sys.argv[1]))
stage, txn, bug = sys.argv[2], int(sys.argv[3]), sys.argv[4]
assert b["verdict"] == "fail" and b["exit_code"] == 1, b
assert b["first_failing_stage"] == stage, (b["first_failing_stage"], stage)
assert b["transaction"] == txn, (b["transaction"], txn)
assert b["replay"]["verdict"] == "reproduced", b["replay"]
assert b["good_side"]["kind"] == "unchanged" and bug in b["good_side"]["description"], b["good_side"]
st = next(s for s in b["stages"] if s["name"] == stage)
assert st["differs"] and st["first_difference"] == txn and st["bad_cycle"] == b["first_divergence_cycle"] > 0, st
assert any(v["good"] != v["bad"] for v in st["values"]), st
# Every stage before it agrees, transaction for transaction.
for s in b["stages"][: [x["name"] for x in b["stages"]].index(stage)]:
    assert not s["differs"] and s["good_transactions"] == s["bad_transactions"], s
PY
  run_rc 1 "$tag.bisect.txt" "$bud" bisect "$tag.bpk"
  grep -q "^result     first failing stage: $want_stage (stage [0-9]), transaction #$want_txn at cycle" \
    "$tag.bisect.txt" || { cat "$tag.bisect.txt" >&2; fail "$tag: the bisect table"; }
  check_session "$tag.bpk" "$tag.bisect.json" "$tag"

  # 4. Minimize: smaller inputs and fewer cycles, the same failure, replayed and bisected.
  run_rc 0 "$tag.min.json" "$bud" minimize "$tag.bpk" -o "$tag.min.bpk" --json
  python3 - "$tag.min.json" "$want_stage" <<'PY' || fail "$tag: minimize"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 0 and m["replay"] == "reproduced", m
assert m["failure"]["first_failing_stage"] == sys.argv[2] and m["failure"]["good"] == "pass", m
r = {x["what"]: x for x in m["reductions"]}
inputs = [x for x in m["reductions"] if x["what"].split()[0] in ("stream", "memory", "firmware")]
assert inputs and all(x["after"] <= x["before"] for x in inputs), inputs
assert any(x["after"] < x["before"] for x in inputs), inputs
assert r["run cycles"]["after"] < r["run cycles"]["before"], r["run cycles"]
assert r["max cycles"]["after"] < r["max cycles"]["before"], r["max cycles"]
assert 1 < m["candidates"] <= 200 and m["simulated_cycles"] > r["run cycles"]["before"], m
assert m["bytes_after"] < m["bytes_before"] or any(x["what"].startswith("stream") for x in inputs), m
PY
  run_rc 0 "$tag.min.txt" "$bud" minimize "$tag.bpk" -o "$tag.min2.bpk"
  grep -q "^packet     $tag.min2.bpk (replay: reproduced)" "$tag.min.txt" || fail "$tag: minimize table"
  cmp "$tag.min.bpk" "$tag.min2.bpk" || fail "$tag: two minimizations differ"
  run_rc 1 "$tag.min.replay.txt" "$bud" replay "$tag.min.bpk"
  grep -q "reproduced: symptom reproduced bit-exactly: FAIL" "$tag.min.replay.txt" || fail "$tag: replay M"
  run_rc 1 "$tag.min.bisect.json" "$bud" bisect "$tag.min.bpk" --json
  python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['first_failing_stage']==sys.argv[2], b" \
    "$tag.min.bisect.json" "$want_stage" || fail "$tag: the minimized packet bisects elsewhere"
  check_session "$tag.min.bpk" "$tag.min.bisect.json" "$tag.min"
  echo "design_loop_e2e: $sc ok"
done

# Bad input, and the good side. A failing packet recorded without overrides (a design file
# whose RTL computes another filter than its reference) has no default good side (exit 2, in
# JSON too), yet minimizes on its ending alone; a recorded good run is a good side.
cp -r "$src/examples/designs/vec_dma" vd && rm -f vd/*.bin
cp -r "$src/examples/designs/fir_stream" fs && rm -f fs/*.bin
run_rc 0 clean.json "$bud" design run --json vd/vec_dma.toml --record clean.bpk
run_rc 0 fir.json "$bud" design run --json fs/fir_stream.toml --record fir.bpk
run_rc 0 unused.json "$bud" design run --json vd/vec_dma.toml --define NOT_A_BUG --record unused.bpk
run_rc 1 sat.json "$bud" design run --json vd/vec_dma.toml --define BUG_NO_SATURATE --record sat.bpk
sed -i 's/C1 = -5/C1 = -4/' fs/fir_stream.toml
run_rc 1 c1.json "$bud" design run --json fs/fir_stream.toml --record c1.bpk
rm -rf vd fs
run_rc 2 nogood.json "$bud" bisect --json c1.bpk
grep -q '"error":"bad_input"' nogood.json && grep -q "recorded without --define or --param" nogood.json ||
  fail "a packet without overrides: $(cat nogood.json)"
run_rc 0 c1-min.json "$bud" minimize --json c1.bpk -o c1-min.bpk
python3 - c1-min.json <<'PY' || fail "minimize without a good side"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["good_side"] is None and m["failure"] == {"bad": "output-mismatch", "good": None, "first_failing_stage": None}, m
r = {x["what"]: x for x in m["reductions"]}
# The first wrong sum is beat 1 (byte 4): two samples are all it needs; the quiet period stays.
assert r["stream samples"]["before"] == 4096 and r["stream samples"]["after"] == 2, r
assert r["quiet cycles"]["after"] == r["quiet cycles"]["before"] == 1000, r
PY
run_rc 1 c1-min.replay.txt "$bud" replay c1-min.bpk
run_rc 1 vsgood.json "$bud" bisect --json sat.bpk --good clean.bpk
python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['first_failing_stage']=='compute' and b['good_side']['kind']=='packet', b" \
  vsgood.json || fail "--good a recorded good run"
# A packet that passes (an override that changes nothing, or none) is reported, not bisected.
for p in unused clean; do
  run_rc 0 passes.json "$bud" bisect --json $p.bpk
  python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['verdict']=='pass' and b['replay']['verdict']=='passed' and 'stages' not in b and 'nothing to bisect' in b['message'], b" \
    passes.json || fail "a passing packet: $p"
done
run_rc 1 passes-min.json "$bud" minimize --json unused.bpk -o never.bpk
grep -q "nothing to minimize" passes-min.json && [ ! -e never.bpk ] || fail "minimize of a passing packet"
# --good of another design: exit 2, naming both.
run_rc 2 other.json "$bud" bisect --json sat.bpk --good fir.bpk
grep -q "fir.bpk is a packet of design 'fir_stream' (fir_stream.toml), sat.bpk of design 'vec_dma' (vec_dma.toml)" \
  other.json || fail "--good of another design: $(cat other.json)"
run_rc 2 other-min.txt "$bud" minimize sat.bpk -o never.bpk --good fir.bpk
grep -q "fir_stream" other-min.txt.err && grep -q "vec_dma" other-min.txt.err || fail "minimize --good of another design"
# A corrupt design packet: exit 125 naming the byte, for bisect, minimize and (as its help says,
# exit 2) debug.
cp sat.bpk flip.bpk
printf '\x55' | dd of=flip.bpk bs=1 seek=400 conv=notrunc status=none
run_rc 125 flip.json "$bud" bisect --json flip.bpk
grep -q '"error":"untestable"' flip.json && grep -q "flip.bpk: byte [0-9]*: checksum mismatch" flip.json ||
  fail "a corrupt packet: $(cat flip.json)"
run_rc 125 flip-min.txt "$bud" minimize flip.bpk -o never.bpk
grep -q "flip.bpk: byte [0-9]*: checksum mismatch" flip-min.txt.err || fail "minimize a corrupt packet"
run_rc 2 flip-debug.json "$bud" debug --json --packet flip.bpk --batch
grep -q '"error":"bad_input"' flip-debug.json || fail "debug a corrupt packet"
# Design-packet options on an NPU packet: exit 2; the NPU packet itself still bisects the NPU way.
run_rc 0 npu.txt "$bud" run gemm_small --record npu.bpk
run_rc 0 npu-bisect.json "$bud" bisect --json npu.bpk
python3 -c "import json,sys; b=json.load(open(sys.argv[1])); assert b['verdict']=='pass' and 'ladder' in b, b" \
  npu-bisect.json || fail "an NPU packet left the NPU path"
run_rc 2 npu-good.json "$bud" bisect --json npu.bpk --good-define X
grep -q "apply to a design packet" npu-good.json || fail "--good-define on an NPU packet"
run_rc 2 npu-min.json "$bud" minimize --json npu.bpk -o never.bpk --good sat.bpk
grep -q '"error":"bad_input"' npu-min.json || fail "--good on an NPU packet's minimize"
# --define with a design packet under bud debug: it runs as recorded.
run_rc 2 debug-define.json "$bud" debug --json --packet sat.bpk --define X --batch
grep -q "runs with the --define, --param and --seed it recorded" debug-define.json || fail "debug --define"
[ ! -e never.bpk ] || fail "a refused minimize wrote its output"
echo "design_loop_e2e: ok"
