#!/usr/bin/env python3
"""A small report page for the tests of bud_plots, render_html and check_html.py.
Data: {"title": str, "values": [numbers], "blank_plot": bool, "raise": str (optional)}."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "plots"))
import bud_plots as bp  # noqa: E402

doc = bp.read_input()
if doc.get("raise"):
    raise ValueError(doc["raise"])
values = doc["values"]
page = bp.Page(doc["title"], "fixture for the HTML report tests")
fig, ax = bp.figure()
ax.bar([f"v{i}" for i in range(len(values))], values, color=bp.PALETTE[0])
page.figure(fig, "values as bars")
fig, ax = bp.figure()
if not doc.get("blank_plot"):
    ax.plot(range(len(values)), values, color=bp.PALETTE[1], marker="o")
page.figure(fig, "values as a line")
page.table(["name", "value"], [[f"v{i}", v] for i, v in enumerate(values)])
page.write()
