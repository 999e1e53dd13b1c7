#!/usr/bin/env bash
# Design packets as a user makes and replays them (docs/designs.md, "Recording and replaying a
# design"): a PASS of fir_stream recorded from a copy that is then deleted replays from another
# directory (the same bytes when recorded twice); a vec_dma fault (exit 1) reproduces bit-exactly;
# another Verilator (its version line is part of the revision) is refused with exit 125; a
# truncated or corrupted packet is one error naming the byte offset; --json on every path.
# Usage: design_packet_e2e.sh BUD SOURCE_DIR WORK_DIR
set -euo pipefail
bud=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/elsewhere" && cd "$work"
export BUD_DESIGN_CACHE="$work/cache"  # models and the packets' private copies
fail() { echo "design_packet_e2e: $*" >&2; exit 1; }
# expect EXIT PATTERN CMD...: CMD exits EXIT and prints PATTERN (stdout+stderr)
expect() {
  local want=$1 pat=$2; shift 2
  local rc=0
  "$@" > out.txt 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat out.txt >&2; fail "$* exited $rc, expected $want"; }
  grep -q -- "$pat" out.txt || { cat out.txt >&2; fail "$* did not print: $pat"; }
}

# A PASS, recorded twice from a copy of the example: the same bytes.
tmp=$(mktemp -d "$work/copy.XXXXXX")
cp -r "$src/examples/designs/fir_stream" "$tmp/fs"
"$bud" design run --json "$tmp/fs/fir_stream.toml" --seed 5 --record fir.bpk > rec.json
grep -q '"passed":true' rec.json || fail "fir_stream did not pass"
grep -q '"packet":{"path":"fir.bpk","bytes":[0-9]' rec.json || fail "no packet in the JSON"
"$bud" design run "$tmp/fs/fir_stream.toml" --seed 5 --record fir2.bpk > /dev/null 2>&1
cmp fir.bpk fir2.bpk || fail "two recordings of one run differ"
# `bud run --design` is the same run (given bud design run's default --max-cycles).
"$bud" run --design "$tmp/fs/fir_stream.toml" --seed 5 --max-cycles 10000000 --record fir3.bpk \
  > /dev/null 2>&1
cmp fir.bpk fir3.bpk || fail "bud run --design recorded another packet"
# Another seed is another run: another packet.
"$bud" design run "$tmp/fs/fir_stream.toml" --seed 6 --record fir6.bpk > /dev/null 2>&1
if cmp -s fir.bpk fir6.bpk; then fail "the seed is not in the packet"; fi

# The copy is gone; the packet replays from another directory.
rm -rf "$tmp"
cd elsewhere
expect 0 "fir.bpk: passed: passes bit-exactly: PASS: sink 'sums'" "$bud" replay ../fir.bpk
"$bud" replay --json ../fir.bpk > replay.json
python3 - replay.json ../rec.json <<'PY'
import json, sys
r, rec = (json.load(open(f)) for f in sys.argv[1:])
assert r["exit_code"] == 0 and "error" not in r, r
p = r["packets"][0]
assert p["verdict"] == "passed" and p["recorded_revision"] == rec["revision"], p
assert p["end_cycle"] == rec["cycles"], (p["end_cycle"], rec["cycles"])
assert p["digests_checked"] == 2 + len(rec["stages"]) + 1, p  # state, output, stages, one sink
PY
cd ..

# A fault (FAULTS.md): exit 1 when recorded, reproduced bit-exactly (exit 1) on replay.
cp -r "$src/examples/designs/vec_dma" vd
expect 1 "FAIL: memory 'ddr' differs from the reference at byte 2 " \
  "$bud" design run vd/vec_dma.toml --define BUG_NO_SATURATE --record sat.bpk
expect 0 "recorded clean.bpk" "$bud" design run vd/vec_dma.toml --record clean.bpk
rm -rf vd
expect 0 "run          seed 1, max-cycles 10000000, --define BUG_NO_SATURATE" \
  "$bud" packet inspect sat.bpk
expect 1 "sat.bpk: reproduced: symptom reproduced bit-exactly: FAIL: memory 'ddr' differs" \
  "$bud" replay sat.bpk
rc=0; "$bud" replay --json sat.bpk clean.bpk > both.json || rc=$?
[ "$rc" = 1 ] || fail "a corpus with a reproduced symptom exited $rc"
python3 - both.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sat, clean = r["packets"]
assert sat["verdict"] == "reproduced" and clean["verdict"] == "passed", r
assert sat["recorded_symptom"]["kind"] == "result-mismatch", sat
assert sat["replay_symptom"]["message"] == sat["recorded_symptom"]["message"], sat
# The define is part of the model: the faulty run is another revision.
assert sat["recorded_revision"] != clean["recorded_revision"], r
PY

# Another Verilator on PATH (only its version line differs): the embedded files build another
# revision, and the packet is refused as NPU replay refuses one (exit 125).
mkdir -p fakebin
real=$(command -v verilator)
cat > fakebin/verilator <<EOF
#!/bin/sh
if [ "\$1" = "--version" ]; then echo "Verilator 99.0 (another installation)"; exit 0; fi
exec "$real" "\$@"
EOF
chmod +x fakebin/verilator
expect 125 "fir.bpk: recorded with design revision [0-9a-f]*, its embedded files build revision" \
  env PATH="$work/fakebin:$PATH" "$bud" replay fir.bpk
rc=0; env PATH="$work/fakebin:$PATH" "$bud" replay --json fir.bpk > mismatch.json || rc=$?
[ "$rc" = 125 ] || fail "revision mismatch --json exited $rc"
grep -q '"error":"incompatible"' mismatch.json || fail "revision mismatch: no JSON error"
grep -q 'pass --allow-revision-mismatch' mismatch.json || fail "revision mismatch: no hint"

# A truncated packet (a copy cut inside its files record) and a corrupted one.
head -c 600 fir.bpk > cut.bpk
expect 125 "cut.bpk: incomplete packet (byte [0-9]*: record truncated" "$bud" replay cut.bpk
rc=0; "$bud" replay --json cut.bpk > cut.json || rc=$?
[ "$rc" = 125 ] && grep -q '"error":"incompatible"' cut.json || fail "truncated --json"
cp fir.bpk flip.bpk
printf '\x55' | dd of=flip.bpk bs=1 seek=400 conv=notrunc status=none
expect 125 "flip.bpk: byte [0-9]*: checksum mismatch" "$bud" replay flip.bpk
rc=0; "$bud" replay --json missing.bpk > missing.json || rc=$?
[ "$rc" = 125 ] && grep -q '"error":"incompatible"' missing.json || fail "missing packet --json"
# A packet that cannot be written is bad input, in JSON too.
expect 2 '"error":"bad_input"' "$bud" design run --json "$src/examples/designs/fir_stream/fir_stream.toml" \
  --out-dir "$work" --record "$work/no/such/dir/p.bpk"
echo "design_packet_e2e: ok"
