"""`bud profile --html OUT.html`: the profile of one run as a self-contained page (docs/profiling.md,
"HTML report"): the roofline per layer (measured and projected, datasheet and empirical
ceilings), stacked top-down bars per layer and per engine, the bottleneck ranking, the timeline
summary, the energy per layer by component (when energy was accounted) and, with --calibrate,
the counter fidelity table and, with --sweep, the intervention plan at the SLA.

Input (from bud): {"run": <bud run report>, "profile": <bud profile --json's "profile">,
"timeline": {...} (profile/Trace.h timeline_summary), "calibration": <or null>,
"sweep": <bud profile --sweep --json's "sweep", or null>}.
"""

import bud_plots as bp

CLASSES = ["useful", "compute_hazard", "memory", "scheduling", "host", "throttled", "precision",
           "unattributed"]
COLOR = {c: bp.PALETTE[i] for i, c in enumerate(CLASSES)}


def shares(topdown):
    """Each top class's share (percent) from basis points."""
    return [topdown["classes"][c]["basis_points"] / 100.0 for c in CLASSES]


def stacked(ax, names, rows):
    """Stacked 100% bars, one per name, one segment per top-down class."""
    bp.stacked_bars(ax, names, [(c, COLOR[c], [r[i] for r in rows]) for i, c in enumerate(CLASSES)],
                    "% of slots")


def roofline(page, prof):
    ceil = prof["ceilings"]
    layers = ceil["layers"]
    proj = {l["layer"]: l for l in prof["roofline"]["layers"]}
    macs = {l["name"]: l["macs_useful"] for l in prof["layers"]}
    points = [l for l in layers if l["intensity"] > 0]
    if not points:
        page.paragraph("No layer moved DRAM bytes: no roofline to draw.")
        return
    lo = min(l["intensity"] for l in points) / 4
    hi = max(l["intensity"] for l in points) * 4
    fig, ax = bp.figure(8.0, 6.0)
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]

    def ceiling(c, style, label):
        ax.plot(xs, [min(c["macs_per_cycle"], x * c["bytes_per_cycle"]) for x in xs], style,
                color="#333", label=label)

    ceiling(ceil["datasheet"], "-", "datasheet ceiling")
    eff = ceil["effective"]
    ceiling(eff, ":", f'effective ceiling (Little\'s law: {eff["how"]})')
    if ceil.get("empirical"):
        ceiling(ceil["empirical"], "--", f'empirical ceiling ({ceil["empirical_how"]})')
    for i, l in enumerate(points):
        color = bp.PALETTE[i % len(bp.PALETTE)]
        ax.plot([l["intensity"]], [l["measured_macs_per_cycle"]], "o", color=color,
                label=f'{l["name"]} measured')
        if l.get("attainable_latency") is not None:
            ax.plot([l["intensity"]], [l["attainable_latency"]], "v", color=color,
                    markersize=7, label=f'{l["name"]} Little\'s law of its loads')
        p = proj.get(l["name"])
        if p and p["projected"] > 0:
            ax.plot([l["intensity"]], [macs[l["name"]] / p["projected"]], "x", color=color,
                    markersize=9, label=f'{l["name"]} projected')
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (MACs per DRAM byte)")
    ax.set_ylabel("MACs per cycle")
    # Below the axes: the ceilings and every layer's markers would hide the points inside.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    page.figure(fig, "Roofline: each layer's useful MACs per cycle (o measured, x projected by "
                "the analytic model) under the datasheet ceiling (array size, configured DRAM "
                "bandwidth), the effective one (the read bandwidth the outstanding requests "
                "sustain at the DRAM latency: below the datasheet's, a layer under it is "
                "latency-bound, not bandwidth-bound), the empirical one the microbenchmarks "
                "reach, and per layer (v) what Little's law allows its own loads: their requests "
                "in flight x their bytes / the latency.")
    rows = [[l["layer"], l["kind"], l["tiles"], l["bound"], l["projected"], l["measured"],
             f'{100 * l["error"]:+.1f}%', l["residual"]] for l in prof["roofline"]["layers"]]
    page.table(["layer", "kind", "tiles", "bound", "projected", "measured", "error", "residual"],
               rows, caption=f'Roofline projection: MAPE {100 * prof["roofline"]["mape"]:.1f}%, '
                             f'{prof["roofline"]["within_10pct"]} of {len(rows)} layers within 10%')


def topdown(page, prof):
    scopes = prof["layers"] + [prof["tail"], prof["model"]]
    fig, ax = bp.figure(8.0, 0.45 * len(scopes) + 1.4)
    stacked(ax, [s["name"] for s in scopes], [shares(s["topdown"]) for s in scopes])
    page.figure(fig, "Top-down per layer (MAC slots of the array): every slot in exactly one "
                "class; tail = after each engine's last command; model = the whole run.")
    engines = list(prof["model"]["engine_topdown"].keys())
    fig, ax = bp.figure(8.0, 0.45 * len(engines) + 1.4)
    stacked(ax, engines, [shares(prof["model"]["engine_topdown"][e]) for e in engines])
    page.figure(fig, "Top-down per engine, whole model (engine-cycles): each engine's cycles in "
                "exactly one class.")


def ranking(page, prof):
    rows = []
    for i, b in enumerate(prof["ranking"]):
        evidence = ", ".join(f"{k} {v:,}" for k, v in b["evidence"].items())
        bound = f' ({b["bound"]}-bound)' if b.get("bound") else ""
        rows.append([i + 1, b["layer"], b["lost_cycles"],
                     f'{b["dominant"]} / {b["dominant_sub"]}{bound}', b["rule"], evidence])
    page.table(["#", "layer", "lost cycles", "dominant class", "rule", "evidence"], rows,
               caption="Bottleneck ranking: layers by lost cycles (cycles the array could have "
                       "been busy), with the triage rule that fired")


def timeline(page, t):
    tracks = t["tracks"]
    fig, ax = bp.figure(8.0, 0.45 * len(tracks) + 1.2)
    names = [k["name"] for k in tracks]
    busy = [100.0 * k["busy_cycles"] / max(t["end_cycle"], 1) for k in tracks]
    ax.barh(names, busy, color=bp.PALETTE[0], label="holding a command / host activity")
    ax.barh(names, [100 - b for b in busy], left=busy, color="#dddddd", label="idle / waiting")
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of the run's cycles")
    ax.invert_yaxis()
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False)
    cycles = f'{t["end_cycle"]:,}'
    page.figure(fig, "Timeline summary: share of the run's " + cycles + " cycles each track "
                "spent busy (the --trace file has every slice).")
    page.table(["track", "slices", "busy cycles", "first busy", "last busy"],
               [[k["name"], k["slices"], k["busy_cycles"], k["first"], k["last"]]
                for k in tracks])
    host = [[h["name"], h["ts"], h["dur"]] for h in t["host"]]
    if host:
        page.table(["host activity", "cycle", "cycles"], host,
                   caption=f'Host driver on the same timebase; {t["tokens"]:,} dependency tokens '
                           "flowed between the engines")


COMPONENTS = ["mac", "scratchpad", "dram", "control", "static", "host", "background"]


def energy(page, e):
    if not e:
        page.paragraph("Energy: not accounted (--no-energy).")
        return
    scopes = e["layers"] + [e["rest"]]
    names = [s["name"] for s in scopes]
    fig, ax = bp.figure(8.0, 0.45 * len(scopes) + 1.4)
    left = [0.0] * len(scopes)
    for i, c in enumerate(COMPONENTS):
        values = [s["components_fj"][c] * 1e-9 for s in scopes]  # uJ
        if not any(values):
            continue
        ax.barh(names, values, left=left, color=bp.PALETTE[i % len(bp.PALETTE)], label=c)
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlabel("energy (uJ)")
    ax.invert_yaxis()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=4, fontsize=8, frameon=False)
    t = e["table"]
    page.figure(fig, f'Energy per layer by component (table {t["name"]} {t["version"]}, '
                f'{t["technology"]}, {t["voltage"]} V, {t["frequency_mhz"]:.0f} MHz; approximate '
                "values: docs/power.md); rest = host orchestration, idle engines and the tail.")
    rows = [[s["name"], f'{s["total_fj"] * 1e-9:,.3f}', f'{1e3 * s["watts"]:.1f}',
             f'{s["tops_per_watt"]:.3f}'] for s in scopes + [e["run"]]]
    page.table(["scope", "energy (uJ)", "avg power (mW)", "TOPS/W"], rows,
               caption=f'Run: {e["run"]["inferences_per_joule"]:,.0f} inferences/J')


def fidelity(page, cal):
    if not cal:
        page.paragraph("Counter fidelity: run `bud profile --calibrate` (or add --calibrate) for "
                       "the microbenchmarks' fidelity table and the empirical ceilings.")
        return
    page.table(["ceiling", "benchmark", "datasheet", "measured", "how"],
               [[p["name"], p["benchmark"], "-" if p["datasheet"] is None else p["datasheet"],
                 p["measured"], p["how"]] for p in cal["peaks"]],
               caption="Peaks measured by the microbenchmarks")
    rows = [[r["benchmark"], r["counter"], r["oracle"], r["expected"], r["measured"],
             f'{100 * r["error"]:+.2f}%', f'{100 * r["tolerance"]:.1f}%',
             "ok" if r["ok"] else "OUT OF TOLERANCE"] for r in cal["fidelity"]]
    bad = sum(1 for r in cal["fidelity"] if not r["ok"])
    page.table(["benchmark", "counter", "oracle", "expected", "measured", "error", "tolerance",
                ""], rows,
               caption=f"Counter fidelity: {len(rows) - bad} of {len(rows)} counters within "
                       "their documented tolerance")


def main():
    doc = bp.read_input()
    run, prof = doc["run"], doc["profile"]
    page = bp.Page(f'bud profile: {run["workload"]}',
                   f'{prof["cycles"]:,} cycles, {len(prof["layers"])} layers, '
                   f'{prof["array_macs"]} MAC slots per cycle, model {run["model_revision"]}')
    page.heading("Roofline")
    roofline(page, prof)
    page.heading("Top-down")
    topdown(page, prof)
    page.heading("Bottleneck ranking")
    ranking(page, prof)
    page.heading("Timeline")
    timeline(page, doc["timeline"])
    page.heading("Energy")
    energy(page, prof.get("energy"))
    page.heading("Counter fidelity")
    fidelity(page, doc.get("calibration"))
    plan = doc.get("sweep")
    if plan:
        page.heading("Intervention plan")
        page.paragraph(f"{plan['workload']} served at p99 <= {plan['sla_p99_us']} us: "
                       f"{plan['arrivals']['requests']} {plan['arrivals']['kind']} requests per "
                       f"load point (seed {plan['arrivals']['seed']}), baseline max batch "
                       f"{plan['policy']['max_batch']}, window {plan['policy']['window_us']} us.")
        bp.intervention_plan(page, plan["interventions"], plan["sla_p99_us"])
    page.write()


if __name__ == "__main__":
    main()
