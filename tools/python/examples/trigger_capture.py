#!/usr/bin/env python3
"""Arm counter triggers on a served emulation, run until one halts it, read the counters and
capture a waveform window around the hit.

    bud serve conv --listen unix:/tmp/conv.sock &
    tools/python/examples/trigger_capture.py unix:/tmp/conv.sock \
        --trigger "deps shots 1 when gemm.stall_dep > 200 do halt" --pre 100 --post 50

Prints one JSON object: the hit, the counters at the stop and the waveform written (inside the
server's --output-dir). Exit status 0 on success, 1 if no trigger fired, 2 on a usage error.
"""

import argparse
import json
import os
import sys

try:  # the installed package (pip install ./tools/python), else the source tree beside this file
    from bud_client import BudClient, BudError
except ModuleNotFoundError as e:
    if e.name != "bud_client":
        raise
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from bud_client import BudClient, BudError  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("address", help="unix:PATH or tcp:HOST:PORT of `bud serve`")
    p.add_argument("--token-file", help="the server's token file (TCP)")
    p.add_argument("--trigger", action="append", default=[],
                   help="a trigger in the one-line form (repeatable); the first with `halt` "
                        "stops the run")
    p.add_argument("--counters", default="gemm.active,gemm.stall_dep,gemm.starve,load.stall_mem",
                   help="comma-separated counters to report")
    p.add_argument("--pre", type=int, default=100, help="cycles before the hit to capture")
    p.add_argument("--post", type=int, default=50, help="cycles after the hit to capture")
    p.add_argument("--wave", default="trigger_window.fst", help="waveform file name")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for a hit")
    a = p.parse_args()
    triggers = a.trigger or ["deps shots 1 when gemm.stall_dep > 200 do halt",
                             "busy shots 1 when gemm.active > 100 do snapshot"]

    with BudClient(a.address, token_file=a.token_file, name="trigger_capture.py",
                   require_control=True) as bud:
        for t in triggers:
            bud.check("trigger add " + t)
        bud.continue_(wait=False)
        hits = []
        while True:
            ev = bud.wait_event(("trigger_hit", "stopped"), timeout=a.timeout)
            if ev.kind == "trigger_hit":
                hits.append(ev.fields)
                continue
            break  # stopped: a halt, the end of the program, or a breakpoint
        stop = ev.fields
        halted = [h for h in hits if h.get("halted")]
        if not halted:
            print(json.dumps({"error": "no trigger halted the run", "stop": stop,
                              "hits": hits}))
            return 1
        hit = halted[0]
        counters = bud.counters(*[c.strip() for c in a.counters.split(",") if c.strip()])
        cycle = int(hit["cycle"])
        first = max(0, cycle - a.pre)
        last = cycle + a.post
        wave = bud.check(f"wave dump {first} {last} {a.wave}")
        print(json.dumps({
            "hit": {"trigger": hit.get("trigger"), "cycle": cycle,
                    "values": {v["name"]: v.get("value", 0) for v in hit.get("values", [])}},
            "hits": len(hits),
            "stop": stop,
            "counters": counters,
            "waveform": {"file": wave.data.get("file"), "from": first, "to": last},
        }))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BudError as e:
        print(f"trigger_capture.py: {e}", file=sys.stderr)
        sys.exit(2)
