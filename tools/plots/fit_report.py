"""`bud fit --html`: the workload fit matrix (models x array variants) and the platform trade
curves: p99 latency and requests per joule against throughput per array, per model, under the
bursty load at the p99 SLA (docs/serving.md, "Platform fit"). Input: what `bud fit --json`
prints."""

import bud_plots as bp

doc = bp.read_input()
cond = doc["conditions"]
cells = doc["cells"]
configs = doc["configs"]
if not cells:
    bp.fail("the fit matrix has no cells")
sla = cond["sla_p99_us"]
win = doc["winners"]

page = bp.Page("bud fit: workload fit matrix",
               f"{len(doc['models'])} models on {', '.join(configs)}; {cond['requests']} "
               f"{cond['arrivals']} requests per load point (seed {cond['arrival_seed']}), max "
               f"batch {cond['max_batch']}, window {cond['window_us']} us, queue "
               f"{cond['queue_bound']} ({cond['admission']}), SLA p99 <= {sla} us, energy table "
               f"{cond['energy_table']}")


def winner_text(w):
    return "no array meets the SLA" if w is None else w["config"]


gemm_cells = [c for c in cells if c["synthetic"]]
prod = win["production"]
lines = [f"Production models: {winner_text(prod)}"
         + ("" if prod is None else f" (meets the SLA on {prod['models_meeting']} of "
            f"{len(doc['models'])}, geometric mean {100 * prod['score']:.1f}% of each model's "
            f"best requests/J).")]
if gemm_cells:
    lines.append(f"Synthetic GEMM ({gemm_cells[0]['workload']}): {winner_text(win['gemm'])}.")
    if win["differ"]:
        lines.append(f"They differ: the synthetic GEMM picks {winner_text(win['gemm'])}, the "
                     f"production models pick {winner_text(prod)}. Choose on the production "
                     "models.")
page.heading("Decision")
for line in lines:
    page.paragraph(line)
page.table(["model", "winner (requests/J at the SLA)"],
           [[m["model"], winner_text(m["winner"])] for m in win["models"]]
           + ([[gemm_cells[0]["workload"] + " (synthetic GEMM)", winner_text(win["gemm"])]]
              if gemm_cells else []))


def label(c):
    return c["workload"] + (" (synthetic GEMM)" if c["synthetic"] else "")


page.heading("Fit matrix")
page.table(["model", "array", "NPU cycles", "host cycles", "% model FLOPs", "memory stall %",
            "uJ/inference", "req/s at SLA", "p99 us", "req/J at SLA"],
           [[label(c), c["config"], c["cycles"], c["host_cycles"], 100 * c["flops_fraction"],
             100 * c["memory_stall_fraction"], c["energy_uj"]]
            + ([c["sustained"]["served_rps"], c["sustained"]["p99_us"],
                c["sustained"]["requests_per_joule"]] if c["sustained"] else ["misses", "-", "-"])
            for c in cells])

kinds = []
for c in cells:
    for t in c["layer_types"]:
        if t["kind"] not in kinds:
            kinds.append(t["kind"])
page.heading("Memory-stall fraction by layer type")
page.table(["model", "array"] + [("attention (matmul)" if k == "matmul" else k) for k in kinds],
           [[label(c), c["config"]]
            + [next((100 * t["memory_stall_fraction"] for t in c["layer_types"] if t["kind"] == k),
                    "-") for k in kinds] for c in cells])

# One trade-curve figure per model: p99 against served throughput per array (left), and
# requests per joule against served throughput (right), every load the search tried.
page.heading("Trade curves")
names = []
for c in cells:
    if (c["model"], c["synthetic"]) not in names:
        names.append((c["model"], c["synthetic"]))
for model, synthetic in names:
    mine = [c for c in cells if c["model"] == model and c["synthetic"] == synthetic]
    fig, (lat, eff) = bp.figure(width=10.0, height=3.4, ncols=2)
    for i, c in enumerate(mine):
        color = bp.PALETTE[i % len(bp.PALETTE)]
        pts = c["curve"]
        if not pts:
            continue
        xs = [p["served_rps"] for p in pts]
        lat.plot(xs, [p["p99_us"] for p in pts], color=color, marker="o", markersize=3,
                 label=c["config"])
        eff.plot(xs, [p["requests_per_joule"] for p in pts], color=color, marker="o",
                 markersize=3, label=c["config"])
        s = c["sustained"]
        if s:
            lat.plot([s["served_rps"]], [s["p99_us"]], marker="*", markersize=12, color=color,
                     linestyle="none")
            eff.plot([s["served_rps"]], [s["requests_per_joule"]], marker="*", markersize=12,
                     color=color, linestyle="none")
    lat.axhline(sla, color="black", linestyle="--", linewidth=1, label=f"SLA {sla} us")
    lat.set_yscale("log")
    lat.set_xlabel("served requests/s")
    lat.set_ylabel("p99 latency (us)")
    lat.legend(fontsize=8)
    eff.set_xlabel("served requests/s")
    eff.set_ylabel("requests per joule")
    eff.legend(fontsize=8)
    page.figure(fig, f"{label(mine[0])}: p99 latency and requests per joule against throughput "
                     "per array, every load the search tried (star: the sustained point, the "
                     "highest throughput whose p99 meets the SLA)")

page.write()
