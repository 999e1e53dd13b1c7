"""`bud serve-load --html`: the latency-throughput curve of a request stream served by the NPU,
with the p99 SLA, energy per request and throughput per watt per load point (docs/serving.md).
Input: what `bud serve-load --json` prints."""

import bud_plots as bp

doc = bp.read_input()
svc = doc["service"]
sw = doc["sweep"]
pts = sw["points"]
if not pts:
    bp.fail("the sweep has no load points")
sla = sw.get("sla_p99_us", 0)
best = sw.get("sustained_point")
pol = doc["policy"]
arr = doc["arrivals"]

page = bp.Page(f"bud serve-load {svc['workload']}",
               f"{arr['requests']} {arr['kind']} requests per load point (seed {arr['seed']}), "
               f"max batch {pol['max_batch']}, window {pol['window_us']} us, queue "
               f"{pol['queue_bound']} ({pol['admission']}), {svc['frequency_mhz']:.0f} MHz, "
               f"model {svc['model_revision']}, energy table {svc['energy_table']}")

if sla > 0:
    if best is not None:
        p = pts[best]
        page.paragraph(f"Sustained at the SLA (p99 <= {sla} us, nothing dropped): "
                       f"{p['served_rps']:,.0f} requests/s at {p['watts']:.3f} W = "
                       f"{p['requests_per_joule']:,.0f} requests/J (load {p['load']:.2f}).")
    else:
        page.paragraph(f"No load point meets the SLA (p99 <= {sla} us, nothing dropped).")

page.heading("Latency against throughput")
fig, ax = bp.figure()
# Saturated load points (offered >= capacity) have no steady-state latency to plot.
steady = [p for p in pts if not p.get("saturated")]
served = [p["served_rps"] for p in steady]
for key, label, color, marker in (("p50", "p50", bp.PALETTE[0], "o"),
                                  ("p95", "p95", bp.PALETTE[1], "s"),
                                  ("p99", "p99", bp.PALETTE[3], "^")):
    ax.plot(served, [p["latency_us"][key] for p in steady], color=color, marker=marker,
            label=label)
if sla > 0:
    ax.axhline(sla, color="black", linestyle="--", linewidth=1, label=f"SLA p99 {sla} us")
if best is not None:
    ax.plot([pts[best]["served_rps"]], [pts[best]["latency_us"]["p99"]], marker="*",
            markersize=14, color=bp.PALETTE[2], linestyle="none", label="sustained point")
ax.set_xlabel("served requests/s")
ax.set_ylabel("latency (us)")
ax.set_yscale("log")
ax.legend(fontsize=8)
page.figure(fig, "Latency percentiles per load point against the throughput achieved (MLPerf "
                 "server scenario): the knee is where queueing takes over")

page.heading("Throughput per watt")
fig, ax = bp.figure()
loads = [p["load"] for p in pts]
ax.plot(loads, [p["requests_per_joule"] for p in pts], color=bp.PALETTE[2], marker="o",
        label="requests/J (throughput per watt)")
ax.set_xlabel("offered load (fraction of capacity)")
ax.set_ylabel("requests per joule")
watts = bp.second_axis(ax)
watts.plot(loads, [p["watts"] for p in pts], color=bp.PALETTE[4], marker="s", label="average W")
watts.set_ylabel("W")
bp.legend_both(ax, watts, loc="lower right")
page.figure(fig, "Requests per joule and average power per load point: idle static power is "
                 "amortised over more requests as load rises")

if sw.get("thermal"):
    # The thermal clamp against the latency tail: p99 of the requests whose time in the system
    # overlaps a clamp engagement against the others, per load point.
    page.heading("Thermal clamp and the latency tail")
    steady = [p for p in pts if not p.get("saturated")]
    fig, ax = bp.figure()
    for key, label, color, marker in (("overlapping_clamp", "overlapping a clamp", bp.PALETTE[3], "^"),
                                      ("clear_of_clamp", "clear of every clamp", bp.PALETTE[0], "o")):
        xs = [p["load"] for p in steady if p["thermal"][key]["p99_us"] is not None]
        ys = [p["thermal"][key]["p99_us"] for p in steady if p["thermal"][key]["p99_us"] is not None]
        if xs:
            ax.plot(xs, ys, color=color, marker=marker, label=f"p99, {label}")
    if sla > 0:
        ax.axhline(sla, color="black", linestyle="--", linewidth=1, label=f"SLA p99 {sla} us")
    ax.set_xlabel("offered load (fraction of capacity)")
    ax.set_ylabel("p99 latency (us)")
    ax.legend(fontsize=8)
    page.figure(fig, "p99 latency of the requests whose arrival-to-completion overlaps a thermal "
                     "clamp against those that do not, per load point: how much of the tail the "
                     "clamp explains")
    def p99(p, key):
        if p.get("saturated"):
            return "saturated"
        v = p["thermal"][key]["p99_us"]
        return "-" if v is None else v
    page.table(["load", "clamp events", "clamped %", "peak C", "overlapping n", "overlapping p99 us",
                "clear n", "clear p99 us"],
               [[p["load"], p["thermal"]["clamp_events"], 100 * p["thermal"]["clamped_fraction"],
                 p["thermal"]["peak_mc"] / 1e3, p["thermal"]["overlapping_clamp"]["requests"],
                 p99(p, "overlapping_clamp"), p["thermal"]["clear_of_clamp"]["requests"],
                 p99(p, "clear_of_clamp")] for p in pts])

plan = doc.get("interventions")
if plan:
    page.heading("Intervention plan")
    bp.intervention_plan(page, plan, sla)

page.heading("Batch costs measured on the RTL")
page.table(["batch", "NPU cycles", "service cycles", "per request", "energy uJ", "check"],
           [[b["batch"], b["npu_cycles"], b["service_cycles"], b["service_cycles"] // b["batch"],
             b["energy_fj"] * 1e-9, "PASS" if b["passed"] else "FAIL"] for b in svc["batches"]])

page.heading("Load points")
page.table(["load", "offered/s", "served/s", "dropped", "p50 us", "p95 us", "p99 us", "uJ/request",
            "W", "requests/J", "SLA"],
           [[p["load"], p["offered_rps"], p["served_rps"], p["dropped"]]
            + (["saturated"] * 3 if p.get("saturated") else
               [p["latency_us"]["p50"], p["latency_us"]["p95"], p["latency_us"]["p99"]])
            + [p["joules_per_request"] * 1e6, p["watts"], p["requests_per_joule"],
               ("meets" if p["meets_sla"] else "misses") if sla > 0 else "-"] for p in pts])
page.write()
