// What a packet says about its run, both ways: a RunSpec (the workload text, seeds, memory
// configuration, limits, faults) becomes a pb::Header when recording, and a header becomes a
// RunSpec and a PreparedRun when replaying. Also the symptom and result of a finished run.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/core/Fault.h"
#include "emu/drive/Intervention.h"
#include "emu/run/RunJob.h"
#include "emu/workload/Result.h"
#include "replay/packet.pb.h"

namespace bud::replay {

/// Everything that defines a run, as a packet records it.
struct RunSpec {
  std::string workload_text;    ///< the complete .textpb
  std::string workload_origin;  ///< built-in name or path (informational)
  /// Seeds, memory model, limits, faults. `options.seed` holds the data seed actually used;
  /// the `workload` and `progress` fields are ignored.
  run::RunOptions options;
  std::vector<std::string> triggers;     ///< trigger specs, as text (recorded only, for now)
  std::vector<std::string> annotations;  ///< user notes, recorded at the start cycle
};

/// The text of a built-in workload name, of a workload file, or of an ONNX model imported with
/// the run input drawn from `seed` and `import`'s choices (docs/import.md). Error names the file.
workload::Result<std::string> workload_text(const std::string& workload,
                                            std::optional<uint64_t> seed = std::nullopt,
                                            const run::ImportChoices& import = {});
/// A RunSpec for `options` (workload name or file), with the data seed frozen from `prepared`.
workload::Result<RunSpec> make_spec(const run::RunOptions& options,
                                    const run::PreparedRun& prepared);
/// Parses and lowers the spec's embedded workload and builds its host job: what run::prepare
/// does for a file, without the checks' models unless `with_checks`. Errors name
/// "packet:workload:LINE:COL".
workload::Result<run::PreparedRun> prepare_spec(const RunSpec& spec, bool with_checks = true);
/// Adds what checking a finished run needs (direct reference, golden model digests, lowering
/// check) to a run prepared without them. Error message or empty.
std::string add_checks(run::PreparedRun& prepared);

/// The header of a packet recording `spec` (intervals in cycles).
pb::Header make_header(const RunSpec& spec, const run::PreparedRun& prepared,
                       uint64_t digest_interval, uint64_t checkpoint_interval,
                       uint64_t start_cycle);
/// The run a header describes. Error if a recorded fault no longer parses.
workload::Result<RunSpec> spec_from_header(const pb::Header& header);

/// The symptom of a finished run (nullopt when it passed).
std::optional<pb::Symptom> symptom_of(const run::RunReport& report);
/// "result-mismatch", "assertion", "hang", "trigger", "design-error".
const char* symptom_kind_name(int kind);
pb::Result result_of(const run::RunReport& report);

/// The host job as the Stimulus record stores it (docs/packets.md): little-endian u32 ring_base,
/// ring_entries, poll_interval, command count, 4 x u64 per command, region count, then per
/// region u32 addr, u32 length and the bytes.
std::vector<uint8_t> encode_job(const emu::HostJob& job);
/// Inverse of encode_job. nullopt and `error` (naming the byte offset) on malformed input.
std::optional<emu::HostJob> decode_job(std::span<const uint8_t> bytes, std::string& error);

/// The packet form of an intervention (the signal by name).
pb::Intervention intervention_record(const drive::Intervention& iv, const emu::Emulator& emu);
/// Back, resolved against `emu` and validated (known kind, signal, element and width; memory
/// range): nullopt and `error` (naming the intervention's cycle) when it cannot apply here.
std::optional<drive::Intervention> intervention_from(const pb::Intervention& record,
                                                     const emu::Emulator& emu,
                                                     std::string& error);

/// Tool version and build tags recorded in every packet.
std::string tool_version();
std::vector<std::string> build_tags();

}  // namespace bud::replay
