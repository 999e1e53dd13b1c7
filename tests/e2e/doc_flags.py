#!/usr/bin/env python3
"""Every `--flag` the docs show on a `bud SUBCOMMAND ...` command line exists: it appears in
`bud SUBCOMMAND --help`. Usage: doc_flags.py BUD_BINARY SOURCE_DIR. Exit 0 when every flag is
known, 1 listing each unknown one as FILE:LINE: `bud SUB`: --flag, 2 on a setup error."""
import glob
import os
import re
import subprocess
import sys

bud, src = sys.argv[1], sys.argv[2]


def help_text(path):
    r = subprocess.run([bud] + path + ["--help"], capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        return None
    return r.stdout


def subcommands(text):
    """Names listed under CLI11's "Subcommands:" heading."""
    out, on = [], False
    for line in text.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS:"):
            on = True
            continue
        if on:
            # "  report, dashboard   Description": a name and its aliases.
            m = re.match(r"^\s{2}([^\s,]+(?:, [^\s,]+)*)", line)
            if not m:
                if line.strip():
                    on = False
                continue
            out.extend(m.group(1).split(", "))
    return out


top = help_text([])
if top is None:
    print(f"doc_flags: {bud} --help failed", file=sys.stderr)
    sys.exit(2)
tree = {}  # "run" -> help text; "packet inspect" -> help text
for sub in subcommands(top):
    t = help_text([sub])
    if t is None:
        continue
    tree[sub] = t
    for sub2 in subcommands(t):
        t2 = help_text([sub, sub2])
        if t2 is not None:
            tree[f"{sub} {sub2}"] = t2
if "run" not in tree:
    print("doc_flags: could not read `bud run --help`", file=sys.stderr)
    sys.exit(2)

# Pieces of text that are one command line: inline `code` spans, and lines of fenced or indented
# code blocks; each cut further at shell separators.
def command_pieces(path):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    fenced = False
    for n, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        spans = []
        if fenced or line.startswith("    ") or line.startswith("\t"):
            spans.append(line)
        else:
            spans += re.findall(r"`([^`]+)`", line)
        for s in spans:
            s = s.split(" #", 1)[0]
            for piece in re.split(r"\|\||&&|[|;]|\bthen\b", s):
                yield n, piece


problems, checked = [], 0
files = sorted(glob.glob(os.path.join(src, "docs", "*.md"))) + [os.path.join(src, "README.md")]
for f in files:
    for n, piece in command_pieces(f):
        m = re.search(r"(?:^|[\s/$(])bud\s+(.*)$", piece)
        if not m:
            continue
        words = m.group(1).split()
        if not words or words[0] not in tree:
            continue
        path = words[0]
        if len(words) > 1 and f"{path} {words[1]}" in tree:
            path = f"{path} {words[1]}"
        for w in words:
            fm = re.match(r"^\[?(--[a-z][a-z0-9-]*)", w)
            if not fm or "*" in w:
                continue
            flag = fm.group(1)
            checked += 1
            if flag in ("--help",):
                continue
            if not re.search(re.escape(flag) + r"(?![a-z0-9-])", tree[path]):
                problems.append(f"{os.path.relpath(f, src)}:{n}: `bud {path}`: {flag} is not in "
                                f"`bud {path} --help`")

for p in problems:
    print(p)
print(f"doc_flags: {checked} flags on bud command lines checked, {len(problems)} unknown",
      file=sys.stderr)
sys.exit(1 if problems else 0)
