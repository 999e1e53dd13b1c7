// A complete run of a workload on the NPU: load and lower the workload, compute the golden model
// and the direct reference, run the RTL through the emulator, and check it bit-exactly at every
// stage boundary and on the final outputs. `bud run` is a thin CLI over this.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emu/core/EmulatorConfig.h"
#include "emu/core/StageTxn.h"
#include "emu/drive/Driver.h"
#include "emu/isa/Isa.h"
#include "emu/workload/Lowering.h"
#include "emu/workload/Quality.h"
#include "emu/workload/Reference.h"

namespace bud::run {

/// What to run and how.
/// How an ONNX model is imported when a run names one (docs/import.md): `bud import
/// --per-channel` and `--host-attention` as run options. Other workloads ignore them.
struct ImportChoices {
  bool per_channel = false;     ///< conv/dense weights quantised per output channel
  bool host_attention = false;  ///< activation x activation MatMuls on the host
  /// The ONNX model's bytes when they come from a packet (or are read once); empty: read the
  /// file RunOptions::workload names.
  std::string model;
  /// False for a packet from before format 2.3, which names an ONNX model it does not embed:
  /// the run is defined by its workload text alone, without the quality against the model.
  bool model_available = true;
};

/// The bytes of the ONNX model `options` names: the embedded ones, else the file's. Error
/// names the file.
workload::Result<std::string> onnx_model_bytes(const std::string& path, const ImportChoices& c);

struct RunOptions {
  std::string workload = "gemm_small";     ///< built-in name, path to a .textpb or .onnx file
  std::optional<uint64_t> seed;            ///< overrides the workload's data seed
  /// Overrides the workload's tile caps where non-zero (`--tile-rows`, `--tile-blocks`).
  workload::TileLimits tiles;
  emu::EmulatorConfig emulator;  ///< design, memory model (incl. its seed), throttle, watchdog
  std::vector<emu::FaultSpec> faults;      ///< injected faults (docs/faults.md)
  uint64_t max_cycles = 100'000'000;       ///< give up (as a hang) after this many cycles
  /// Power inputs the command line resolves into `emulator` (tools/bud RunCommand,
  /// resolve_power_options): an energy table (empty: the built-in one), an operating point to
  /// run at (its DRAM timing and energies), and whether the table's thermal model runs.
  std::string energy_table;
  std::string point;
  bool thermal = false;
  /// Precision assignment applied after loading (docs/workloads.md, "Precision"): "int8",
  /// "bf16" or "auto"; with the default `precision_origin`, anything else is a precision file's
  /// path (prepare reads it); with another origin, the file's text itself (origin names it in
  /// messages: a packet's). Empty: the workload's own precisions.
  std::string precision;
  std::string precision_origin = "precision";
  ImportChoices import;  ///< an ONNX workload's import (packets embed the imported text)
  /// Called about every `progress_interval` cycles with the current cycle (for progress bars).
  std::function<void(uint64_t)> progress;
  uint64_t progress_interval = 1u << 20;
};

/// A workload loaded, lowered and evaluated by the golden model and the reference: everything
/// needed to run and check the RTL. Bad input stops here with a message naming FILE:LINE:COL.
struct PreparedRun {
  workload::Workload workload;
  workload::Program program;
  workload::ReferenceResult reference;
  std::array<emu::StageDigest, emu::kNumStages> golden_digests{};
  uint64_t golden_saturations = 0;
  /// Golden-model outputs that differ from the direct reference: the lowering is wrong.
  std::vector<std::string> lowering_failures;
  emu::HostJob job;
  /// The precision assignment applied: RunOptions::precision with a file read into its text
  /// (what packets record).
  std::string precision;
  /// With a precision choice (RunOptions::precision): each layer's quality against the fp32
  /// network, the `auto` policy's fallbacks and the guardrail (docs/workloads.md).
  std::vector<workload::LayerQuality> quality;
  std::vector<workload::Fallback> fallbacks;
  double min_snr_db = 0;
  workload::Agreement agreement;  ///< the output's over the frozen inputs (with `quality`)
  /// An imported ONNX model with a precision choice: each layer's quality and the output's
  /// agreement against the ONNX model's own fp32 network (its float weights; docs/import.md),
  /// at the run's precisions. Empty otherwise.
  std::vector<workload::LayerQuality> onnx_quality;
  workload::Agreement onnx_agreement;
};

/// The workload text of an ONNX model (`bud import`'s output), with the run input drawn from
/// `seed` (default 1). Error message "FILE: node ..." on failure.
workload::Result<std::string> import_text(const std::string& path, std::optional<uint64_t> seed,
                                          const ImportChoices& choices = {});

/// The workload `options` name (built-in, .textpb or ONNX model), with its seed and tile caps,
/// before any precision choice. Error message (FILE:LINE:COL: ...) on failure.
workload::Result<workload::Workload> load_workload(const RunOptions& options);

/// `--precision` as given, resolved to text: int8, bf16 and auto stay as they are, anything else
/// is a precision file's path, read into its text (`origin`: the path; otherwise "precision").
struct PrecisionText {
  std::string text, origin;
};
/// Error: "--precision X: neither int8, bf16, auto nor a readable precision file".
workload::Result<PrecisionText> read_precision(const std::string& precision);

/// A precision assignment applied to a workload (RunOptions::precision).
struct AppliedPrecision {
  std::string text;    ///< the assignment, a precision file read into its text
  std::string origin;  ///< what names it in messages (the file's path)
  std::vector<workload::Fallback> fallbacks;  ///< `auto`'s
  double min_snr_db = 0;                      ///< the workload's guardrail
};
/// Applies options.precision to `w` for `array` (`auto` evaluates the network): what
/// prepare_workload does first. Error for an unreadable file or a bad assignment (ORIGIN:LINE:COL).
workload::Result<AppliedPrecision> apply_precision(workload::Workload& w, const RunOptions& options,
                                                   const isa::ArrayConfig& array);

/// Loads a built-in, a .textpb file or an ONNX model (imported, docs/import.md). Returns the error
/// message (FILE:LINE:COL: ...) on failure.
workload::Result<PreparedRun> prepare(const RunOptions& options);
/// The same for a workload already parsed (e.g. from text embedded in a packet). Without
/// `with_checks` the direct reference and golden model are skipped (add_checks adds them).
workload::Result<PreparedRun> prepare_workload(workload::Workload w, const RunOptions& options,
                                               bool with_checks = true);
/// Computes what checking needs: the direct reference, the golden model's stage digests and
/// saturations, and the lowering check. Error message (golden model rejected the program) or empty.
std::string add_checks(PreparedRun& prepared);

/// Result of one run.
struct RunReport {
  std::string workload;
  uint64_t seed = 0;
  uint64_t mem_seed = 0;
  std::string model_revision;
  isa::ArrayConfig array = isa::default_array();  ///< the MAC array the program was lowered for
  uint64_t cycles = 0;
  /// Cycles the run's driver stepped (re-executions to go back in time excluded): equal to
  /// `cycles` when the run was simulated once, whatever observed it (checks, triggers, recorder).
  uint64_t driven_cycles = 0;
  emu::RunState state = emu::RunState::Ready;
  std::string message;            ///< hang/assertion/error detail
  bool bad_input = false;         ///< the run could not start (e.g. a fault names no signal)
  bool passed = false;            ///< finished, all stages and outputs match
  std::vector<std::string> failures;  ///< one line per failed check
  /// The design's counters at the end (names: its describe().counters, same order).
  std::vector<std::string> counter_names;
  std::vector<uint64_t> counters;
  std::array<emu::StageDigest, emu::kNumStages> rtl_digests{};
  std::array<emu::StageDigest, emu::kNumStages> golden_digests{};
  uint64_t commands = 0;
  /// A layer run on the host (docs/import.md): its op and the cycles the cost model charges.
  struct HostLayer {
    std::string name, op;
    uint64_t cycles = 0;
  };
  std::vector<HostLayer> host_layers;
  /// The precision mix (docs/workloads.md, "Precision"): every NPU layer's precision, its
  /// output's element type and, when it was raised to BF16, the layer that caused it.
  struct LayerPrecision {
    std::string name, precision, out_type, promoted_by;
  };
  std::vector<LayerPrecision> precisions;
  /// Quality per layer, fallbacks and guardrail (PreparedRun's; empty without --precision).
  std::vector<workload::LayerQuality> quality;
  std::vector<workload::Fallback> fallbacks;
  double min_snr_db = 0;
  workload::Agreement agreement;
  std::vector<workload::LayerQuality> onnx_quality;  ///< PreparedRun's
  workload::Agreement onnx_agreement;
  uint64_t host_cycles = 0;  ///< sum over host_layers; not included in `cycles` (NPU cycles)
  /// host_cycles / (cycles + host_cycles): the share of the end-to-end time spent on the host.
  double host_share() const {
    const uint64_t total = cycles + host_cycles;
    return total ? static_cast<double>(host_cycles) / static_cast<double>(total) : 0.0;
  }
  /// The harness's thermal model at the end (when it ran: options.emulator.thermal).
  struct Thermal {
    int64_t temp_mc = 0, peak_mc = 0;
    uint64_t clamp_events = 0, clamped_cycles = 0;
  };
  std::optional<Thermal> thermal;
  uint64_t state_digest = 0;      ///< emulator digest at the end
  uint64_t output_digest = 0;     ///< DRAM contents digest at the end
  /// Value of the named counter (0 if the design has none of that name).
  uint64_t counter(std::string_view name) const;
  /// Useful MACs against the peak of the precision each ran at: (macs_useful +
  /// macs_useful_bf16) / (cycles x the array's int8 MACs per cycle), a BF16 MAC counting two
  /// int8 slots (its rate is half). The int8 figure on an int8 run; 0 on a design without the
  /// NPU's counters.
  double mac_utilization() const;
  /// One precision mode's share of the run (docs/workloads.md, "Precision"): its NPU layers,
  /// MACs, and MAC-array cycles (GEMM iterations: macs_issued / the mode's MACs per iteration).
  struct ModeFigures {
    uint64_t layers = 0, macs_useful = 0, macs_issued = 0, array_cycles = 0;
  };
  /// int8 (index 0) and bf16 (index 1), from the PMU's counters and the precision mix.
  std::array<ModeFigures, 2> precision_mix() const;
};

/// Loads the prepared job into `emu` and adds the options' faults. Error message or empty.
std::string start(const PreparedRun& prepared, const RunOptions& options, emu::Emulator& emu);

/// Runs a prepared workload on a fresh emulator of the design `options.emulator` names.
RunReport execute(const PreparedRun& prepared, const RunOptions& options);

/// The checks of a finished run beyond the stage transactions: the outputs in DRAM against the
/// direct reference, and the PMU's saturation count against the golden model's. One line per
/// failure ("outputs: ...", "saturations: ..."); empty when both match.
std::vector<std::string> check_results(const PreparedRun& prepared, const emu::Emulator& emu);

/// Runs `emu` (already loaded with prepared.job) to the end and checks it: stage by stage and on
/// its outputs against the golden model when the design runs the NPU's ISA (describe().isa),
/// on its end state alone otherwise.
RunReport finish(const PreparedRun& prepared, const RunOptions& options, emu::Emulator& emu);
/// The same through `driver` (and its emulator), with whatever participants the caller
/// added (recorder, triggers); the options' progress callback is added for the run. `stop`
/// (optional) receives why the driver stopped: a participant's halt leaves the state Ready and
/// the report's state CycleLimit, which the caller that installed the participant reinterprets.
RunReport finish(const PreparedRun& prepared, const RunOptions& options, drive::Driver& driver,
                 drive::DriveStop* stop = nullptr);
/// The second half of finish(), after the driver stopped (`ds`, having driven `driven_cycles`):
/// the report, the final digests and every check. Separate so that the benchmark can time the
/// per-cycle loop and this per-run fixed cost apart (docs/performance.md).
RunReport conclude(const PreparedRun& prepared, const RunOptions& options, emu::Emulator& emu,
                   const drive::DriveStop& ds, uint64_t driven_cycles);

}  // namespace bud::run
