"""BudClient: one session with a `bud serve` debug server (see bud_client/__init__.py)."""

import json
import os
import queue
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union


def _import_grpc() -> Any:
    """Imports grpc and protobuf, or raises one ImportError naming the Debian packages."""
    try:
        import grpc as grpc_module
        import google.protobuf  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"bud_client needs gRPC and protobuf for Python ({e}); on Debian/Ubuntu: "
            "apt-get install python3-grpcio python3-protobuf (in a venv, create it with "
            "--system-site-packages)") from e
    return grpc_module


grpc = _import_grpc()
from ._proto import remote_pb2 as pb  # noqa: E402  (generated; needs grpc and protobuf)
from ._proto import remote_pb2_grpc as pb_grpc  # noqa: E402


def _details(e: Any) -> str:
    """The status message of a gRPC error as text, whatever bytes the server sent (grpc hands
    over undecodable details as bytes or latin-1; never raise while reporting an error)."""
    d = e.details()
    if isinstance(d, bytes):
        return d.decode("utf-8", "replace")
    return d if isinstance(d, str) else ""


class BudError(RuntimeError):
    """A failed command or call. `code` is the gRPC status code name or "COMMAND"."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class CommandResult:
    """What one prompt command produced (the fields of `bud debug --json`)."""
    ok: bool
    error: str
    lines: List[str]
    data: Dict[str, Any]
    cycle: int
    stop: Optional[Dict[str, Any]] = None
    running: bool = False

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class Event:
    """One event of the session's stream: kind is attached, running, stopped, trigger_hit,
    symptom, run_finished or control_changed; fields holds its message as a dict."""
    sequence: int
    kind: str
    fields: Dict[str, Any] = field(default_factory=dict)


def _to_dict(msg: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for desc, value in msg.ListFields():
        if desc.label == desc.LABEL_REPEATED:
            out[desc.name] = [_to_dict(v) if hasattr(v, "ListFields") else v for v in value]
        elif hasattr(value, "ListFields"):
            out[desc.name] = _to_dict(value)
        else:
            out[desc.name] = value
    return out


class BudClient:
    """A session with a bud debug server. Attaches on construction (as controller when
    `control` and the role is free, else as a read-only observer); close() detaches and leaves
    the emulation as it is."""

    def __init__(self, address: str, token_file: Optional[str] = None, name: str = "bud_client",
                 control: bool = True, require_control: bool = False,
                 timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._token = None
        if token_file:
            with open(token_file) as f:
                self._token = f.readline().strip()
        target = self._target(address)
        options = [("grpc.max_receive_message_length", 8 << 20),
                   ("grpc.use_local_subchannel_pool", 1)]
        self._channel = grpc.insecure_channel(target, options=options)
        grpc.channel_ready_future(self._channel).result(timeout=timeout)
        self._stub = pb_grpc.DebuggerStub(self._channel)
        self._events: "queue.Queue[Event]" = queue.Queue(maxsize=4096)
        self._stream = self._stub.Attach(
            pb.AttachRequest(client_name=name, want_control=control,
                             require_control=require_control),
            metadata=self._auth())
        try:
            first = next(self._stream)
        except grpc.RpcError as e:
            self._channel.close()
            raise BudError(e.code().name, _details(e)) from None
        self.attached = first.attached
        self.session_id = first.attached.session_id
        self.role = "controller" if first.attached.role == pb.ROLE_CONTROLLER else "observer"
        self.workload = first.attached.workload
        self._closed = False
        self._reader = threading.Thread(target=self._read_events, daemon=True)
        self._reader.start()

    # --- plumbing -----------------------------------------------------------------------------
    @staticmethod
    def _target(address: str) -> str:
        if address.startswith("unix:"):
            path = address[5:]
            return "unix:" + os.path.abspath(path)
        if address.startswith("tcp:"):
            return address[4:]
        raise ValueError(f"{address!r}: expected unix:PATH or tcp:HOST:PORT")

    def _auth(self) -> List[Tuple[str, str]]:
        return [("authorization", "Bearer " + self._token)] if self._token else []

    def _md(self) -> List[Tuple[str, str]]:
        return self._auth() + [("bud-session", self.session_id)]

    def _call(self, method: Callable[..., Any], request: Any,
              timeout: Optional[float] = -1.0) -> Any:
        try:
            return method(request, metadata=self._md(),
                          timeout=self.timeout if timeout == -1.0 else timeout)
        except grpc.RpcError as e:
            raise BudError(e.code().name, _details(e)) from None

    def _read_events(self) -> None:
        try:
            for ev in self._stream:
                kind = ev.WhichOneof("kind") or "unknown"
                item = Event(ev.sequence, kind, _to_dict(getattr(ev, kind)) if kind != "unknown"
                             else {})
                try:
                    self._events.put_nowait(item)
                except queue.Full:  # drop the oldest, keep the newest
                    try:
                        self._events.get_nowait()
                    except queue.Empty:
                        pass
                    self._events.put_nowait(item)
        except grpc.RpcError:
            pass

    # --- commands -----------------------------------------------------------------------------
    @staticmethod
    def _result(r) -> CommandResult:
        return CommandResult(ok=r.ok, error=r.error, lines=list(r.lines),
                             data=json.loads(r.data_json) if r.data_json else {},
                             cycle=r.cycle, stop=_to_dict(r.stop) if r.HasField("stop") else None,
                             running=r.running)

    def execute(self, line: str, timeout: Optional[float] = None) -> CommandResult:
        """Runs one `bud debug` prompt line (blocking; run commands wait for their stop)."""
        return self._result(self._call(self._stub.Execute, pb.ExecuteRequest(line=line), timeout))

    def check(self, line: str, timeout: Optional[float] = None) -> CommandResult:
        """execute() that raises BudError when the command fails."""
        r = self.execute(line, timeout)
        if not r.ok:
            raise BudError("COMMAND", f"{line}: {r.error}")
        return r

    def continue_(self, cycles: int = 0, wait: bool = True,
                  timeout: Optional[float] = None) -> CommandResult:
        """Continues (breakpoints and triggers armed). wait=False returns at once; the stop then
        arrives as a "stopped" event (wait_event("stopped"))."""
        return self._result(self._call(self._stub.Continue,
                                       pb.ContinueRequest(cycles=cycles, wait=wait), timeout))

    def interrupt(self) -> bool:
        """Stops a run at its next cycle. Returns whether one was running."""
        return self._call(self._stub.Interrupt, pb.InterruptRequest()).was_running

    def status(self, digest: bool = False) -> Dict[str, Any]:
        s = self._call(self._stub.GetStatus, pb.StatusRequest(digest=digest))
        d = {f.name: getattr(s, f.name) for f in s.DESCRIPTOR.fields}
        d["role"] = "controller" if s.role == pb.ROLE_CONTROLLER else "observer"
        return d

    def counters(self, *names: str) -> Dict[str, int]:
        """PMU counter values by name (all of them when no name is given)."""
        r = self._call(self._stub.ReadCounters, pb.ReadCountersRequest(names=list(names)))
        return {c.name: c.value for c in r.counters}

    def counter(self, name: str) -> int:
        return self.counters(name)[name[4:] if name.startswith("pmu.") else name]

    def signal(self, name: str) -> int:
        """Low 64 bits of a signal, counter or CSR."""
        return self._call(self._stub.ReadSignal, pb.ReadSignalRequest(name=name)).value

    def memory(self, memory: str, offset: int, length: int) -> bytes:
        return self._call(self._stub.ReadMemory,
                          pb.ReadMemoryRequest(memory=memory, offset=offset, length=length)).data

    def load_triggers(self, text: str, name: str = "<python>") -> List[int]:
        """Adds the triggers of a trigger file's text; returns their ids."""
        r = self._result(self._call(self._stub.LoadTriggers,
                                    pb.LoadTriggersRequest(text=text, name=name)))
        if not r.ok:
            raise BudError("COMMAND", r.error)
        return list(r.data.get("ids", []))

    def faults(self) -> List[str]:
        return list(self._call(self._stub.ListFaults, pb.ListFaultsRequest()).faults)

    def take_control(self) -> bool:
        r = self._call(self._stub.TakeControl, pb.ControlRequest())
        self.role = "controller" if r.role == pb.ROLE_CONTROLLER else "observer"
        return self.role == "controller"

    def release_control(self) -> None:
        self._call(self._stub.ReleaseControl, pb.ControlRequest())
        self.role = "observer"

    def shutdown(self) -> None:
        """Stops the server (controller only)."""
        self._call(self._stub.Shutdown, pb.ShutdownRequest())

    # --- events -------------------------------------------------------------------------------
    def next_event(self, timeout: Optional[float] = None) -> Optional[Event]:
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def wait_event(self, kinds: Union[Iterable[str], str], timeout: float = 60.0,
                   where: Optional[Callable[[Event], bool]] = None) -> Event:
        """Waits for the next event of one of `kinds` (for which `where`, if given, holds);
        others are skipped. Raises BudError (DEADLINE_EXCEEDED) on timeout."""
        import time
        wanted = {kinds} if isinstance(kinds, str) else set(kinds)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise BudError("DEADLINE_EXCEEDED", f"no {sorted(wanted)} event in {timeout} s")
            ev = self.next_event(timeout=left)
            if ev is not None and ev.kind in wanted and (where is None or where(ev)):
                return ev

    # --- lifetime -----------------------------------------------------------------------------
    def close(self) -> None:
        """Detaches (the emulation goes on) and closes the connection."""
        if self._closed:
            return
        self._closed = True
        try:
            self._stub.Detach(pb.DetachRequest(), metadata=self._md(), timeout=2)
        except grpc.RpcError:
            pass
        self._stream.cancel()
        self._reader.join(timeout=5)
        self._channel.close()

    def __enter__(self) -> "BudClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
