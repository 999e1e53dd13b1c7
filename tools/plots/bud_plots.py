"""The page of bud's HTML reports: one self-contained file (inline CSS and SVG, no script, no
network at view time) whose plots come from matplotlib.

A report script (tools/plots/<name>.py, run by bud::plots::render_html) reads the JSON bud wrote
and lays out its page:

    import bud_plots as bp
    doc = bp.read_input()
    page = bp.Page("bud profile: mlp")
    fig, ax = bp.figure()
    ax.bar(...)
    page.figure(fig, "Cycles per layer")
    page.table(["layer", "cycles"], rows)
    page.write()

Output is deterministic: the same data gives the same bytes (no dates, fixed SVG ids).
"""

import argparse
import html
import io
import json
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

matplotlib.rcParams.update({
    "svg.hashsalt": "bud",       # element ids from a fixed salt, not a random one
    "svg.fonttype": "path",      # glyphs as paths: the page needs no font
    "figure.dpi": 96,
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
})

_args = None

# One color per class, shared by every report (top-down classes, verdicts, precisions).
PALETTE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
           "#8c8c8c", "#ccb974", "#64b5cd"]

_CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
p.sub { color: #666; margin-top: 0; }
figure.plot { margin: 1em 0; }
figure.plot svg { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; }
td.text, th.text { text-align: left; }
"""


def read_input():
    """The JSON document bud passed (--data FILE); remembers --out for Page.write()."""
    global _args
    parser = argparse.ArgumentParser(description="Render one of bud's HTML reports.")
    parser.add_argument("--data", required=True, help="the report's data, JSON")
    parser.add_argument("--out", required=True, help="the HTML file to write")
    _args = parser.parse_args()
    with open(_args.data, encoding="utf-8") as f:
        return json.load(f)


def figure(width=8.0, height=3.2, **kwargs):
    """A new matplotlib figure and axes of the reports' default size (inches)."""
    return plt.subplots(figsize=(width, height), **kwargs)


def second_axis(ax):
    """A right-hand y axis sharing `ax`'s x axis (without a second grid)."""
    other = ax.twinx()
    other.grid(False)
    return other


def legend_both(ax, other, **kwargs):
    """One legend on `ax` for the lines of `ax` and of its second axis `other`."""
    handles = ax.get_legend_handles_labels()[0] + other.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], fontsize=8, **kwargs)


def stacked_bars(ax, names, segments, xlabel, legend_y=-0.25):
    """Horizontal 100% bars, one per name (top to bottom), stacked from `segments`: a list of
    (label, color, values - one per name, percent); an all-zero segment is left out."""
    left = [0.0] * len(names)
    for label, color, values in segments:
        if not any(values):
            continue
        ax.barh(names, values, left=left, color=color, label=label)
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.invert_yaxis()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, legend_y), ncol=4, fontsize=8,
              frameon=False)


def _svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _cell(value):
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


class Page:
    """One report page; sections appear in the order they are added."""

    def __init__(self, title, subtitle=None):
        self.title = title
        self.parts = [f"<h1>{html.escape(title)}</h1>"]
        if subtitle:
            self.parts.append(f'<p class="sub">{html.escape(subtitle)}</p>')

    def heading(self, text):
        self.parts.append(f"<h2>{html.escape(text)}</h2>")

    def paragraph(self, text):
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def figure(self, fig, caption):
        """Adds a matplotlib figure as inline SVG (and closes it)."""
        self.parts.append(f'<figure class="plot">{_svg(fig)}'
                          f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def table(self, columns, rows, caption=None):
        """A table; string cells align left, numbers right (thousands separated)."""
        out = ["<table>"]
        if caption:
            out.append(f"<caption>{html.escape(caption)}</caption>")
        text_cols = {i for i, _ in enumerate(columns)
                     if rows and all(isinstance(r[i], str) for r in rows)}
        head = "".join(f'<th class="{"text" if i in text_cols else "num"}">{html.escape(str(c))}</th>'
                       for i, c in enumerate(columns))
        out.append(f"<tr>{head}</tr>")
        for r in rows:
            cells = "".join(f'<td class="{"text" if i in text_cols else "num"}">'
                            f"{html.escape(_cell(v))}</td>" for i, v in enumerate(r))
            out.append(f"<tr>{cells}</tr>")
        out.append("</table>")
        self.parts.append("".join(out))

    def write(self):
        """Writes the page to the --out path given to read_input()."""
        if _args is None:
            raise RuntimeError("read_input() must run before Page.write()")
        body = "\n".join(self.parts)
        page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f"<title>{html.escape(self.title)}</title><style>{_CSS}</style></head>\n"
                f"<body>\n{body}\n</body></html>\n")
        with open(_args.out, "w", encoding="utf-8") as f:
            f.write(page)


def intervention_plan(page, plan, sla):
    """The intervention plan (`--sweep` of bud serve-load and bud profile): a bar per change of
    requests per joule at the SLA, and the before/after table (ranked best first)."""
    fig, ax = figure(height=0.4 * len(plan) + 1.2)
    ax.barh(range(len(plan)), [i["requests_per_joule"] for i in plan],
            color=[PALETTE[2] if i["knob"] == "baseline" else
                   (PALETTE[0] if i["meets_sla"] else PALETTE[3]) for i in plan])
    ax.set_yticks(range(len(plan)))
    ax.set_yticklabels([i["name"] for i in plan])
    ax.invert_yaxis()
    ax.set_xlabel(f"requests per joule at the SLA (p99 <= {sla} us)")
    page.figure(fig, "One change at a time (operating point, max batch, micro-batching window, "
                     "tile rows), each measured as a whole load sweep, ranked by throughput per "
                     "watt at the sustained point (baseline in green; a change that misses the "
                     "SLA at every load shows no bar)")
    page.table(["change", "knob", "meets SLA", "requests/J", "served/s", "p99 us", "W",
                "cycles/inference", "uJ/inference", "vs baseline"],
               [[i["name"], i["knob"], "yes" if i["meets_sla"] else "no", i["requests_per_joule"],
                 i["served_rps"], i["p99_us"], i["watts"], i["batch1_cycles"],
                 i["batch1_energy_uj"],
                 "-" if i["vs_baseline"] is None else f"{100 * (i['vs_baseline'] - 1):+.1f}%"]
                for i in plan])


def fail(message):
    """Ends the script with one clear line on stderr (bud shows it) and status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    fail("bud_plots is a module for the report scripts of tools/plots, not a program")
