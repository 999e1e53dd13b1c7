"""`bud profile --design FILE --html OUT.html`: a design's handshake profile as one page
(docs/designs.md, "Profiling a design"): a stacked bar per handshake of its busy, starved,
back-pressured and idle share of the run's cycles, the bottleneck verdict, the counters over time
(the increase per interval) and the tables behind them.

Input (from bud): `bud profile --design FILE --json`'s object: design, revision, seed, cycles,
state, message, stages, profile {handshakes, counters, bottleneck, ...}.
"""

import bud_plots as bp

STATES = ["busy", "starved", "backpressured", "idle"]
COLOR = {"busy": bp.PALETTE[2], "starved": bp.PALETTE[0], "backpressured": bp.PALETTE[3],
         "idle": bp.PALETTE[7]}

doc = bp.read_input()
prof = doc["profile"]
hs = prof["handshakes"]
result = doc.get("message", "")
page = bp.Page(f"bud profile --design: {doc['design']}",
               f"revision {doc['revision']}, seed {doc['seed']}, {doc['cycles']:,} cycles; "
               f"{doc['state']}: {result}")

page.heading("Handshakes")
page.paragraph(f"Bottleneck ({prof['bottleneck']['kind']}): {prof['bottleneck']['message']}")
if hs:
    names = [h["name"] for h in hs]
    fig, ax = bp.figure(height=0.32 * len(hs) + 1.4)
    bp.stacked_bars(ax, names, [(s, COLOR[s], [h["percent"][s] for h in hs]) for s in STATES],
                    "% of cycles", legend_y=-0.3)
    page.figure(fig, "Each handshake's cycles: busy (valid and ready: a transfer), starved (ready "
                     "without valid), back-pressured (valid without ready), idle (neither); "
                     "declared stages first, in pipeline order, from $.profile.handshakes.")
    page.table(["handshake", "kind", "producer", "consumer", "busy %", "starved %",
                "back-pressured %", "idle %", "transfers", "reading"],
               [[h["name"], h["kind"], h["producer"], h["consumer"],
                 *[h["percent"][s] for s in STATES], h["transfers"], h["reading"]] for h in hs])
else:
    page.paragraph("The design file declares no handshake.")

page.heading("Counters over time")
ctr = prof["counters"]
if ctr["series"]:
    at = ctr["cycles"]
    fig, ax = bp.figure()
    for i, c in enumerate(ctr["series"]):
        v = c["values"]
        # The increase over each interval (a counter that is a level can go down: shown as read).
        delta = [b - a for a, b in zip([0] + v[:-1], v)]
        ax.step(at, delta, where="post", color=bp.PALETTE[i % len(bp.PALETTE)], label=c["name"])
    ax.set_xlabel("cycle")
    ax.set_ylabel(f"increase per {ctr['interval']:,} cycles")
    ax.legend(fontsize=8)
    page.figure(fig, f"Each counter's increase over each interval of {ctr['interval']:,} cycles "
                     f"(asked for {ctr['requested_interval']:,}; the interval doubles when a run "
                     f"outgrows the series), from $.profile.counters.")
    page.table(["counter", "total"], [[c["name"], c["total"]] for c in ctr["series"]])
else:
    page.paragraph("The design file declares no counter.")

page.write()
