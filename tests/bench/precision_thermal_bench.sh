#!/usr/bin/env bash
# The INT8-vs-BF16 thermal case study of issue 17 (docs/power.md, "Precision under a thermal
# clamp"): one workload at int8 and at BF16, each without and with the energy table's thermal
# model. Nominal throughput is inferences per second at the table's clock without the clamp,
# sustained is with it; the gain of int8 over BF16 is read at both. Deterministic: every figure
# comes from the RTL run's counters and the table (no wall clock).
# Then the same under a serving load (docs/serving.md, "Thermal clamp under load"): `bud
# serve-load` at p99 <= SLA_US (default 4000 us), one request per batch, without and with the
# thermal model over the serving timeline; the sustained requests/s and requests/J at the SLA.
# With no ENERGY_TABLE it runs twice: the default table, and the same table with the extra energy
# of a BF16 MAC lane (`macs_issued_bf16`) set to 0 - a BF16 lane costing what an int8 lane costs
# - which is where the direction of the domain documents' case appears.
#   tests/bench/precision_thermal_bench.sh [BUILD_DIR] [WORKLOAD] [ENERGY_TABLE]
set -euo pipefail
build=${1:-build}
work=${2:-compute_bound}
table=${3:-}
bud="$build/bud"
cmake --build "$build" --target bud -j "$(nproc)" >/dev/null
py=/usr/bin/python3
root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -z $table ]]; then
  shared=$(mktemp --suffix=.textpb)
  trap 'rm -f "$shared"' EXIT
  sed 's/counter: "macs_issued_bf16" pj: [0-9.]*/counter: "macs_issued_bf16" pj: 0/' \
    "$root/power/tables/npu_45nm.textpb" >"$shared"
  echo "### default table (power/tables/npu_45nm.textpb)"
  "$0" "$build" "$work" "$root/power/tables/npu_45nm.textpb"
  echo
  echo "### the same table, a BF16 MAC lane at the int8 lane's energy (macs_issued_bf16: 0 pJ)"
  "$0" "$build" "$work" "$shared"
  exit 0
fi
extra=(--energy-table "$table")

run() {  # run PRECISION -> `bud profile --thermal --json`
  "$bud" profile "$work" --precision "$1" --thermal "${extra[@]}" --json
}
"$py" - "$work" <(run int8) <(run bf16) <<'PY'
import json, sys
work, files = sys.argv[1], sys.argv[2:]
rows = {}
for name, path in zip(["int8", "bf16"], files):
    p = json.load(open(path))["profile"]
    rows[name] = dict(e=p["energy"]["run"], t=p["thermal"])
print(f"## {work}: int8 vs BF16, nominal vs sustained under the thermal clamp\n")
print("| precision | nominal cycles | sustained cycles | nominal inf/s | sustained inf/s | clamped | clamp events | peak C | W | inferences/J |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k, r in rows.items():
    t, e = r["t"], r["e"]
    print(f"| {k} | {t['nominal_cycles']:,} | {t['sustained_cycles']:,} |"
          f" {t['nominal_inferences_per_second']:,.0f} | {t['sustained_inferences_per_second']:,.0f} |"
          f" {100 * t['clamped_fraction']:.1f}% | {t['clamp_events']} | {t['peak_mc'] / 1000:.1f} |"
          f" {e['watts']:.3f} | {e['inferences_per_joule']:,.0f} |")
i8, b16 = rows["int8"]["t"], rows["bf16"]["t"]
nominal = i8["nominal_inferences_per_second"] / b16["nominal_inferences_per_second"]
sustained = i8["sustained_inferences_per_second"] / b16["sustained_inferences_per_second"]
perf_w = rows["int8"]["e"]["inferences_per_joule"] / rows["bf16"]["e"]["inferences_per_joule"]
verdict = "the clamp cuts int8's gain" if sustained < nominal else "the clamp widens int8's gain"
print(f"\nint8 over BF16: nominal {nominal:.2f}x, sustained {sustained:.2f}x ({verdict}); "
      f"inferences/J {perf_w:.2f}x")
PY

serve() {  # serve PRECISION [--thermal] -> `bud serve-load --json`
  "$bud" serve-load "$work" --precision "$1" "${@:2}" "${extra[@]}" --sla-p99-us "${SLA_US:-4000}" \
    --max-batch 1 --requests 400 --json \
    --load 0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1
}
"$py" - "$work" "${SLA_US:-4000}" <(serve int8) <(serve int8 --thermal) <(serve bf16) \
  <(serve bf16 --thermal) <<'PY'
import json, sys
work, sla, files = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = {}
for key, path in zip([("int8", False), ("int8", True), ("bf16", False), ("bf16", True)], files):
    s = json.load(open(path))["sweep"]
    i = s["sustained_point"]
    rows[key] = s["points"][i] if i is not None else None
print(f"\n## {work} served at p99 <= {sla} us: without and with the thermal clamp\n")
print("| precision | clamp | sustained req/s | load | p99 us | clamped | W | requests/J |")
print("|---|---|---|---|---|---|---|---|")
for (p, t), r in rows.items():
    if r is None:
        print(f"| {p} | {'on' if t else 'off'} | none meets the SLA | | | | | |")
        continue
    clamped = f"{100 * r['thermal']['clamped_fraction']:.1f}%" if t else "-"
    print(f"| {p} | {'on' if t else 'off'} | {r['served_rps']:,.0f} | {r['load']:.2f} |"
          f" {r['latency_us']['p99']:,.0f} | {clamped} | {r['watts']:.3f} | {r['requests_per_joule']:,.0f} |")
if all(rows.values()):
    for t in (False, True):
        g = rows[("int8", t)]["served_rps"] / rows[("bf16", t)]["served_rps"]
        e = rows[("int8", t)]["requests_per_joule"] / rows[("bf16", t)]["requests_per_joule"]
        print(f"\nint8 over BF16 at the SLA, clamp {'on' if t else 'off'}: requests/s {g:.2f}x, "
              f"requests/J {e:.2f}x", end="")
    print()
PY
