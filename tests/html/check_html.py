#!/usr/bin/env python3
"""Checks one of bud's HTML reports the way a user meets it: in a real browser (headless
Chromium). Exit 0 when
  - the page is self-contained: no script, stylesheet, image or frame loads anything from outside
    the file (no http(s)://, //host or file reference);
  - Chromium parses it and its DOM holds at least --min-plots inline SVG plots and every --text;
  - every plot, rendered alone, and the whole page are not blank: the plot's screenshot has
    non-background pixels and colored (non-gray) pixels, i.e. data marks, not only axes.
Otherwise prints what failed and exits 1 (2 for bad usage or a missing browser).

usage: check_html.py PAGE.html --min-plots N [--text STR ...] [--keep DIR]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

from PIL import Image

# Each plot is screenshot in a cell of this size (pixels); larger plots are clipped, not scaled.
CELL_W, CELL_H = 1000, 700

# Attributes that load something when the page is viewed.
_LOADING = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"),
            ("embed", "src"), ("object", "data"), ("source", "src"), ("video", "src"),
            ("audio", "src"), ("image", "href"), ("use", "href"), ("image", "xlink:href")}


class _Loads(HTMLParser):
    def __init__(self):
        super().__init__()
        self.external = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (tag, name) in _LOADING and value and not value.startswith(("data:", "#")):
                self.external.append(f"<{tag} {name}=\"{value}\">")


def chromium(args, user_dir):
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("check_html: no chromium (install Debian's chromium; tools/setup-deps.sh does)",
              file=sys.stderr)
        sys.exit(2)
    cmd = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", f"--user-data-dir={user_dir}"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def screenshot(page, png, user_dir, size="1200,900"):
    r = chromium([f"--screenshot={png}", f"--window-size={size}", f"file://{page}"], user_dir)
    if r.returncode != 0 or not os.path.exists(png):
        raise RuntimeError(f"chromium could not screenshot {page}: {r.stderr.strip()[-400:]}")
    return Image.open(png).convert("RGB")


def ink(img):
    """(non-white pixels, colored pixels) of a screenshot."""
    non_white = colored = 0
    for r, g, b in img.getdata():
        if r < 245 or g < 245 or b < 245:
            non_white += 1
            if max(r, g, b) - min(r, g, b) > 40:
                colored += 1
    return non_white, colored


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page")
    ap.add_argument("--min-plots", type=int, required=True)
    ap.add_argument("--text", action="append", default=[], help="text the rendered DOM must hold")
    ap.add_argument("--keep", help="keep the screenshots in this folder")
    a = ap.parse_args()
    page = os.path.abspath(a.page)
    with open(page, encoding="utf-8") as f:
        source = f.read()
    problems = []

    loads = _Loads()
    loads.feed(source)
    problems += [f"loads from outside the file: {e}" for e in loads.external]
    if re.search(r"url\(\s*['\"]?(https?:|//)", source):
        problems.append("a style loads a url() from the network")

    work = a.keep or tempfile.mkdtemp(prefix="check_html.")
    os.makedirs(work, exist_ok=True)
    user_dir = os.path.join(work, "profile")
    try:
        dom = chromium(["--dump-dom", f"file://{page}"], user_dir)
        if dom.returncode != 0 or "<body" not in dom.stdout:
            problems.append(f"chromium did not render the page: {dom.stderr.strip()[-400:]}")
        plots = re.findall(r"<svg\b.*?</svg>", dom.stdout, flags=re.S)
        if len(plots) < a.min_plots:
            problems.append(f"{len(plots)} plot(s) in the rendered DOM, expected at least "
                            f"{a.min_plots}")
        text = re.sub(r"<[^>]+>", " ", re.sub(r"<svg\b.*?</svg>", "", dom.stdout, flags=re.S))
        text = re.sub(r"\s+", " ", text)
        for t in a.text:
            if t not in text:
                problems.append(f"text {t!r} is not on the page")

        whole = screenshot(page, os.path.join(work, "page.png"), user_dir)
        if ink(whole)[0] == 0:
            problems.append("the page renders blank")
        # Every plot alone in its own cell of one grid page: one browser run for all of them.
        cols = 3
        rows = (len(plots) + cols - 1) // cols
        cells = "".join(f'<div style="position:absolute;left:{(i % cols) * CELL_W}px;'
                        f'top:{(i // cols) * CELL_H}px;width:{CELL_W}px;height:{CELL_H}px;'
                        f'overflow:hidden">{svg}</div>' for i, svg in enumerate(plots))
        grid = os.path.join(work, "plots.html")
        with open(grid, "w", encoding="utf-8") as f:
            f.write('<!DOCTYPE html><html><body style="margin:0;background:#fff">'
                    f"{cells}</body></html>")
        if plots:
            shot = screenshot(grid, os.path.join(work, "plots.png"), user_dir,
                              f"{cols * CELL_W},{rows * CELL_H}")
            for i in range(len(plots)):
                x, y = (i % cols) * CELL_W, (i // cols) * CELL_H
                non_white, colored = ink(shot.crop((x, y, x + CELL_W, y + CELL_H)))
                if non_white < 500:
                    problems.append(f"plot {i + 1} renders blank ({non_white} inked pixels)")
                elif colored < 50:
                    problems.append(f"plot {i + 1} has axes but no data marks "
                                    f"({colored} colored pixels)")
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        problems.append(str(e))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)

    for p in problems:
        print(f"check_html: {a.page}: {p}", file=sys.stderr)
    if not problems:
        print(f"check_html: {a.page}: ok ({len(plots)} plots)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
