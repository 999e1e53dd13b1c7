"""Python client for the bud debug service (`bud serve`), for firmware teams' scripts.

    from bud_client import BudClient
    with BudClient("unix:/tmp/conv.sock") as bud:
        bud.check("trigger add stall when gemm.stall_mem > 1000 do halt")
        bud.continue_(wait=False)
        hit = bud.wait_event("trigger_hit", timeout=60)
        print(bud.counters("gemm.stall_mem", "gemm.active"))

The service is described in docs/remote.md; the wire contract is debugger/remote/remote.proto.
Install: pip install --no-build-isolation ./tools/python (needs Debian's python3-grpcio and
python3-protobuf; tools/python/README.md). The generated stubs are in bud_client._proto.
"""

from .client import BudClient, BudError, CommandResult, Event  # noqa: F401

__all__ = ["BudClient", "BudError", "CommandResult", "Event"]
