#!/usr/bin/env bash
# A design's session served and recorded, as a bring-up engineer uses them (docs/designs.md,
# "Debugging a design"; docs/remote.md):
# - `bud serve --design` + `bud attach -x` give the values, stops and stage counts `bud debug
#   --design` gives locally (same seed, same run), --json through attach too;
# - `record start|stop` at either prompt writes a design packet (inside --output-dir when
#   served) that `bud replay` reproduces bit-exactly from its own files; a recording stopped
#   mid-run is the run up to that cycle and replays to the same state;
# - a `record` trigger action in a served session writes its packet inside --output-dir;
# - `bud serve --packet` of a design packet serves the recorded run;
# - bad input: an intervention before `record stop` is refused with the cycle and nothing
#   written; a missing design file, --define without --design: exit 2, JSON error with --json.
# Usage: design_serve_e2e.sh BUD SOURCE_DIR WORK_DIR
set -euo pipefail
bud=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
source "$src/tests/lib.sh" design_serve_e2e
export BUD_DESIGN_CACHE="$work/cache"
vd=$src/examples/designs/vec_dma/vec_dma.toml
server=""
trap '[ -n "$server" ] && kill "$server" 2> /dev/null; true' EXIT

cat > s.bud <<'BUD'
break if r_waiting > 150
continue
print r_waiting
goto 100
print r_waiting
delete 1
record start whole.bpk
continue
record stop
info stages
BUD
# The values a session shows: breakpoint stops, prints and the stage table.
view() { grep -E "^(r_waiting = |stopped at cycle|[a-z_]+ +.*transactions)" "$1" | sed 's/ *$//'; }

# Locally: the faulty vec_dma, recorded whole from the prompt.
"$bud" debug --design "$vd" --define BUG_NO_SATURATE -x s.bud --batch > local.txt 2>&1 ||
  { cat local.txt >&2; fail "the local session failed"; }
grep -q "recorded cycles 0\.\.[0-9]* of design vec_dma to whole.bpk" local.txt ||
  { cat local.txt >&2; fail "record stop did not write whole.bpk"; }
expect 1 "whole.bpk: reproduced: symptom reproduced bit-exactly: FAIL: memory 'ddr' differs" \
  "$bud" replay whole.bpk
# The same run as `bud design run --record` (the notes aside): the same result digests.
"$bud" design run "$vd" --define BUG_NO_SATURATE --record run.bpk > /dev/null 2>&1 || true
"$bud" replay --json whole.bpk run.bpk > both.json 2> /dev/null || true
python3 - both.json <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1]))["packets"]
assert a["verdict"] == b["verdict"] == "reproduced", (a, b)
assert a["recorded_symptom"] == b["recorded_symptom"], (a, b)
assert a["recorded_revision"] == b["recorded_revision"], (a, b)
PY

# Served: the same script through bud attach, the packet inside the output directory.
start_server serve.out --design "$vd" --define BUG_NO_SATURATE --listen "unix:$work/v.sock" \
  --output-dir out
grep -q '"design":"vec_dma"' serve.out || { cat serve.out >&2; fail "the listening line"; }
"$bud" attach "$addr" -x s.bud --batch > remote.txt 2>&1 || { cat remote.txt >&2; fail "attach"; }
diff <(view local.txt) <(view remote.txt) > view.diff ||
  { cat view.diff >&2; fail "the served session differs from the local one"; }
[ "$(view local.txt | wc -l)" -ge 6 ] || { cat local.txt >&2; fail "too little to compare"; }
[ -s out/whole.bpk ] && [ ! -e whole.bpk.remote ] || fail "the served recording is not in out/"
expect 1 "reproduced: symptom reproduced bit-exactly" "$bud" replay out/whole.bpk
printf 'goto 300\nprint r_waiting\n' > g.bud
"$bud" attach "$addr" -x g.bud --batch --json > g.json
python3 - g.json <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == 2 and all(l["ok"] for l in lines), lines
assert lines[0]["cycle"] == 300 and lines[1]["data"]["name"] == "r_waiting", lines
PY
stop_server

# Mid-run: the packet is the run up to the stop, and replays to the same state (a cycle limit).
printf 'step 400\nrecord start mid.bpk\nstep 300\nrecord stop\nprint r_waiting\n' > m.bud
expect 0 "recorded cycles 0\.\.700 of design vec_dma to mid.bpk" \
  "$bud" debug --design "$vd" -x m.bud --batch
"$bud" replay --json mid.bpk > mid.json 2> /dev/null || true
python3 - mid.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["packets"][0]
assert p["verdict"] in ("reproduced", "passed"), p
assert p["recorded_symptom"]["kind"] == "cycle-limit", p
assert p["recorded_symptom"]["cycle"] == 700, p
PY

# A record trigger in a served session: its packet inside the output directory, replaying.
cat > r.trig <<'TRIG'
trigger late shots 1
  when r_waiting > 150
  do record late.bpk
end
TRIG
start_server serve2.out --design "$vd" --triggers r.trig --listen "unix:$work/t.sock" \
  --output-dir out2
printf 'continue\ntrigger list\n' > c.bud
"$bud" attach "$addr" -x c.bud --batch > trig.txt 2>&1 || { cat trig.txt >&2; fail "attach"; }
stop_server
[ -s out2/late.bpk ] || { cat trig.txt serve2.out >&2; fail "the record action wrote nothing"; }
"$bud" replay --json out2/late.bpk > late.json 2> /dev/null || true
grep -q '"recorded_symptom":{[^}]*"kind":"cycle-limit"' late.json ||
  { cat late.json >&2; fail "the trigger's packet"; }

# A design packet served: the recorded run, its overrides and seed.
start_server serve3.out --packet whole.bpk --listen "unix:$work/p.sock" --output-dir out3
"$bud" attach "$addr" -x s.bud --batch > packet.txt 2>&1 || { cat packet.txt >&2; fail "attach"; }
stop_server
diff <(view local.txt) <(view packet.txt) > p.diff ||
  { cat p.diff >&2; fail "the served packet differs from the recorded session"; }

# Bad input. An intervention before the stop: refused with its cycle, nothing written.
printf 'step 10\nforce rst_n 0\nstep 10\nrecord start f.bpk\nstep 10\nrecord stop\n' > f.bud
expect 1 "the session changed the run at cycle 10" "$bud" debug --design "$vd" -x f.bud --batch
[ ! -e f.bpk ] || fail "a recording with an intervention was written"
rc=0; "$bud" serve --json --design nowhere.toml --listen "unix:$work/n.sock" > e1.json 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q '"error"' e1.json && grep -q "nowhere.toml" e1.json ||
  { cat e1.json >&2; fail "a missing design file (exit $rc)"; }
rc=0; "$bud" serve --json --define X=1 --listen "unix:$work/n.sock" > e2.json 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "need --design" e2.json || { cat e2.json >&2; fail "--define alone"; }
echo "design_serve_e2e: ok"
