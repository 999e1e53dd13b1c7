"""`bud matrix --html`: the before/after matrix of one bounded change (docs/matrix.md): the
decision and its reasons, the correctness, replay-corpus and quality matrices, and every
performance cell as BASE's and NEW's samples over the memory seeds against BASE's noise band.
Input: what `bud matrix --json` prints."""

import bud_plots as bp

doc = bp.read_input()
perf = doc["performance"]
decision = doc["decision"]


def flags(c):
    return " ".join(c["flags"]) or "(defaults)"


page = bp.Page("bud matrix: before/after",
               f"BASE {doc['base']['origin']}: {flags(doc['base'])}; NEW {doc['new']['origin']}: "
               f"{flags(doc['new'])}; memory seeds {', '.join(str(s) for s in doc['mem_seeds'])}; "
               f"{doc['runs']['rtl_runs']} RTL runs, {doc['runs']['simulated_cycles']:,} "
               "simulated cycles")

page.heading(f"Decision: {decision['verdict']}")
page.paragraph(f"{decision['better']} performance cells better and {decision['worse']} worse "
               "beyond noise (noise: BASE's max - min over the memory seeds, never less than "
               f"{100 * doc['rule']['floor_fraction']:.1f}% of BASE's mean); a bounded rollout "
               f"allows mixed moves up to {100 * doc['rule']['rollout_limit']:.1f}%.")
page.table(["rule that applied (most severe first)"], [[r] for r in decision["reasons"]])
if doc["moved"]:
    page.table(["workload", "metric", "movement", "change", "owner", "mechanism"],
               [[m["workload"], m["metric"], m["movement"], f"{100 * m['change']:+.1f}%",
                 m["owner"], m["mechanism"] or "-"] for m in doc["moved"]],
               caption="Moved cells and who owns them")


def passed(ok):
    return "bit-exact" if ok else "FAIL"


page.heading("Correctness")
page.table(["workload", "precision", "BASE", "NEW", "regressed", "first failure"],
           [[c["workload"], c["precision"] or "own", passed(c["base_passed"]),
             passed(c["new_passed"]), "yes" if c["regressed"] else "", c.get("failure", "")]
            for c in doc["correctness"]],
           caption="Every run checked bit-exactly against the golden model")

if doc["corpus"]:
    def corpus_note(c):
        if "unusable" in c:
            return "cannot re-run: " + c["unusable"]
        if c["regressed"]:
            return "REGRESSED: " + c.get("new_failure", "")
        if c["fixed"]:
            return "fixed on NEW (fixes or masks): " + c.get("base_failure", "")
        if not c["base_passed"]:
            same = c.get("base_failure") == c.get("new_failure")
            return ("still fails: " if same else "FAILS DIFFERENTLY: ") + c.get("base_failure", "")
        return ""

    page.heading("Replay corpus")
    page.table(["packet", "workload", "recorded", "BASE", "NEW", "note"],
               [[c["packet"], c["workload"], "failure" if c["recorded_failure"] else "clean",
                 passed(c["base_passed"]) if "base_passed" in c else "-",
                 passed(c["new_passed"]) if "new_passed" in c else "-", corpus_note(c)]
                for c in doc["corpus"]],
               caption="Each packet's recorded run (workload, seeds, faults) under both "
                       "configurations")

if doc["quality"]:
    page.heading("Quality")
    page.table(["model", "precision", "SNR dB BASE", "SNR dB NEW", "top-1 BASE", "top-1 NEW",
                "dropped"],
               [[q["model"], q["precision"], q["base"]["snr_db"], q["new"]["snr_db"],
                 f"{100 * q['base']['top1']:.1f}%", f"{100 * q['new']['top1']:.1f}%",
                 "top-1" if q["top1_dropped"] else ("SNR" if q["snr_dropped"] else "")]
                for q in doc["quality"]],
               caption="Output against the ONNX model's fp32 network")

LABELS = {"cycles": "cycles / inference", "peak_fraction": "% of peak MACs",
          "energy_uj": "uJ / inference", "requests_per_joule": "requests / J at the SLA"}
SCALE = {"peak_fraction": 100.0}

if perf:
    page.heading("Performance")
    metrics = []
    for p in perf:
        if p["metric"] not in metrics:
            metrics.append(p["metric"])
    workloads = []
    for p in perf:
        if p["workload"] not in workloads:
            workloads.append(p["workload"])
    # One panel per metric: per workload, BASE's seeds (grey band = its min..max, the noise)
    # and NEW's seeds, as a change relative to BASE's mean so workloads of any size share an axis.
    rows = (len(metrics) + 1) // 2
    fig, axes = bp.figure(width=10.0, height=2.8 * rows, nrows=rows, ncols=2, squeeze=False)
    for k, metric in enumerate(metrics):
        ax = axes[k // 2][k % 2]
        for i, w in enumerate(workloads):
            cell = next(p for p in perf if p["workload"] == w and p["metric"] == metric)
            mean = cell["base_mean"]
            if mean == 0:
                continue
            rel = lambda v: 100 * (v - mean) / abs(mean)
            lo, hi = rel(min(cell["base"])), rel(max(cell["base"]))
            ax.fill_between([i - 0.35, i + 0.35], [lo, lo], [hi, hi], color="#dddddd", zorder=1)
            ax.plot([i - 0.12] * len(cell["base"]), [rel(v) for v in cell["base"]], "o",
                    color=bp.PALETTE[0], markersize=4, zorder=2,
                    label="BASE" if i == 0 else None)
            color = {"better": bp.PALETTE[2], "worse": bp.PALETTE[3]}.get(cell["movement"],
                                                                        bp.PALETTE[1])
            ax.plot([i + 0.12] * len(cell["new"]), [rel(v) for v in cell["new"]], "s",
                    color=color, markersize=4, zorder=2, label="NEW" if i == 0 else None)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(workloads)))
        ax.set_xticklabels(workloads, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("% vs BASE mean", fontsize=8)
        ax.set_title(LABELS.get(metric, metric), fontsize=9)
        if k == 0:
            ax.legend(fontsize=7)
    for k in range(len(metrics), len(axes) * 2):
        axes[k // 2][k % 2].set_visible(False)
    fig.tight_layout()
    page.figure(fig, "Each performance cell's samples, one per memory seed, as a change from "
                     "BASE's mean: BASE (circles) with its noise band (grey: its min..max), NEW "
                     "(squares: green better, red worse beyond max(band, floor), else neutral)")
    page.table(["workload", "metric", "BASE mean", "NEW mean", "change", "band", "moved",
                "owner (mechanism)"],
               [[p["workload"], LABELS.get(p["metric"], p["metric"]),
                 SCALE.get(p["metric"], 1) * p["base_mean"],
                 SCALE.get(p["metric"], 1) * p["new_mean"], f"{100 * p['change']:+.1f}%",
                 SCALE.get(p["metric"], 1) * p["band"],
                 "-" if p["movement"] == "same" else p["movement"],
                 "" if p["movement"] == "same" else
                 p["owner"] + (f" ({p['mechanism']})" if p.get("mechanism") else "")]
                for p in perf])
    page.table(["workload", "p99 SLA (us)", "derived"],
               [[s["workload"], s["p99_us"], "yes" if s["derived"] else "no"] for s in doc["slas"]],
               caption="The SLA of each perf/W cell (derived: BASE's time of one inference x the "
                       f"SLA factor {doc['serving']['sla_factor']})")

page.write()
