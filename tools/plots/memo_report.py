"""`bud memo --html`: the review memo of a performance change as one page - the memo's sections,
the per-layer cycle change and the slice's top-down shares before and after, each figure naming
the artifacts it comes from, and energy and perf/W with their hypotheses when both profiles carry
an energy account (docs/profiling.md, "Review memo"). Input: `bud memo --json`."""

import bud_plots as bp

doc = bp.read_input()
memo = doc["memo"]
cmp_ = doc["compare"]
base_file, new_file = memo["artifacts"]["base"], memo["artifacts"]["new"]
src = f"From {base_file} (base) and {new_file} (new)."

page = bp.Page(f"Review memo: {memo['workload']}",
               f"base {base_file}, new {new_file}; run cycles {memo['run_cycles']['base']:,.0f} "
               f"-> {memo['run_cycles']['new']:,.0f} ({100 * memo['run_cycles']['change']:+.1f}%)")

page.heading("Symptom and first failing stage")
if not memo["diverged"]:
    page.paragraph("No layer diverges persistently beyond the tolerance: nothing to explain.")
else:
    sc = memo["slice_cycles"]
    page.paragraph(f"Slice {memo['slice']}: {sc['base']:,.0f} -> {sc['new']:,.0f} cycles "
                   f"({100 * sc['change']:+.1f}%), a {memo['divergence_kind']} divergence: the run's "
                   f"clock stays diverged from this layer on.")

page.heading("Energy and perf/W")
energy = memo.get("energy")
if not energy:
    page.paragraph("Energy " + memo.get("energy_note", "not compared") + ".")
else:
    rows = [("energy per inference (uJ)", energy["energy_per_inference_uj"]),
            ("average power (W)", energy["watts"]),
            ("inferences/J", energy["inferences_per_joule"]),
            ("TOPS/W", energy["tops_per_watt"])]
    fig, ax = bp.figure(height=2.4)
    ax.barh(range(len(rows)), [100 * d["change"] for _, d in rows],
            color=[bp.PALETTE[2] if (d["change"] > 0) == (name.startswith(("inf", "TOPS")))
                   else bp.PALETTE[3] for name, d in rows])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([name for name, _ in rows])
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("change, new against base (%)")
    eb, en = energy["base"], energy["new"]
    page.figure(fig, f"Energy and perf/W per inference (green: better, red: worse), from "
                     f"$.profile.energy of {base_file} ({eb['frequency_mhz']:.0f} MHz, "
                     f"{eb['voltage']} V) and {new_file} ({en['frequency_mhz']:.0f} MHz, "
                     f"{en['voltage']} V).")
    page.table(["figure", "base", "new", "change"],
               [[name, d["base"], d["new"], f"{100 * d['change']:+.1f}%"] for name, d in rows])
    for h in memo.get("energy_hypotheses", []):
        kind = "Leading energy hypothesis" if h["leading"] else "Competing"
        page.paragraph(f"{kind}: {h['mechanism']} - {h['statement']}.")
        page.table(["evidence", "base", "new"],
                   [[e["name"], e["base"], e["new"]] for e in h["evidence"]])

layers = cmp_["layers"]
fig, ax = bp.figure()
names = [l["name"] for l in layers]
changes = [100 * l["cycles"]["change"] for l in layers]
colors = [bp.PALETTE[3] if l["name"] == memo.get("slice") else bp.PALETTE[0] for l in layers]
ax.bar(range(len(layers)), changes, color=colors)
ax.axhline(0, color="black", linewidth=0.8)
tol = 100 * cmp_["tolerance"]
ax.axhline(tol, color="gray", linestyle="--", linewidth=0.8, label=f"tolerance +/-{tol:.0f}%")
ax.axhline(-tol, color="gray", linestyle="--", linewidth=0.8)
ax.set_xticks(range(len(layers)))
ax.set_xticklabels(names, rotation=30 if len(names) > 6 else 0,
                   ha="right" if len(names) > 6 else "center")
ax.set_ylabel("cycles change (%)")
ax.legend(fontsize=8)
page.figure(fig, "Per-layer cycle change, new against base (the slice in red). " + src)

if memo["diverged"] and memo["hypotheses"]:
    page.heading("Mechanism")
    hs = memo["hypotheses"]
    fig, ax = bp.figure()
    labels = [f"{h['class']}/{h['sub_class']}" for h in hs]
    ax.barh(range(len(hs)), [h["share_change_bp"] / 100 for h in hs],
            color=[bp.PALETTE[3] if h["leading"] else bp.PALETTE[1] for h in hs])
    ax.set_yticks(range(len(hs)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"share of {memo['slice']}'s MAC slots, new - base (points)")
    page.figure(fig, "Top-down classes whose share moved: the leading hypothesis (red) and the "
                     "competing ones, with the evidence below. " + src)
    for h in hs:
        kind = ("Leading hypothesis" if h["leading"] else
                "Ruled out (its cycles did not move with the change)" if h.get("ruled_out") else
                "Competing hypothesis")
        page.paragraph(f"{kind}: {h['class']} / {h['sub_class']}, share "
                       f"{h['share_change_bp'] / 100:+.1f} points, {h['cycles_change']:+,} cycles; "
                       f"rule {h['rule']}: {h['advice']}")
        if h["evidence"]:
            page.table(["evidence", "base", "new"],
                       [[e["counter"], e["base"], e["new"]] for e in h["evidence"]])

page.heading("Tags")
tb, tn = memo["tags"]["base"], memo["tags"]["new"]
page.table(["", "base", "new"],
           [["model revision", tb["model_revision"], tn["model_revision"]],
            ["data seed", tb["seed"], tn["seed"]],
            ["memory seed", tb["mem_seed"], tn["mem_seed"]],
            ["array MACs/cycle", tb["array_macs"], tn["array_macs"]],
            ["run cycles", tb["cycles"], tn["cycles"]]])

page.heading("Smallest reversible change")
page.paragraph(memo["change"])
if memo.get("expected"):
    page.paragraph("Expected movement: " + memo["expected"] + ".")
page.heading("Regression risk")
for r in memo["risks"]:
    page.paragraph(r)
page.write()
