"""`bud serve-load --stream ... --html`: several request streams served by one NPU under a queue
policy (docs/serving.md, "Several streams"): per stream, p99 latency and the rejected fraction
against the offered load, the NPU's time shared between the streams, and the per-stream table.
Input: what `bud serve-load --stream ... --json` prints."""

import bud_plots as bp

doc = bp.read_input()
streams = doc["streams"]
sw = doc["sweep"]
pts = sw["points"]
if not pts or not streams:
    bp.fail("the sweep has no load points or no streams")
pol = doc["policy"]
arr = doc["arrivals"]
best = sw.get("sustained_point")
svc0 = streams[0]["service"]

page = bp.Page(f"bud serve-load: {len(streams)} streams, {doc['queue_policy']} queue policy",
               f"{arr['requests']} {arr['kind']} requests per load point (seed {arr['seed']}), "
               f"max batch {pol['max_batch']}, window {pol['window_us']} us, queue "
               f"{pol['queue_bound']} per stream ({pol['admission']}), "
               f"{svc0['frequency_mhz']:.0f} MHz, model {svc0['model_revision']}, "
               f"energy table {svc0['energy_table']}")
page.table(["stream", "workload", "share", "SLA p99 us", "priority", "weight",
            "batch-1 service cycles"],
           [[s["name"], s["workload"], s["share"], s["sla_p99_us"] or "-", s["priority"],
             s["weight"], s["service"]["batches"][0]["service_cycles"]] for s in streams])
if best is not None:
    page.paragraph(f"Sustained with every stream at its SLA (nothing rejected): "
                   f"{pts[best]['served_rps']:,.0f} requests/s (load {pts[best]['load']:.2f}).")
elif any(s["sla_p99_us"] > 0 for s in streams):
    page.paragraph("No load point meets every stream's SLA (nothing rejected).")

loads = [p["load"] for p in pts]
steady = [p for p in pts if not p["saturated"]]

page.heading("p99 latency per stream")
fig, ax = bp.figure()
for i, s in enumerate(streams):
    color = bp.PALETTE[i % len(bp.PALETTE)]
    ax.plot([p["load"] for p in steady], [p["streams"][i]["latency_us"]["p99"] for p in steady],
            color=color, marker="o", label=f"{s['name']} p99")
    ax.plot([p["load"] for p in steady], [p["streams"][i]["latency_us"]["p999"] for p in steady],
            color=color, marker="^", linestyle=":", label=f"{s['name']} p99.9")
    if s["sla_p99_us"] > 0:
        ax.axhline(s["sla_p99_us"], color=color, linestyle="--", linewidth=1,
                   label=f"{s['name']} SLA {s['sla_p99_us']} us")
ax.set_xlabel("offered load (fraction of the mix's capacity)")
ax.set_ylabel("latency (us)")
ax.set_yscale("log")
ax.legend(fontsize=8)
page.figure(fig, "Each stream's p99 and p99.9 against the offered load (saturated points, at or "
                 "above capacity, have no steady-state latency and are left off)")

page.heading("Rejected requests and NPU share per stream")
fig, ax = bp.figure()
for i, s in enumerate(streams):
    ax.plot(loads, [100 * p["streams"][i]["rejected_fraction"] for p in pts],
            color=bp.PALETTE[i % len(bp.PALETTE)], marker="s", label=f"{s['name']} rejected %")
ax.set_xlabel("offered load (fraction of the mix's capacity)")
ax.set_ylabel("rejected (%)")
share = bp.second_axis(ax)
for i, s in enumerate(streams):
    share.plot(loads, [100 * p["streams"][i]["service_share"] for p in pts],
               color=bp.PALETTE[i % len(bp.PALETTE)], linestyle=":", marker=".",
               label=f"{s['name']} NPU time %")
share.set_ylabel("share of NPU busy time (%)")
bp.legend_both(ax, share, loc="upper left")
page.figure(fig, "Who is turned away as load rises (admission at each stream's own queue bound), "
                 "and how the queue policy divides the NPU's time")

page.heading("Load points per stream")
rows = []
for p in pts:
    for i, s in enumerate(streams):
        q = p["streams"][i]
        lat = (["saturated"] * 4 if p["saturated"] else
               [q["latency_us"][k] for k in ("p50", "p95", "p99", "p999")])
        verdict = "-" if s["sla_p99_us"] <= 0 else ("meets" if q["meets_sla"] else "misses")
        rows.append([p["load"], s["name"], q["offered_rps"], q["served_rps"], q["completed"],
                     f"{100 * q['rejected_fraction']:.2f}%"] + lat
                    + [f"{100 * q['service_share']:.1f}%", verdict])
page.table(["load", "stream", "offered/s", "served/s", "completed", "rejected", "p50 us",
            "p95 us", "p99 us", "p99.9 us", "NPU share", "SLA"], rows)
page.write()
