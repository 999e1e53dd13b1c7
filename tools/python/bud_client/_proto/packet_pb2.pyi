from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
RECORD_ANNOTATION: RecordKind
RECORD_CHECKPOINT: RecordKind
RECORD_CHUNKS: RecordKind
RECORD_DESIGN_FILES: RecordKind
RECORD_HEADER: RecordKind
RECORD_INDEX: RecordKind
RECORD_INTERVENTION: RecordKind
RECORD_KIND_UNSPECIFIED: RecordKind
RECORD_RESULT: RecordKind
RECORD_STIMULUS: RecordKind
RECORD_SYMPTOM: RecordKind
RECORD_WINDOW: RecordKind

class Annotation(_message.Message):
    __slots__ = ["cycle", "text"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    text: str
    def __init__(self, cycle: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ["chunks", "cycle", "raw_size", "state_hash"]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    RAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    STATE_HASH_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedScalarFieldContainer[int]
    cycle: int
    raw_size: int
    state_hash: int
    def __init__(self, cycle: _Optional[int] = ..., raw_size: _Optional[int] = ..., chunks: _Optional[_Iterable[int]] = ..., state_hash: _Optional[int] = ...) -> None: ...

class Chunks(_message.Message):
    __slots__ = ["data", "ids", "sizes"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    ids: _containers.RepeatedScalarFieldContainer[int]
    sizes: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ids: _Optional[_Iterable[int]] = ..., sizes: _Optional[_Iterable[int]] = ..., data: _Optional[bytes] = ...) -> None: ...

class DesignFiles(_message.Message):
    __slots__ = ["expected", "files"]
    EXPECTED_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    expected: EmbeddedFile
    files: _containers.RepeatedCompositeFieldContainer[EmbeddedFile]
    def __init__(self, files: _Optional[_Iterable[_Union[EmbeddedFile, _Mapping]]] = ..., expected: _Optional[_Union[EmbeddedFile, _Mapping]] = ...) -> None: ...

class DesignOutcome(_message.Message):
    __slots__ = ["checked_bytes", "exit_code", "firmware_accesses", "first_mismatch", "message", "mismatch", "stage_names", "streams", "verdict"]
    class Verdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    class Stream(_message.Message):
        __slots__ = ["beats", "bytes", "hash", "name", "sink"]
        BEATS_FIELD_NUMBER: _ClassVar[int]
        BYTES_FIELD_NUMBER: _ClassVar[int]
        HASH_FIELD_NUMBER: _ClassVar[int]
        NAME_FIELD_NUMBER: _ClassVar[int]
        SINK_FIELD_NUMBER: _ClassVar[int]
        beats: int
        bytes: int
        hash: int
        name: str
        sink: bool
        def __init__(self, name: _Optional[str] = ..., sink: bool = ..., beats: _Optional[int] = ..., bytes: _Optional[int] = ..., hash: _Optional[int] = ...) -> None: ...
    CHECKED_BYTES_FIELD_NUMBER: _ClassVar[int]
    CYCLE_LIMIT: DesignOutcome.Verdict
    ERROR: DesignOutcome.Verdict
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    FAIL: DesignOutcome.Verdict
    FIRMWARE_ACCESSES_FIELD_NUMBER: _ClassVar[int]
    FIRST_MISMATCH_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MISMATCH_FIELD_NUMBER: _ClassVar[int]
    PASS: DesignOutcome.Verdict
    STAGE_NAMES_FIELD_NUMBER: _ClassVar[int]
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    UNCHECKED: DesignOutcome.Verdict
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    VERDICT_UNSPECIFIED: DesignOutcome.Verdict
    checked_bytes: int
    exit_code: int
    firmware_accesses: int
    first_mismatch: int
    message: str
    mismatch: bool
    stage_names: _containers.RepeatedScalarFieldContainer[str]
    streams: _containers.RepeatedCompositeFieldContainer[DesignOutcome.Stream]
    verdict: DesignOutcome.Verdict
    def __init__(self, verdict: _Optional[_Union[DesignOutcome.Verdict, str]] = ..., message: _Optional[str] = ..., stage_names: _Optional[_Iterable[str]] = ..., streams: _Optional[_Iterable[_Union[DesignOutcome.Stream, _Mapping]]] = ..., checked_bytes: _Optional[int] = ..., mismatch: bool = ..., first_mismatch: _Optional[int] = ..., firmware_accesses: _Optional[int] = ..., exit_code: _Optional[int] = ...) -> None: ...

class DesignRun(_message.Message):
    __slots__ = ["defines", "design_file", "max_cycles", "params", "quiet_cycles", "recorded_root", "seed"]
    DEFINES_FIELD_NUMBER: _ClassVar[int]
    DESIGN_FILE_FIELD_NUMBER: _ClassVar[int]
    MAX_CYCLES_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    QUIET_CYCLES_FIELD_NUMBER: _ClassVar[int]
    RECORDED_ROOT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    defines: _containers.RepeatedScalarFieldContainer[str]
    design_file: str
    max_cycles: int
    params: _containers.RepeatedScalarFieldContainer[str]
    quiet_cycles: int
    recorded_root: str
    seed: int
    def __init__(self, design_file: _Optional[str] = ..., recorded_root: _Optional[str] = ..., defines: _Optional[_Iterable[str]] = ..., params: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., max_cycles: _Optional[int] = ..., quiet_cycles: _Optional[int] = ...) -> None: ...

class DigestPoint(_message.Message):
    __slots__ = ["cycle", "digest"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    digest: int
    def __init__(self, cycle: _Optional[int] = ..., digest: _Optional[int] = ...) -> None: ...

class EmbeddedFile(_message.Message):
    __slots__ = ["hash", "path", "raw_size", "zstd"]
    HASH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    ZSTD_FIELD_NUMBER: _ClassVar[int]
    hash: int
    path: str
    raw_size: int
    zstd: bytes
    def __init__(self, path: _Optional[str] = ..., raw_size: _Optional[int] = ..., hash: _Optional[int] = ..., zstd: _Optional[bytes] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ["text"]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class Header(_message.Message):
    __slots__ = ["build_tags", "counter_names", "design", "design_run", "faults", "format_major", "format_minor", "intervals", "limits", "memory", "model_revision", "seeds", "start_cycle", "stimulus", "thermal", "tool_version", "triggers", "verilator_version", "workload"]
    BUILD_TAGS_FIELD_NUMBER: _ClassVar[int]
    COUNTER_NAMES_FIELD_NUMBER: _ClassVar[int]
    DESIGN_FIELD_NUMBER: _ClassVar[int]
    DESIGN_RUN_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_MAJOR_FIELD_NUMBER: _ClassVar[int]
    FORMAT_MINOR_FIELD_NUMBER: _ClassVar[int]
    INTERVALS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    MODEL_REVISION_FIELD_NUMBER: _ClassVar[int]
    SEEDS_FIELD_NUMBER: _ClassVar[int]
    START_CYCLE_FIELD_NUMBER: _ClassVar[int]
    STIMULUS_FIELD_NUMBER: _ClassVar[int]
    THERMAL_FIELD_NUMBER: _ClassVar[int]
    TOOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    VERILATOR_VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    build_tags: _containers.RepeatedScalarFieldContainer[str]
    counter_names: _containers.RepeatedScalarFieldContainer[str]
    design: str
    design_run: DesignRun
    faults: _containers.RepeatedCompositeFieldContainer[Fault]
    format_major: int
    format_minor: int
    intervals: Intervals
    limits: RunLimits
    memory: MemoryConfig
    model_revision: str
    seeds: Seeds
    start_cycle: int
    stimulus: HostStimulus
    thermal: ThermalModel
    tool_version: str
    triggers: _containers.RepeatedScalarFieldContainer[str]
    verilator_version: str
    workload: WorkloadSpec
    def __init__(self, format_major: _Optional[int] = ..., format_minor: _Optional[int] = ..., model_revision: _Optional[str] = ..., verilator_version: _Optional[str] = ..., tool_version: _Optional[str] = ..., build_tags: _Optional[_Iterable[str]] = ..., design: _Optional[str] = ..., seeds: _Optional[_Union[Seeds, _Mapping]] = ..., workload: _Optional[_Union[WorkloadSpec, _Mapping]] = ..., memory: _Optional[_Union[MemoryConfig, _Mapping]] = ..., limits: _Optional[_Union[RunLimits, _Mapping]] = ..., triggers: _Optional[_Iterable[str]] = ..., faults: _Optional[_Iterable[_Union[Fault, _Mapping]]] = ..., stimulus: _Optional[_Union[HostStimulus, _Mapping]] = ..., intervals: _Optional[_Union[Intervals, _Mapping]] = ..., start_cycle: _Optional[int] = ..., counter_names: _Optional[_Iterable[str]] = ..., thermal: _Optional[_Union[ThermalModel, _Mapping]] = ..., design_run: _Optional[_Union[DesignRun, _Mapping]] = ...) -> None: ...

class HostStimulus(_message.Message):
    __slots__ = ["commands", "image_bytes", "job_fingerprint", "poll_interval", "ring_base", "ring_entries"]
    COMMANDS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    JOB_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    POLL_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    RING_BASE_FIELD_NUMBER: _ClassVar[int]
    RING_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    commands: int
    image_bytes: int
    job_fingerprint: int
    poll_interval: int
    ring_base: int
    ring_entries: int
    def __init__(self, job_fingerprint: _Optional[int] = ..., ring_base: _Optional[int] = ..., ring_entries: _Optional[int] = ..., poll_interval: _Optional[int] = ..., commands: _Optional[int] = ..., image_bytes: _Optional[int] = ...) -> None: ...

class Index(_message.Message):
    __slots__ = ["entries"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[IndexEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[IndexEntry, _Mapping]]] = ...) -> None: ...

class IndexEntry(_message.Message):
    __slots__ = ["cycle", "kind", "offset"]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    cycle: int
    kind: RecordKind
    offset: int
    def __init__(self, kind: _Optional[_Union[RecordKind, str]] = ..., offset: _Optional[int] = ..., cycle: _Optional[int] = ...) -> None: ...

class Intervals(_message.Message):
    __slots__ = ["checkpoint", "digest"]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    checkpoint: int
    digest: int
    def __init__(self, digest: _Optional[int] = ..., checkpoint: _Optional[int] = ...) -> None: ...

class Intervention(_message.Message):
    __slots__ = ["bytes", "cycle", "element", "kind", "memory", "offset", "signal", "value", "width"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    BYTES_FIELD_NUMBER: _ClassVar[int]
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    DEPOSIT: Intervention.Kind
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    FORCE: Intervention.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_UNSPECIFIED: Intervention.Kind
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    MEMORY_WRITE: Intervention.Kind
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    RELEASE: Intervention.Kind
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    bytes: bytes
    cycle: int
    element: int
    kind: Intervention.Kind
    memory: str
    offset: int
    signal: str
    value: _containers.RepeatedScalarFieldContainer[int]
    width: int
    def __init__(self, kind: _Optional[_Union[Intervention.Kind, str]] = ..., cycle: _Optional[int] = ..., signal: _Optional[str] = ..., element: _Optional[int] = ..., width: _Optional[int] = ..., value: _Optional[_Iterable[int]] = ..., memory: _Optional[str] = ..., offset: _Optional[int] = ..., bytes: _Optional[bytes] = ...) -> None: ...

class MemoryConfig(_message.Message):
    __slots__ = ["base_latency", "burst_duty_pct", "burst_period", "bursty", "bytes_per_cycle", "jitter", "max_outstanding", "reorder", "size_bytes"]
    BASE_LATENCY_FIELD_NUMBER: _ClassVar[int]
    BURSTY_FIELD_NUMBER: _ClassVar[int]
    BURST_DUTY_PCT_FIELD_NUMBER: _ClassVar[int]
    BURST_PERIOD_FIELD_NUMBER: _ClassVar[int]
    BYTES_PER_CYCLE_FIELD_NUMBER: _ClassVar[int]
    JITTER_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTSTANDING_FIELD_NUMBER: _ClassVar[int]
    REORDER_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    base_latency: int
    burst_duty_pct: int
    burst_period: int
    bursty: bool
    bytes_per_cycle: int
    jitter: int
    max_outstanding: int
    reorder: bool
    size_bytes: int
    def __init__(self, size_bytes: _Optional[int] = ..., base_latency: _Optional[int] = ..., jitter: _Optional[int] = ..., bytes_per_cycle: _Optional[int] = ..., max_outstanding: _Optional[int] = ..., reorder: bool = ..., bursty: bool = ..., burst_period: _Optional[int] = ..., burst_duty_pct: _Optional[int] = ...) -> None: ...

class Result(_message.Message):
    __slots__ = ["counters", "cycles", "design", "failures", "output_digest", "passed", "stages", "state", "state_digest", "stopped"]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    CYCLES_FIELD_NUMBER: _ClassVar[int]
    DESIGN_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    STATE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    counters: _containers.RepeatedScalarFieldContainer[int]
    cycles: int
    design: DesignOutcome
    failures: _containers.RepeatedScalarFieldContainer[str]
    output_digest: int
    passed: bool
    stages: _containers.RepeatedCompositeFieldContainer[StageTotals]
    state: str
    state_digest: int
    stopped: bool
    def __init__(self, cycles: _Optional[int] = ..., state: _Optional[str] = ..., passed: bool = ..., failures: _Optional[_Iterable[str]] = ..., state_digest: _Optional[int] = ..., output_digest: _Optional[int] = ..., counters: _Optional[_Iterable[int]] = ..., stages: _Optional[_Iterable[_Union[StageTotals, _Mapping]]] = ..., stopped: bool = ..., design: _Optional[_Union[DesignOutcome, _Mapping]] = ...) -> None: ...

class RunLimits(_message.Message):
    __slots__ = ["hang_cycles", "max_cycles", "throttle_on_cycles", "throttle_period"]
    HANG_CYCLES_FIELD_NUMBER: _ClassVar[int]
    MAX_CYCLES_FIELD_NUMBER: _ClassVar[int]
    THROTTLE_ON_CYCLES_FIELD_NUMBER: _ClassVar[int]
    THROTTLE_PERIOD_FIELD_NUMBER: _ClassVar[int]
    hang_cycles: int
    max_cycles: int
    throttle_on_cycles: int
    throttle_period: int
    def __init__(self, max_cycles: _Optional[int] = ..., hang_cycles: _Optional[int] = ..., throttle_period: _Optional[int] = ..., throttle_on_cycles: _Optional[int] = ...) -> None: ...

class Seeds(_message.Message):
    __slots__ = ["memory", "verilator", "workload"]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    VERILATOR_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    memory: int
    verilator: int
    workload: int
    def __init__(self, workload: _Optional[int] = ..., memory: _Optional[int] = ..., verilator: _Optional[int] = ...) -> None: ...

class StageTotals(_message.Message):
    __slots__ = ["count", "open_cmd", "open_count", "open_sum", "sum"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    OPEN_CMD_FIELD_NUMBER: _ClassVar[int]
    OPEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    OPEN_SUM_FIELD_NUMBER: _ClassVar[int]
    SUM_FIELD_NUMBER: _ClassVar[int]
    count: int
    open_cmd: int
    open_count: int
    open_sum: int
    sum: int
    def __init__(self, count: _Optional[int] = ..., sum: _Optional[int] = ..., open_cmd: _Optional[int] = ..., open_count: _Optional[int] = ..., open_sum: _Optional[int] = ...) -> None: ...

class Stimulus(_message.Message):
    __slots__ = ["chunks", "hash", "raw_size"]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    RAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedScalarFieldContainer[int]
    hash: int
    raw_size: int
    def __init__(self, raw_size: _Optional[int] = ..., chunks: _Optional[_Iterable[int]] = ..., hash: _Optional[int] = ...) -> None: ...

class Symptom(_message.Message):
    __slots__ = ["cycle", "details", "kind", "message"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ASSERTION: Symptom.Kind
    CYCLE_FIELD_NUMBER: _ClassVar[int]
    CYCLE_LIMIT: Symptom.Kind
    DESIGN_ERROR: Symptom.Kind
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    HANG: Symptom.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_UNSPECIFIED: Symptom.Kind
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RESULT_MISMATCH: Symptom.Kind
    STAGE_MISMATCH: Symptom.Kind
    TRIGGER: Symptom.Kind
    cycle: int
    details: _containers.RepeatedScalarFieldContainer[str]
    kind: Symptom.Kind
    message: str
    def __init__(self, kind: _Optional[_Union[Symptom.Kind, str]] = ..., cycle: _Optional[int] = ..., message: _Optional[str] = ..., details: _Optional[_Iterable[str]] = ...) -> None: ...

class ThermalModel(_message.Message):
    __slots__ = ["ambient_mc", "c_nj_per_c", "counters", "fj", "frequency_khz", "hysteresis_mc", "r_mc_per_w", "trip_mc", "window_cycles"]
    AMBIENT_MC_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    C_NJ_PER_C_FIELD_NUMBER: _ClassVar[int]
    FJ_FIELD_NUMBER: _ClassVar[int]
    FREQUENCY_KHZ_FIELD_NUMBER: _ClassVar[int]
    HYSTERESIS_MC_FIELD_NUMBER: _ClassVar[int]
    R_MC_PER_W_FIELD_NUMBER: _ClassVar[int]
    TRIP_MC_FIELD_NUMBER: _ClassVar[int]
    WINDOW_CYCLES_FIELD_NUMBER: _ClassVar[int]
    ambient_mc: int
    c_nj_per_c: int
    counters: _containers.RepeatedScalarFieldContainer[str]
    fj: _containers.RepeatedScalarFieldContainer[int]
    frequency_khz: int
    hysteresis_mc: int
    r_mc_per_w: int
    trip_mc: int
    window_cycles: int
    def __init__(self, window_cycles: _Optional[int] = ..., frequency_khz: _Optional[int] = ..., ambient_mc: _Optional[int] = ..., trip_mc: _Optional[int] = ..., hysteresis_mc: _Optional[int] = ..., r_mc_per_w: _Optional[int] = ..., c_nj_per_c: _Optional[int] = ..., counters: _Optional[_Iterable[str]] = ..., fj: _Optional[_Iterable[int]] = ...) -> None: ...

class Window(_message.Message):
    __slots__ = ["counters", "digests", "end_cycle", "index", "stages", "start_cycle"]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    DIGESTS_FIELD_NUMBER: _ClassVar[int]
    END_CYCLE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    START_CYCLE_FIELD_NUMBER: _ClassVar[int]
    counters: _containers.RepeatedScalarFieldContainer[int]
    digests: _containers.RepeatedCompositeFieldContainer[DigestPoint]
    end_cycle: int
    index: int
    stages: _containers.RepeatedCompositeFieldContainer[StageTotals]
    start_cycle: int
    def __init__(self, index: _Optional[int] = ..., start_cycle: _Optional[int] = ..., end_cycle: _Optional[int] = ..., digests: _Optional[_Iterable[_Union[DigestPoint, _Mapping]]] = ..., stages: _Optional[_Iterable[_Union[StageTotals, _Mapping]]] = ..., counters: _Optional[_Iterable[int]] = ...) -> None: ...

class WorkloadSpec(_message.Message):
    __slots__ = ["name", "onnx_host_attention", "onnx_model", "onnx_per_channel", "origin", "precision", "text"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ONNX_HOST_ATTENTION_FIELD_NUMBER: _ClassVar[int]
    ONNX_MODEL_FIELD_NUMBER: _ClassVar[int]
    ONNX_PER_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    onnx_host_attention: bool
    onnx_model: bytes
    onnx_per_channel: bool
    origin: str
    precision: str
    text: str
    def __init__(self, name: _Optional[str] = ..., text: _Optional[str] = ..., origin: _Optional[str] = ..., precision: _Optional[str] = ..., onnx_model: _Optional[bytes] = ..., onnx_per_channel: bool = ..., onnx_host_attention: bool = ...) -> None: ...

class RecordKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
