#!/usr/bin/env bash
# Triggers on a design and packets of runs that end in an error, as a user meets them
# (docs/designs.md, "Triggers on a design", "Recording and replaying a design"):
# - `bud trigger check --design` checks names against the design (a misspelt counter is
#   FILE:LINE:COL with the near name; `layer` is an error; --json);
# - `bud run --design --triggers` gives the untriggered run's stage digests, captures an FST of
#   the design's signals, fires the irq trigger on the cycle `bud debug --design` stops at for
#   `break if irq == 1`, and keeps the record action's packet, which replays and carries the hit;
# - a halt trigger stops the run (exit 1, "halted", nothing recorded);
# - BUG_NO_IRQ (a firmware timeout, exit 10) is recorded, and its packet reproduces the error
#   bit-exactly after the design's directory is gone.
# Usage: design_triggers_e2e.sh BUD SOURCE_DIR WORK_DIR
set -euo pipefail
bud=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/elsewhere" && cd "$work"
export BUD_DESIGN_CACHE="$work/cache"
fail() { echo "design_triggers_e2e: $*" >&2; exit 1; }
# expect EXIT PATTERN CMD...: CMD exits EXIT and prints PATTERN (stdout+stderr)
expect() {
  local want=$1 pat=$2; shift 2
  local rc=0
  "$@" > out.txt 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat out.txt >&2; fail "$* exited $rc, expected $want"; }
  grep -q -- "$pat" out.txt || { cat out.txt >&2; fail "$* did not print: $pat"; }
}
cp -r "$src/examples/designs/vec_dma" vd
d=vd/vec_dma.toml
trig=vd/stall.trig

# trigger check against the design's names.
expect 0 "ok, 2 triggers" "$bud" trigger check "$trig" --design "$d"
"$bud" trigger check --json "$trig" --design "$d" > check.json
python3 - check.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["valid"] and [t["name"] for t in j["triggers"]] == ["read_stall", "irq_raised"], j
PY
sed 's/rate(r_waiting, 64)/rate(r_waitng, 64)/' "$trig" > typo.trig
expect 2 "typo.trig:9:[0-9]*: error: .*r_waitng.*r_waiting" "$bud" trigger check typo.trig --design "$d"
printf 'trigger t\n  when layer conv\n  do log "x"\nend\n' > layer.trig
expect 2 "layer.trig:2:" "$bud" trigger check layer.trig --design "$d"
# The NPU's names are not the design's, and the reverse.
expect 2 "error" "$bud" trigger check "$trig"
expect 2 "need --design" "$bud" trigger check "$trig" --define X=1

# The armed run: the same run as without triggers.
"$bud" design run --json "$d" --seed 3 > plain.json
"$bud" run --json --design "$d" --seed 3 --triggers "$trig" --capture-dir caps > trig.json
python3 - plain.json trig.json <<'PY'
import json, sys
plain, trig = (json.load(open(f)) for f in sys.argv[1:])
assert trig["passed"] and trig["state"] == "finished", trig
assert [s["digest"] for s in trig["stages"]] == [s["digest"] for s in plain["stages"]]
assert trig["cycles"] == plain["cycles"] and trig["counters"] == plain["counters"]
hits = {}
for t in trig["triggers"]["coverage"]:
    hits[t["name"]] = t["hits"]
assert hits["irq_raised"] == 1 and 1 <= hits["read_stall"] <= 2, hits
irq = [h for h in trig["triggers"]["hits"] if h["trigger"] == "irq_raised"][0]
open("irq_cycle", "w").write(str(irq["cycle"]))
assert [p["path"] for p in trig["packets"]] == ["vec_dma_irq.bpk"], trig["packets"]
PY
[ -s caps/read_stall-1.fst ] || fail "no capture of the read stall"
if command -v fst2vcd > /dev/null; then
  fst2vcd caps/read_stall-1.fst > rs.vcd
  grep -q "m_axi_rvalid" rs.vcd || fail "the capture lacks the design's signals"
fi
# The hit's cycle, independently: where the debugger stops for the same condition.
printf 'break if irq == 1\ncontinue\n' > irq.bud
"$bud" debug --design "$d" --seed 3 -x irq.bud --batch > dbg.txt 2>&1 || { cat dbg.txt >&2; fail "debug"; }
grep -q "stopped at cycle $(cat irq_cycle):" dbg.txt || { cat dbg.txt >&2; fail "irq hit at $(cat irq_cycle)"; }
# The record action's packet: the whole run, annotated with the hit; it replays.
expect 0 "passes bit-exactly" "$bud" replay vec_dma_irq.bpk
"$bud" packet inspect --json vec_dma_irq.bpk > insp.json
grep -q "irq_raised" insp.json || fail "the packet lacks the hit's annotation"

# A halt: exit 1, halted at the trigger's cycle, the output not checked, nothing recorded.
printf 'trigger stop shots 1\n  when r_waiting >= 100\n  do halt\nend\n' > halt.trig
rc=0; "$bud" run --json --design "$d" --triggers halt.trig --record halted.bpk > halt.json 2> halt.err || rc=$?
[ "$rc" = 1 ] || { cat halt.err >&2; fail "halt exited $rc"; }
grep -q '"state":"halted"' halt.json && grep -q "halted by trigger stop" halt.json || fail "halt report"
[ ! -e halted.bpk ] && grep -q "not recorded" halt.err || fail "a halted run was recorded"

# A run that ends in an error is recorded, and its packet reproduces the error.
rc=0; "$bud" design run --json "$d" --define BUG_NO_IRQ --record noirq.bpk > noirq.json 2>/dev/null || rc=$?
[ "$rc" = 10 ] || fail "BUG_NO_IRQ exited $rc"
python3 - noirq.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["error"] == "firmware_timeout" and j["exit_code"] == 10 and j["state"] == "error", j
assert "wait_irq timed out" in j["message"] and j["packet"]["path"] == "noirq.bpk", j
assert len(j["stages"]) == 6 and j["stages"][4]["transactions"] > 0, j["stages"]
PY
# With triggers the error is the same (and the triggers' report is there).
rc=0; "$bud" run --json --design "$d" --define BUG_NO_IRQ --triggers "$trig" --capture-dir caps2 \
  > noirq_t.json 2>/dev/null || rc=$?
[ "$rc" = 10 ] && grep -q '"error":"firmware_timeout"' noirq_t.json && grep -q '"triggers"' noirq_t.json \
  || fail "the error under triggers ($rc)"
rm -rf vd
cd elsewhere
expect 1 "symptom reproduced bit-exactly: error: firmware.fw:[0-9]*: wait_irq timed out" \
  "$bud" replay ../noirq.bpk
"$bud" replay --json ../noirq.bpk > r.json 2>/dev/null || true
grep -q '"verdict":"reproduced"' r.json || { cat r.json >&2; fail "replay --json"; }
echo "design_triggers_e2e: ok"
