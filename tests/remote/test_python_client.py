#!/usr/bin/env python3
"""ctest: the Python client (tools/python/bud_client) and its example against `bud serve`.

    test_python_client.py --bud BUILD/bud --work BUILD [--installed]

Checks: the example arms counter triggers, runs, gets the trigger event, reads counters and
writes a waveform inside the server's output directory; an observer is refused changes; a
malformed request gets an error status and changes nothing; shutdown ends the server cleanly.
"""

import argparse
import faulthandler
import signal
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def fail(msg):
    print("FAIL: " + str(msg), file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    p = argparse.ArgumentParser()
    p.add_argument("--bud", required=True)
    p.add_argument("--installed", action="store_true",
                   help="use the installed bud_client package, not tools/python")
    p.add_argument("--work", default=tempfile.gettempdir())
    a = p.parse_args()
    if not a.installed:
        sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
    import grpc
    import bud_client
    from bud_client import BudClient, BudError
    if a.installed:
        check(os.path.realpath(bud_client.__file__).startswith(os.path.realpath(sys.prefix)),
              "bud_client not imported from the installed package: " + bud_client.__file__)

    work = os.path.realpath(tempfile.mkdtemp(prefix="remote_py_", dir=a.work))
    sock = os.path.join(work, "s.sock")
    out = os.path.join(work, "out")
    server = subprocess.Popen([a.bud, "serve", "gemm_small", "--listen", "unix:" + sock,
                               "--output-dir", out, "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT)
    try:
        line = server.stdout.readline()
        if not line.startswith("{"):
            server.kill()
            fail("bud serve did not start: " + server.stderr.read())
        check(json.loads(line)["listening"] == "unix:" + sock, line)
        check(oct(os.stat(sock).st_mode & 0o777) == "0o600", "socket mode")

        # The example, as a firmware engineer runs it.
        ex = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "python", "examples",
                                                          "trigger_capture.py"),
                             "unix:" + sock, "--pre", "100", "--post", "40"],
                            capture_output=True, text=True, timeout=120)
        check(ex.returncode == 0, "example failed: " + ex.stdout + ex.stderr)
        r = json.loads(ex.stdout)
        check(r["hit"]["trigger"] == "deps", r)
        check(r["hit"]["values"]["gemm.stall_dep"] == 201, r)
        check(r["stop"]["reasons"][0]["kind"] == "trigger", r)
        check(r["counters"]["gemm.stall_dep"] == 201, r)
        check(r["waveform"]["file"] == os.path.join(os.path.realpath(out), "trigger_window.fst"), r)
        check(os.path.getsize(r["waveform"]["file"]) > 1000, "waveform is empty")
        check(r["waveform"]["to"] - r["waveform"]["from"] == 140, r)

        # The library: controller and observer.
        with BudClient("unix:" + sock, name="py-controller") as c, \
                BudClient("unix:" + sock, name="py-observer") as o:
            check(c.role == "controller" and o.role == "observer", (c.role, o.role))
            s = c.status(digest=True)
            check(s["cycle"] == r["stop"]["cycle"], s)
            check(s["controller"] == "py-controller" and s["sessions"] == 2, s)
            digest = s["digest"]
            check(o.counter("gemm.stall_dep") == 201, "observer counter read")
            check(o.signal("cycle") == s["cycle"], "observer signal read")
            check(len(o.memory("dram", 0, 32)) == 32, "observer memory read")
            check(o.execute("print cycle").ok, "observer read-only command")
            try:
                o.execute("step")
                fail("an observer ran `step`")
            except BudError as e:
                check(e.code == "PERMISSION_DENIED", e)
            try:
                o.memory("dram", 2**63, 16)
                fail("read outside dram")
            except BudError as e:
                check(e.code == "OUT_OF_RANGE", e)
            # Malformed bytes to a real method: an error status, nothing changes.
            raw = c._channel.unary_unary("/bud.remote.v1.Debugger/Execute",
                                         request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
            try:
                raw(b"\xff\xff\xff\xff\x0f", metadata=c._md(), timeout=10)
                fail("malformed request accepted")
            except grpc.RpcError as e:
                check(e.code() != grpc.StatusCode.OK, e)
            check(c.status(digest=True)["digest"] == digest, "state changed")
            # A trigger file with bytes that are not UTF-8, read by the server: the error echoes
            # them as U+FFFD and the reply still decodes (issue 12).
            with open(os.path.join(out, "bad.trig"), "wb") as f:
                f.write(b"trigger t when cycle > 1 do h\xff\xfe\n")
            bad = c.execute("trigger load bad.trig")
            check(not bad.ok and "\ufffd" in bad.error, bad)
            # Run control from Python: step, then a background continue and its events.
            check(c.check("step 5").stop["cycle"] == s["cycle"] + 5, "step")
            c.continue_(wait=False)
            ev = o.wait_event("stopped", timeout=60,
                              where=lambda e: e.fields["cycle"] > s["cycle"] + 5)
            check(ev.fields["reasons"][0]["kind"] == "finished", ev)
            check(o.wait_event("run_finished", timeout=10).fields["state"] == "finished", "end")
            c.shutdown()
        rc = server.wait(timeout=20)
        check(rc == 0, "bud serve exit status %s: %s" % (rc, server.stderr.read()[-4000:]))
        check(not os.path.exists(sock), "socket left behind")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
