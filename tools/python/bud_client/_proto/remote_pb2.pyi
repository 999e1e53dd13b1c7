from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ROLE_CONTROLLER: Role
ROLE_OBSERVER: Role
ROLE_UNSPECIFIED: Role

class AttachRequest(_message.Message):
    __slots__ = ["client_name", "require_control", "want_control"]
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_CONTROL_FIELD_NUMBER: _ClassVar[int]
    WANT_CONTROL_FIELD_NUMBER: _ClassVar[int]
    client_name: str
    require_control: bool
    want_control: bool
    def __init__(self, client_name: _Optional[str] = ..., want_control: bool = ..., require_control: bool = ...) -> None: ...

class Attached(_message.Message):
    __slots__ = ["cycle", "protocol_minor", "role", "running", "session_id", "workload"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_MINOR_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    protocol_minor: int
    role: Role
    running: bool
    session_id: str
    workload: str
    def __init__(self, session_id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., protocol_minor: _Optional[int] = ..., workload: _Optional[str] = ..., cycle: _Optional[int] = ..., running: bool = ...) -> None: ...

class CommandReply(_message.Message):
    __slots__ = ["cycle", "data_json", "error", "lines", "ok", "quit", "running", "stop"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    QUIT_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    data_json: str
    error: str
    lines: _containers.RepeatedScalarFieldContainer[str]
    ok: bool
    quit: bool
    running: bool
    stop: StopInfo
    def __init__(self, ok: bool = ..., error: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., data_json: _Optional[str] = ..., cycle: _Optional[int] = ..., stop: _Optional[_Union[StopInfo, _Mapping]] = ..., quit: bool = ..., running: bool = ...) -> None: ...

class CompleteReply(_message.Message):
    __slots__ = ["candidates"]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, candidates: _Optional[_Iterable[str]] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ["line"]
    LINE_FIELD_NUMBER: _ClassVar[int]
    line: str
    def __init__(self, line: _Optional[str] = ...) -> None: ...

class ContinueRequest(_message.Message):
    __slots__ = ["cycles", "wait"]
    CYCLES_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    cycles: int
    wait: bool
    def __init__(self, cycles: _Optional[int] = ..., wait: bool = ...) -> None: ...

class ControlChanged(_message.Message):
    __slots__ = ["controller"]
    CONTROLLER_FIELD_NUMBER: _ClassVar[int]
    controller: str
    def __init__(self, controller: _Optional[str] = ...) -> None: ...

class ControlReply(_message.Message):
    __slots__ = ["controller", "role"]
    CONTROLLER_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    controller: str
    role: Role
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., controller: _Optional[str] = ...) -> None: ...

class ControlRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Counter(_message.Message):
    __slots__ = ["delta", "name", "value"]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    delta: int
    name: str
    value: int
    def __init__(self, name: _Optional[str] = ..., value: _Optional[int] = ..., delta: _Optional[int] = ...) -> None: ...

class Counters(_message.Message):
    __slots__ = ["counters", "cycle"]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    counters: _containers.RepeatedCompositeFieldContainer[Counter]
    cycle: int
    def __init__(self, cycle: _Optional[int] = ..., counters: _Optional[_Iterable[_Union[Counter, _Mapping]]] = ...) -> None: ...

class DetachReply(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DetachRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Event(_message.Message):
    __slots__ = ["attached", "control_changed", "run_finished", "running", "sequence", "stopped", "symptom", "trigger_hit"]
    ATTACHED_FIELD_NUMBER: _ClassVar[int]
    CONTROL_CHANGED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    RUN_FINISHED_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    SYMPTOM_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_HIT_FIELD_NUMBER: _ClassVar[int]
    attached: Attached
    control_changed: ControlChanged
    run_finished: RunFinished
    running: Running
    sequence: int
    stopped: StopInfo
    symptom: Symptom
    trigger_hit: TriggerHit
    def __init__(self, sequence: _Optional[int] = ..., attached: _Optional[_Union[Attached, _Mapping]] = ..., running: _Optional[_Union[Running, _Mapping]] = ..., stopped: _Optional[_Union[StopInfo, _Mapping]] = ..., trigger_hit: _Optional[_Union[TriggerHit, _Mapping]] = ..., symptom: _Optional[_Union[Symptom, _Mapping]] = ..., run_finished: _Optional[_Union[RunFinished, _Mapping]] = ..., control_changed: _Optional[_Union[ControlChanged, _Mapping]] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ["line"]
    LINE_FIELD_NUMBER: _ClassVar[int]
    line: str
    def __init__(self, line: _Optional[str] = ...) -> None: ...

class FaultList(_message.Message):
    __slots__ = ["faults"]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    faults: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, faults: _Optional[_Iterable[str]] = ...) -> None: ...

class InjectFaultRequest(_message.Message):
    __slots__ = ["spec"]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: str
    def __init__(self, spec: _Optional[str] = ...) -> None: ...

class InterruptReply(_message.Message):
    __slots__ = ["was_running"]
    WAS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    was_running: bool
    def __init__(self, was_running: bool = ...) -> None: ...

class InterruptRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListFaultsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class LoadTriggersRequest(_message.Message):
    __slots__ = ["name", "text"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    text: str
    def __init__(self, text: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class MemoryBytes(_message.Message):
    __slots__ = ["cycle", "data"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    data: bytes
    def __init__(self, data: _Optional[bytes] = ..., cycle: _Optional[int] = ...) -> None: ...

class ReadCountersRequest(_message.Message):
    __slots__ = ["names"]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class ReadMemoryRequest(_message.Message):
    __slots__ = ["length", "memory", "offset"]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    length: int
    memory: str
    offset: int
    def __init__(self, memory: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class ReadSignalRequest(_message.Message):
    __slots__ = ["name"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RunFinished(_message.Message):
    __slots__ = ["cycle", "state"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    state: str
    def __init__(self, state: _Optional[str] = ..., cycle: _Optional[int] = ...) -> None: ...

class Running(_message.Message):
    __slots__ = ["cycle"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    def __init__(self, cycle: _Optional[int] = ...) -> None: ...

class ShutdownReply(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ShutdownRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class SignalValue(_message.Message):
    __slots__ = ["bits", "cycle", "name", "value", "width"]
    BITS_FIELD_NUMBER: _ClassVar[int]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    bits: bytes
    cycle: int
    name: str
    value: int
    width: int
    def __init__(self, name: _Optional[str] = ..., width: _Optional[int] = ..., value: _Optional[int] = ..., bits: _Optional[bytes] = ..., cycle: _Optional[int] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ["controller", "cycle", "digest", "end_cycle", "furthest_cycle", "has_end_cycle", "role", "running", "sessions", "state", "trigger_hits", "workload"]
    CONTROLLER_FIELD_NUMBER: _ClassVar[int]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    END_CYCLE_FIELD_NUMBER: _ClassVar[int]
    FURTHEST_CYCLE_FIELD_NUMBER: _ClassVar[int]
    HAS_END_CYCLE_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_HITS_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    controller: str
    cycle: int
    digest: int
    end_cycle: int
    furthest_cycle: int
    has_end_cycle: bool
    role: Role
    running: bool
    sessions: int
    state: str
    trigger_hits: int
    workload: str
    def __init__(self, cycle: _Optional[int] = ..., state: _Optional[str] = ..., running: bool = ..., furthest_cycle: _Optional[int] = ..., has_end_cycle: bool = ..., end_cycle: _Optional[int] = ..., workload: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., controller: _Optional[str] = ..., sessions: _Optional[int] = ..., digest: _Optional[int] = ..., trigger_hits: _Optional[int] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ["digest"]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    digest: bool
    def __init__(self, digest: bool = ...) -> None: ...

class StopInfo(_message.Message):
    __slots__ = ["cycle", "reasons"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    reasons: _containers.RepeatedCompositeFieldContainer[StopReason]
    def __init__(self, cycle: _Optional[int] = ..., reasons: _Optional[_Iterable[_Union[StopReason, _Mapping]]] = ...) -> None: ...

class StopReason(_message.Message):
    __slots__ = ["detail", "id", "kind"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    detail: str
    id: int
    kind: str
    def __init__(self, kind: _Optional[str] = ..., id: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class Symptom(_message.Message):
    __slots__ = ["cycle", "kind", "message"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    kind: str
    message: str
    def __init__(self, kind: _Optional[str] = ..., cycle: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class TriggerHit(_message.Message):
    __slots__ = ["captures", "cycle", "halted", "messages", "number", "trigger", "trigger_id", "values"]
    CAPTURES_FIELD_NUMBER: _ClassVar[int]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    HALTED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_ID_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    captures: _containers.RepeatedScalarFieldContainer[str]
    cycle: int
    halted: bool
    messages: _containers.RepeatedScalarFieldContainer[str]
    number: int
    trigger: str
    trigger_id: int
    values: _containers.RepeatedCompositeFieldContainer[Counter]
    def __init__(self, cycle: _Optional[int] = ..., trigger_id: _Optional[int] = ..., trigger: _Optional[str] = ..., number: _Optional[int] = ..., halted: bool = ..., values: _Optional[_Iterable[_Union[Counter, _Mapping]]] = ..., captures: _Optional[_Iterable[str]] = ..., messages: _Optional[_Iterable[str]] = ...) -> None: ...

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
