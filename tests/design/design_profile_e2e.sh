#!/usr/bin/env bash
# `bud profile --design` on both examples as a user runs it (docs/designs.md, "Profiling a
# design"): the table, --json whose four states sum to 100% of cycles per handshake, busy
# transfers equal to the stage transactions `bud design run --json` reports, a Chrome trace that
# parses with a track per handshake and counter tracks, the reading following a slow sink, a slow
# source and BUG_NO_IRQ, and bad input with its exit status and a JSON error.
# Usage: design_profile_e2e.sh BUD SOURCE_DIR WORK_DIR
set -euo pipefail
bud=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
cp -r "$src/examples/designs/fir_stream" fir && rm -f fir/sums.bin
cp -r "$src/examples/designs/vec_dma" vd
cache=(--design-cache "$work/cache")
fail() { echo "design_profile_e2e: $*" >&2; exit 1; }

# The table.
"$bud" profile --design fir/fir_stream.toml "${cache[@]}" > fir.txt
for pat in "^handshake  *kind  *busy  *starved  *backpres  *idle  *transfers  *reading" \
           "^ingress  *stage" "^egress  *stage" "^samples_in  *4096" \
           "^bottleneck downstream: .*sink 'sums' limits throughput" "^result     PASS"; do
  grep -q -- "$pat" fir.txt || { cat fir.txt >&2; fail "fir table lacks: $pat"; }
done
test ! -e fir/sums.bin || fail "a profile must not write the sink's file"

# --json and the trace, on both examples, against `bud design run --json` of the same seed.
check() {  # check NAME TOML: profile.json, trace.json and run.json agree
  local name=$1 toml=$2
  "$bud" profile --design "$toml" "${cache[@]}" --json --trace "$name.trace.json" --interval 64 \
    > "$name.profile.json"
  "$bud" design run --cache "$work/cache" --json "$toml" > "$name.run.json"
  python3 -m json.tool "$name.trace.json" > /dev/null || fail "$name trace is not JSON"
  python3 - "$name.profile.json" "$name.run.json" "$name.trace.json" <<'PY'
import json, sys
prof, run, trace = (json.load(open(f)) for f in sys.argv[1:])
p = prof["profile"]
assert prof["passed"] and run["passed"], (prof.get("message"), run["message"])
assert prof["cycles"] == run["cycles"] == p["cycles"], (prof["cycles"], run["cycles"])
for h in p["handshakes"]:
    assert sum(h["cycles"].values()) == p["cycles"], h
    assert abs(sum(h["percent"].values()) - 100.0) < 1e-9, h
    assert h["transfers"] == h["cycles"]["busy"], h
stages = {s["name"]: s["transactions"] for s in run["stages"]}
declared = [h for h in p["handshakes"] if h["kind"] == "stage"]
assert [h["name"] for h in declared] == [s["name"] for s in run["stages"]]
for h in declared:
    assert h["transfers"] == stages[h["name"]], (h["name"], h["transfers"], stages[h["name"]])
counters = {c["name"]: c for c in p["counters"]["series"]}
for name, value in run["counters"].items():
    assert counters[name]["total"] == value, (name, counters[name]["total"], value)
    assert len(counters[name]["values"]) == len(p["counters"]["cycles"])
# Chrome trace-event format: metadata names a thread per handshake; complete events ("X") tile
# each track; counter events ("C") carry their value in args.
ev = trace["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert sorted(tracks.values()) == sorted(h["name"] for h in p["handshakes"]), tracks
covered = {}
for e in ev:
    if e["ph"] == "X":
        assert e["name"] in ("busy", "starved", "backpressured", "idle"), e
        covered[e["tid"]] = covered.get(e["tid"], 0) + e["dur"]
assert all(covered[t] == p["cycles"] for t in tracks), covered
ctr = {e["name"] for e in ev if e["ph"] == "C" and "value" in e["args"]}
assert ctr == set(counters), (ctr, set(counters))
PY
}
check fir fir/fir_stream.toml
check vd vd/vec_dma.toml
python3 - vd.profile.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["profile"]
names = [h["name"] for h in p["handshakes"]]
assert names == ["ar", "r", "compute", "aw", "w", "b", "control.aw", "control.w", "control.b",
                 "control.ar", "control.r"], names
b = p["bottleneck"]
assert (b["kind"], b["first"], b["limiter"]) == ("upstream", "r", "memory port 'mem'"), b
assert not b["mostly_waiting"], b
PY

# The reading follows the throttled side: a slow sink (downstream), a slow source (upstream).
sed -i 's/rate = 0.9 /rate = 1.0 /; s/rate = 0.75 /rate = 0.3 /' fir/fir_stream.toml
grep -q "rate = 0.3 .*sink" fir/fir_stream.toml || fail "sed: sink rate"
"$bud" profile --design fir/fir_stream.toml "${cache[@]}" --json > slow_sink.json
cp "$src/examples/designs/fir_stream/fir_stream.toml" fir/fir_stream.toml
sed -i 's/rate = 0.9 /rate = 0.3 /; s/rate = 0.75 /rate = 1.0 /' fir/fir_stream.toml
grep -q "rate = 0.3 .*offered" fir/fir_stream.toml || fail "sed: source rate"
"$bud" profile --design fir/fir_stream.toml "${cache[@]}" --json > slow_source.json
python3 - slow_sink.json slow_source.json <<'PY'
import json, sys
sink, source = (json.load(open(f))["profile"] for f in sys.argv[1:])
b = sink["bottleneck"]
assert (b["kind"], b["last"], b["limiter"]) == ("downstream", "egress", "sink 'sums'"), b
b = source["bottleneck"]
assert (b["kind"], b["first"], b["limiter"]) == ("upstream", "ingress", "source 'samples'"), b
eg = {h["name"]: h for h in source["handshakes"]}["egress"]
assert eg["cycles"]["backpressured"] == 0, eg
PY

# BUG_NO_IRQ: the data path finishes, then the firmware waits for the interrupt until it times
# out: exit 10 with the profile, and the reading says the run ended waiting.
rc=0
"$bud" profile --design vd/vec_dma.toml "${cache[@]}" --define BUG_NO_IRQ --json > noirq.json \
  2> noirq.err || rc=$?
[ "$rc" = 10 ] || fail "BUG_NO_IRQ exited $rc, expected 10"
python3 - noirq.json vd.profile.json <<'PY'
import json, sys
bad, good = (json.load(open(f)) for f in sys.argv[1:])
assert bad["error"] == "firmware_timeout" and bad["exit_code"] == 10, bad["error"]
assert "wait_irq timed out" in bad["message"], bad["message"]
b = bad["profile"]["bottleneck"]
assert b["kind"] == "waiting" and b["mostly_waiting"], b
assert good["profile"]["bottleneck"]["kind"] != "waiting"
# The same data path: the same transfers on every stage.
t = lambda d: [(h["name"], h["transfers"]) for h in d["profile"]["handshakes"] if h["kind"] == "stage"]
assert t(bad) == t(good), (t(bad), t(good))
PY
grep -q "wait_irq timed out" noirq.err || fail "BUG_NO_IRQ: no message on stderr"

# Bad input: one clear line, exit 2, one JSON error object.
expect() {  # expect EXIT PATTERN ARGS...
  local want=$1 pat=$2; shift 2
  local rc=0
  "$bud" profile "$@" > out.txt 2> err.txt || rc=$?
  [ "$rc" = "$want" ] || { cat out.txt err.txt >&2; fail "$* exited $rc, expected $want"; }
  grep -q -- "$pat" err.txt || { cat err.txt >&2; fail "$* did not say: $pat"; }
  [ "$(wc -l < err.txt)" = 1 ] || { cat err.txt >&2; fail "$*: more than one line"; }
}
expect 2 "no-such.toml" --design no-such.toml
expect 2 "no-such.toml" --design no-such.toml --json
python3 -c "import json,sys; d=json.load(open('out.txt')); assert d['error']=='bad_input' and d['exit_code']==2, d"
expect 2 "--interval must be at least 1 cycle" --design fir/fir_stream.toml --interval 0 --json
python3 -c "import json,sys; d=json.load(open('out.txt')); assert d['error']=='bad_input', d"
expect 2 "--fault does not apply with --design" --design fir/fir_stream.toml --fault x
expect 2 "--interval needs --design" conv --interval 10
expect 4 "--trace: cannot open" --design fir/fir_stream.toml "${cache[@]}" --trace "$work/no/dir/t.json"
echo "design_profile_e2e: OK"
