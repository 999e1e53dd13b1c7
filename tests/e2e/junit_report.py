#!/usr/bin/env python3
"""`bud replay DIR --junit F` writes a report CI parsers read correctly. Builds a corpus (a passing
packet, a reproduced failure, a cycle-limit packet, a corrupt and a truncated packet, names with
XML specials and with bytes that are not UTF-8), runs corpus mode, and checks: xmllint --noout
well-formedness; every attribute Jenkins' and GitLab's JUnit parsers read (testsuites/testsuite
name, tests, failures, errors, skipped, time; testcase name, classname, time; failure/error type,
message and text); unreadable packets are <error>, never <skipped>; an empty corpus is a valid
report with tests="0". Usage: junit_report.py BUD_BINARY WORK_DIR."""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

bud, work = sys.argv[1], sys.argv[2]
failed = []


def check(cond, what):
    if not cond:
        failed.append(what)
        print("FAIL:", what)


def run(args, **kw):
    return subprocess.run([bud] + args, capture_output=True, **kw)


shutil.rmtree(work, ignore_errors=True)
corpus = os.path.join(work, "corpus")
os.makedirs(corpus)
src = os.path.join(work, "src")
os.makedirs(src)
good = os.path.join(src, "good.bpk")
r = run(["run", "gemm_small", "--record", good])
check(r.returncode == 0, f"record good: {r.returncode} {r.stderr[-300:]}")
bad = os.path.join(corpus, "bad.bpk")
r = run(["run", "gemm_small", "--fault", "flip:compute.m_left[0]@400", "--record", bad])
check(r.returncode == 1, f"record bad: {r.returncode}")
limit = os.path.join(corpus, "limit.bpk")
r = run(["run", "compute_bound", "--max-cycles", "1000", "--record", limit])
check(r.returncode == 3, f"record cycle limit: exit {r.returncode} (want 3)")
data = open(good, "rb").read()
shutil.copy(good, os.path.join(corpus, "good.bpk"))
shutil.copy(good, os.path.join(corpus, 'a&b<"c">.bpk'))
open(os.fsencode(corpus) + b"/bytes\xff\xfe.bpk", "wb").write(data)
open(os.path.join(corpus, "corrupt.bpk"), "wb").write(b"this is not a packet\x00\x01" * 20)
open(os.path.join(corpus, "truncated.bpk"), "wb").write(data[: len(data) // 2])

xml = os.path.join(work, "report.xml")
r = run(["replay", corpus, "--junit", xml])
check(r.returncode == 1, f"corpus exit {r.returncode} (want 1: a reproduced failure)")
lint = subprocess.run(["xmllint", "--noout", xml], capture_output=True, text=True)
check(lint.returncode == 0, f"xmllint: {lint.stderr}")

root = ET.parse(xml).getroot()
check(root.tag == "testsuites", "root is <testsuites>")
suites = root.findall("testsuite")
check(len(suites) == 1, "one <testsuite>")
suite = suites[0]
for el in (root, suite):
    for a in ("name", "tests", "failures", "errors", "skipped", "time"):
        check(a in el.attrib, f"<{el.tag}> has {a}")
    float(el.get("time", "x") if el.get("time") else "0")
cases = {c.get("name"): c for c in suite.findall("testcase")}
check(suite.get("tests") == "7", f"tests=7, got {suite.get('tests')}")
check(len(cases) == 7, f"7 testcases, got {sorted(cases)}")
for name, c in cases.items():
    for a in ("name", "classname", "time"):
        check(c.get(a) not in (None, ""), f"testcase {name!r} has {a}")
    check(float(c.get("time", "-1")) >= 0, f"testcase {name!r} time is a number")
    check(c.find("skipped") is None, f"testcase {name!r} is not skipped")
    for kind in ("failure", "error"):
        for e in c.findall(kind):
            for a in ("type", "message"):
                check(e.get(a), f"{name!r} <{kind}> has {a}")
            check((e.text or "").strip(), f"{name!r} <{kind}> has text")


def kind(name):
    c = cases.get(name)
    if c is None:
        return None
    if c.find("failure") is not None:
        return "failure:" + c.find("failure").get("type")
    if c.find("error") is not None:
        return "error:" + c.find("error").get("type")
    return "pass"


check(kind("good.bpk") == "pass", f"good.bpk passes: {kind('good.bpk')}")
check(kind('a&b<"c">.bpk') == "pass", f"XML-special name kept: {sorted(cases)}")
check(kind("bytes\ufffd\ufffd.bpk") == "pass", f"non-UTF-8 name replaced: {sorted(cases)}")
check(kind("bad.bpk") == "failure:reproduced", f"bad.bpk: {kind('bad.bpk')}")
check(kind("limit.bpk") == "failure:reproduced", f"limit.bpk: {kind('limit.bpk')}")
lf = cases["limit.bpk"].find("failure") if "limit.bpk" in cases else None
check(lf is not None and "cycle-limit" in (lf.get("message") or ""),
      "limit.bpk's message names cycle-limit")
check(kind("corrupt.bpk") == "error:incompatible", f"corrupt.bpk: {kind('corrupt.bpk')}")
check(kind("truncated.bpk") == "error:incompatible", f"truncated.bpk: {kind('truncated.bpk')}")
check(suite.get("failures") == "2", f"failures=2, got {suite.get('failures')}")
check(suite.get("errors") == "2", f"errors=2, got {suite.get('errors')}")
check(suite.get("skipped") == "0", f"skipped=0, got {suite.get('skipped')}")

empty = os.path.join(work, "empty")
os.makedirs(empty)
xml0 = os.path.join(work, "empty.xml")
r = run(["replay", empty, "--junit", xml0], text=True)
check(r.returncode == 0, f"empty corpus exit {r.returncode}")
check("no *.bpk packets" in r.stderr, f"empty corpus says so: {r.stderr!r}")
check(subprocess.run(["xmllint", "--noout", xml0]).returncode == 0, "empty report well-formed")
if os.path.exists(xml0):
    s0 = ET.parse(xml0).getroot().find("testsuite")
    check(s0 is not None and s0.get("tests") == "0" and s0.get("time") is not None,
          "empty report: tests=0 with time")

print("junit_report:", "FAILED" if failed else "ok", f"({len(failed)} problems)")
sys.exit(1 if failed else 0)
