"""`bud corpus report --html`: the bring-up evidence per model revision as one page of trend
plots and tables (docs/packets.md, "Evidence report"). Input: EvidenceReport::json() of
replay/dashboard/EvidenceReport.h, i.e. what `bud corpus report --json` prints."""

import bud_plots as bp

doc = bp.read_input()
revs = doc.get("revisions", [])
if not revs:
    bp.fail("the evidence database holds no results yet (bud corpus record adds them)")
names = [r["revision"] for r in revs]
short = [n if len(n) <= 12 else n[:12] for n in names]
x = list(range(len(revs)))
documented = doc.get("documented_counters", 0)
latest = revs[-1]

page = bp.Page("bud corpus report",
               f"{len(revs)} model revisions, in the order they were first recorded; "
               f"latest {latest['revision']}: {latest['packets']} packets, "
               f"{100 * latest['success_rate']:.1f}% replay success")


def revision_axis(ax):
    ax.set_xticks(x)
    ax.set_xticklabels(short, rotation=30 if len(x) > 6 else 0, ha="right" if len(x) > 6 else "center")
    ax.set_xlabel("model revision")


page.heading("Replay success and escape risk")
fig, ax = bp.figure()
ax.bar(x, [r["failing"] for r in revs], color=bp.PALETTE[3], label="failing packets (escape risk)")
ax.set_ylabel("failing packets")
revision_axis(ax)
rate = bp.second_axis(ax)
rate.plot(x, [100 * r["success_rate"] for r in revs], color=bp.PALETTE[2], marker="o",
          label="replay success rate")
rate.set_ylim(0, 105)
rate.set_ylabel("replay success (%)")
bp.legend_both(ax, rate, loc="upper left")
page.figure(fig, "Failing packets per revision (bars: the escape-risk trend) and the replay "
                 "success rate (line: passed or fixed over packets replayed)")

page.heading("What changed between revisions")
fig, ax = bp.figure()
series = [("newly failing", "newly_failing", bp.PALETTE[3]),
          ("newly fixed", "newly_fixed", bp.PALETTE[2]),
          ("still failing", "still_failing", bp.PALETTE[1]),
          ("flaky", "flaky", bp.PALETTE[4])]
width = 0.8 / len(series)
for k, (label, key, color) in enumerate(series):
    ax.bar([i - 0.4 + width * (k + 0.5) for i in x], [len(r[key]) for r in revs], width,
           color=color, label=label)
ax.set_ylabel("packets")
revision_axis(ax)
ax.legend(fontsize=8)
page.figure(fig, "Per revision: packets newly failing, newly fixed and still failing against the "
                 "previous revision, and flaky ones (verdicts differ between runs of the same "
                 "revision: no RTL change)")

page.heading("Trigger coverage and counter completeness")
fig, ax = bp.figure()
ax.plot(x, [100 * r["trigger_coverage"] for r in revs], color=bp.PALETTE[0], marker="o",
        label="trigger coverage (armed triggers that hit)")
ax.plot(x, [100 * r["counter_completeness"] for r in revs], color=bp.PALETTE[1], marker="s",
        label=f"counter completeness (of {documented} documented counters, seen counting)")
ax.set_ylim(0, 105)
ax.set_ylabel("%")
revision_axis(ax)
ax.legend(fontsize=8)
page.figure(fig, "Trigger coverage: triggers of the packets' trigger files that hit at least once "
                 "over those armed. Counter completeness: documented PMU counters "
                 "(rtl/npu_facts.toml) that some packet saw counting.")

page.heading("Per revision")
page.table(["revision", "runs", "packets", "success", "failing", "still failing", "newly failing",
            "newly fixed", "flaky", "triggers hit / armed", "counters seen / documented"],
           [[r["revision"], r["runs"], r["packets"], f"{100 * r['success_rate']:.1f}%",
             r["failing"], len(r["still_failing"]), len(r["newly_failing"]),
             len(r["newly_fixed"]), len(r["flaky"]),
             f"{len(r['triggers_hit'])} / {len(r['triggers_armed'])}",
             f"{len(r['counters_observed'])} / {documented}"] for r in revs])

page.heading(f"Latest revision {latest['revision']}")
lists = [("Still failing", latest["still_failing"]), ("Newly failing", latest["newly_failing"]),
         ("Newly fixed", latest["newly_fixed"]), ("Flaky", latest["flaky"]),
         ("Triggers never hit",
          [t for t in latest["triggers_armed"] if t not in latest["triggers_hit"]]),
         ("Counters never seen counting", latest["counters_never_observed"]),
         ("Recorded counters not in the facts table", latest["counters_undocumented"])]
page.table(["", "count", "names"],
           [[what, len(v), ", ".join(v) if v else "-"] for what, v in lists])
page.write()
