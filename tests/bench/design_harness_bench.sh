#!/usr/bin/env bash
# Simulated cycles per second of both example designs (fir_stream, vec_dma) under a hand-written
# testbench loop, design/DesignHarness, the harness with its interpreted fallback,
# design/DesignEmulator and the harness with design/HandshakeProfile, side by side in one run
# (docs/performance.md, "Design files"), as ratios to the bare loop: the best round's, and the
# median (and range) of the per-round ratios.
#
# Usage: tests/bench/design_harness_bench.sh [BUILD_DIR] [REPS] [ROUNDS] [BEFORE_BENCH]
#   BEFORE_BENCH: another build of bud-bench-design (e.g. of main): its rounds alternate with
#   this build's, one process a round each, and its figures are printed beside this build's.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
reps="${2:-10}"
rounds="${3:-7}"
before="${4:-}"
cmake --build "$build" --target bud-bench-design > /dev/null
after="$build/tests/design/bud-bench-design"
cache="$(mktemp -d)"
out="$(mktemp)"
trap 'rm -rf "$cache" "$out"' EXIT
load0="$(cut -d' ' -f1-3 /proc/loadavg)"
# One round first, untimed, so that both builds find the models (and probes) built.
"$after" "$root" "$cache" 1 1 > /dev/null
[ -n "$before" ] && "$before" "$root" "$cache" 1 1 > /dev/null
if [ -n "$before" ]; then
  for _ in $(seq "$rounds"); do
    "$after" "$root" "$cache" "$reps" 1 | sed 's/^round /after /' >> "$out"
    "$before" "$root" "$cache" "$reps" 1 | sed 's/^round /before /' >> "$out"
  done
else
  "$after" "$root" "$cache" "$reps" "$rounds" | sed 's/^round /after /' >> "$out"
fi
load1="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$load0" "$load1" "$reps" "$rounds" <<'EOF'
import collections, statistics, sys
path, load0, load1, reps, rounds = sys.argv[1:]
rates = collections.defaultdict(list)  # (build, design, loop) -> cycles/s per round
cycles = {}
for line in open(path):
    build, design, loop, n, s = line.split()
    rates[(build, design, loop)].append(int(n) / float(s))
    cycles[(build, design, loop)] = int(n)
builds = [b for b in ("after", "before") if any(k[0] == b for k in rates)]
labels = {"bare": "bare testbench", "harness": "DesignHarness", "interp": "DesignHarness, interpreted probe",
          "emulator": "DesignEmulator", "profile": "DesignHarness + HandshakeProfile",
          "spans": "DesignHarness + HandshakeProfile with spans"}
def cell(build, design, loop):
    r = rates.get((build, design, loop))
    if not r:
        return "-", "-", "-"
    bare = rates[(build, design, "bare")]
    per_round = sorted(x / y for x, y in zip(r, bare))
    return (f"{max(r) / 1e6:.2f} M", f"{max(r) / max(bare):.2f}",
            f"{statistics.median(per_round):.2f} ({per_round[0]:.2f}-{per_round[-1]:.2f})")
print(f"load average {load0} before, {load1} after; {rounds} rounds, best and median of the per-round ratios")
for design in ("fir_stream", "vec_dma"):
    n = cycles.get(("after", design, "harness"), 0)
    print(f"\n{design} ({n} simulated cycles a round)\n")
    head = "| loop |" + "".join(f" {b} cycles/s | {b} vs bare (best) | {b} vs bare (median, range) |" for b in builds)
    print(head)
    print("|---|" + "---|---|---|" * len(builds))
    for loop in ("bare", "harness", "interp", "emulator", "profile", "spans"):
        if not any((b, design, loop) in rates for b in builds):
            continue
        row = f"| {labels[loop]} |"
        for b in builds:
            row += " %s | %s | %s |" % cell(b, design, loop)
        print(row)
EOF
