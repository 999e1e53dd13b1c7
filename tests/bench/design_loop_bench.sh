#!/usr/bin/env bash
# `bud minimize` on a design packet of each example fault (docs/performance.md, "Design files"):
# candidates, simulated cycles, wall seconds and what was reduced. Models are built (and the
# packet bisected once) before the timed run, so the seconds are the search's, not Verilator's.
# Usage: tests/bench/design_loop_bench.sh [BUILD_DIR] [SCENARIO...]   (SCENARIO: example:DEFINE)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bud="$(readlink -f "${1:-$root/build}")/bud"
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
  scenarios=(vec_dma:BUG_NO_SATURATE vec_dma:BUG_DROP_LAST_BEAT fir_stream:BUG_SKIP_TAP3
             fir_stream:BUG_IGNORE_READY)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export BUD_DESIGN_CACHE="$work/cache"
cd "$work"
echo "| packet | candidates (kept) | simulated cycles | wall s | s / candidate | reduced (before -> after) | run cycles | packet bytes |"
echo "|---|---|---|---|---|---|---|---|"
for sc in "${scenarios[@]}"; do
  ex=${sc%%:*} bug=${sc#*:}
  rm -rf d && cp -r "$root/examples/designs/$ex" d && rm -f d/*.bin
  rc=0; "$bud" design run d/"$ex".toml --define "$bug" --record p.bpk > /dev/null 2>&1 || rc=$?
  [ "$rc" = 1 ] || { echo "$sc: the fault does not fail (exit $rc)" >&2; exit 1; }
  rm -rf d
  "$bud" bisect p.bpk > /dev/null || true  # builds the good side's model
  s=$(date +%s.%N)
  "$bud" minimize p.bpk -o m.bpk --json > m.json
  e=$(date +%s.%N)
  python3 - m.json "$sc" "$s" "$e" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
wall = float(sys.argv[4]) - float(sys.argv[3])
r = {x["what"]: x for x in m["reductions"]}
red = ", ".join("%s %d -> %d %s" % (x["what"], x["before"], x["after"], x["unit"])
                for x in m["reductions"] if x["what"] not in ("run cycles", "max cycles"))
rc = r["run cycles"]
print("| %s | %d (%d) | %s | %.1f | %.2f | %s | %s -> %s | %s -> %s |" % (
    sys.argv[2], m["candidates"], m["kept"], format(m["simulated_cycles"], ","), wall,
    wall / max(m["candidates"], 1), red, format(rc["before"], ","), format(rc["after"], ","),
    format(m["bytes_before"], ","), format(m["bytes_after"], ",")))
PY
done
