"""Python client for the bud debug service (`bud serve`), for firmware teams' scripts.

    from bud_client import BudClient
    with BudClient("unix:/tmp/conv.sock") as bud:
        bud.check("trigger add stall when gemm.stall_mem > 1000 do halt")
        bud.continue_(wait=False)
        hit = bud.wait_event("trigger_hit", timeout=60)
        print(bud.counters("gemm.stall_mem", "gemm.active"))

The service is described in docs/remote.md; the wire contract is debugger/remote/remote.proto.
The generated stubs (remote_pb2, remote_pb2_grpc) are built into BUILD/python by CMake; set
BUD_PYTHON_STUBS to that directory if it is not ./build/python under the repository.
"""

from .client import BudClient, BudError, CommandResult, Event  # noqa: F401

__all__ = ["BudClient", "BudError", "CommandResult", "Event"]
