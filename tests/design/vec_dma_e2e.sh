#!/usr/bin/env bash
# The vec_dma example as a user runs it (docs/designs.md): firmware on the AXI4-Lite port, AXI4
# bursts served from a memory region, the result checked in memory; each FAULTS.md scenario ends
# with its documented exit status and message. Usage: vec_dma_e2e.sh BUD SOURCE_DIR WORK_DIR
set -euo pipefail
bud=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
cp -r "$src/examples/designs/vec_dma" vd
c=(--cache "$work/cache")
fail() { echo "vec_dma_e2e: $*" >&2; exit 1; }

# PASS from another directory (paths in the file are the design file's), JSON with the port's
# bursts; another seed changes the DRAM timing but not a stage digest.
"$bud" design run "${c[@]}" --json vd/vec_dma.toml > pass1.json
"$bud" design run "${c[@]}" --json --seed 7 vd/vec_dma.toml > pass2.json
python3 - pass1.json pass2.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["passed"] and b["passed"], (a["message"], b["message"])
m = a["memories"][0]
assert (m["read_bursts"], m["bytes_read"], m["bytes_written"]) == (6, 512, 512), m
assert a["cycles"] != b["cycles"], "the seed must change the DRAM timing"
assert [s["digest"] for s in a["stages"]] == [s["digest"] for s in b["stages"]]
assert a["firmware_accesses"] == 12, a["firmware_accesses"]
PY
"$bud" design run "${c[@]}" vd/vec_dma.toml > pass.txt
grep -q "result     PASS: memory 'ddr'" pass.txt || fail "table PASS"

expect() {  # expect EXIT PATTERN ARGS...: the run exits EXIT and prints PATTERN (stdout+stderr)
  local want=$1 pat=$2; shift 2
  local rc=0
  "$bud" design run "${c[@]}" "$@" > out.txt 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat out.txt >&2; fail "$* exited $rc, expected $want"; }
  grep -q -- "$pat" out.txt || { cat out.txt >&2; fail "$* did not print: $pat"; }
}
# FAULTS.md: the three scenarios.
expect 1 "FAIL: memory 'ddr' differs from the reference at byte 40" vd/vec_dma.toml --define BUG_DROP_LAST_BEAT
expect 1 "FAIL: memory 'ddr' differs from the reference at byte 2 " vd/vec_dma.toml --define BUG_NO_SATURATE
expect 10 "firmware.fw:11: wait_irq timed out after 20000 cycles" vd/vec_dma.toml --define BUG_NO_IRQ
expect 10 '"error":"firmware_timeout"' --json vd/vec_dma.toml --define BUG_NO_IRQ

# Bisect on the design's stage ladder: each fault is named at the stage FAULTS.md gives.
bisect() {  # bisect DEFINE STAGE PERSISTENT
  "$bud" design bisect "${c[@]}" --json vd/vec_dma.toml --bad-define "$1" > bisect.json || true
  python3 - bisect.json "$2" "$3" <<'PY'
import json, sys
r, stage, persistent = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3] == "1"
if stage == "none":
    assert r["first_failing_stage"] is None and r["ending_differs"], r
else:
    assert r["first_failing_stage"] == stage and r["persistent"] == persistent, r
    first = [s for s in r["stages"] if s["differs"]][0]
    assert first["values"] and any(v["good"] != v["bad"] for v in first["values"]), first
PY
}
bisect BUG_NO_SATURATE compute 1
bisect BUG_DROP_LAST_BEAT w 0
bisect BUG_NO_IRQ none 0
rc=0; "$bud" design bisect "${c[@]}" vd/vec_dma.toml > same.txt || rc=$?
[ "$rc" = 0 ] && grep -q "no stage differs" same.txt || fail "bisect of a design against itself"

# A destination the region does not hold: an AXI run error at the port's table, exit 11.
sed -i 's/^write 0x0C @ddr+0x10D0/write 0x0C @ddr+0x1F00/' vd/firmware.fw
expect 11 "vec_dma.toml:24:1: axi4 port 'mem' channel AW, address 0x80002ed8" vd/vec_dma.toml
expect 11 '"error":"axi_error"' --json vd/vec_dma.toml
# A firmware typo is a bad design file (exit 2) at the script's line and column, for check too.
sed -i 's/^write 0x10 512/wrte 0x10 512/' vd/firmware.fw
expect 2 "vd/firmware.fw:6:1: unknown command 'wrte'" vd/vec_dma.toml
rc=0; "$bud" design check vd/vec_dma.toml > check.txt 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "firmware.fw:6:1: unknown command 'wrte'" check.txt || fail "check of a bad script"
echo "vec_dma_e2e: ok"
