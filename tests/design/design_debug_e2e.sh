#!/usr/bin/env bash
# `bud debug --design FILE` as a bring-up engineer uses it on the vec_dma example: a breakpoint
# on a design counter, time travel (goto, reverse-continue to a watchpoint), a checkpoint that
# restores to the same values, an FST window GTKWave's fst2vcd reads, a force, --json per
# command, and bad input with one clear error. Usage: design_debug_e2e.sh BUD SOURCE_DIR WORK_DIR
set -euo pipefail
bud=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
design=$src/examples/designs/vec_dma/vec_dma.toml
c=(--design-cache "$work/cache")
fail() { echo "design_debug_e2e: $*" >&2; exit 1; }

cat > s.bud <<'BUD'
break if r_waiting > 150
continue
print r_waiting
checkpoint at_break
goto 100
print r_waiting
delete 1
watch m_axi_awvalid
continue
reverse-continue
wave dump 100 300 w.fst
restore at_break
print r_waiting
delete 2
continue
info stages
BUD
"$bud" debug "${c[@]}" --design "$design" -x s.bud --batch > out.txt 2>&1 || { cat out.txt >&2; fail "script failed"; }
grep -q "stopped at cycle [0-9]*: breakpoint 1 (r_waiting > 150)" out.txt || fail "breakpoint"
[ "$(grep -c '^r_waiting = 151 ' out.txt)" = 2 ] || { cat out.txt >&2; fail "restore did not give the break's value back"; }
grep -q "stopped at cycle 100: goto" out.txt || fail "goto"
grep -q "watchpoint 2 (m_axi_awvalid: 0x0 -> 0x1)" out.txt || fail "watchpoint forward"
grep -q "watchpoint 2 (m_axi_awvalid: 0x1 -> 0x0)" out.txt || fail "reverse-continue"
grep -q "stopped at cycle [0-9]*: finished" out.txt || fail "finish"
grep -q "^w .*64 transactions" out.txt || fail "info stages after the run"
if command -v fst2vcd > /dev/null; then
  [ "$(fst2vcd w.fst | grep -c '^#')" -ge 400 ] || fail "the FST does not hold 200 cycles"
fi

# --json: one object per command; a forced reset holds the design in reset.
printf 'force rst_n 0\nstep 50\nprint busy_cycles\n' > f.bud
"$bud" debug "${c[@]}" --design "$design" -x f.bud --batch --json > f.json
python3 - f.json <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == 3 and all(l["ok"] for l in lines), lines
assert lines[1]["cycle"] == 50
assert lines[2]["data"]["name"] == "busy_cycles" and lines[2]["data"]["value"] == 0, lines[2]
PY

# A trigger file on the streaming example: a one-shot log, and captures whose window is
# re-executed on a replica of the design (an FST of its signals, a log in its stage names).
cat > d.trig <<'TRIG'
trigger starved shots 1
  when in_starved >= 100
  do log "source starved 100 cycles"
end
trigger bp shots 2
  when rate(out_backpressured, 256) > 0.2 && count(1) >= 256
  do capture pre 64 post 64
end
TRIG
printf 'continue\ntrigger list\n' > t.bud
"$bud" debug "${c[@]}" --design "$src/examples/designs/fir_stream/fir_stream.toml" --triggers d.trig \
  --capture-dir caps -x t.bud --batch > trig.txt 2>&1 || { cat trig.txt >&2; fail "triggers"; }
grep -q "1 hits\]  trigger starved" trig.txt || { cat trig.txt >&2; fail "the log trigger"; }
[ -s caps/bp-1.fst ] && [ -s caps/bp-2.fst ] || fail "no captures"
grep -q "^[0-9]* egress #[0-9]* 4 bytes" caps/bp-1.log || { cat caps/bp-1.log >&2; fail "capture log"; }
if command -v fst2vcd > /dev/null; then
  fst2vcd caps/bp-1.fst > bp-1.vcd  # not piped into grep -q: pipefail would see SIGPIPE
  grep -q "m_axis_tdata" bp-1.vcd || fail "the capture FST lacks the design's signals"
fi

# Bad input: a missing design file is exit 2 with a JSON error; --define without --design too.
rc=0; "$bud" debug --json --design nowhere.toml --batch > e1.json 2>/dev/null || rc=$?
[ "$rc" = 2 ] && grep -q '"error"' e1.json && grep -q "nowhere.toml" e1.json || fail "missing design file"
rc=0; "$bud" debug --json --define X=1 --batch > e2.json 2>/dev/null || rc=$?
[ "$rc" = 2 ] && grep -q "need --design" e2.json || fail "--define without --design"
echo "design_debug_e2e: ok"
