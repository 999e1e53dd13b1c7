#include "profile/RecordedRun.h"

#include <cstring>
#include <fstream>

#include "emu/run/Designs.h"
#include "replay/Framing.h"
#include "replay/PacketRun.h"
#include "replay/Replayer.h"

namespace bud::profile {

using workload::Error;

bool is_packet_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[sizeof replay::kFileMagic] = {};
  if (!f.read(magic, sizeof magic)) return false;
  return std::memcmp(magic, replay::kFileMagic, sizeof magic) == 0;
}

workload::Result<RecordedRun> load_recorded_run(const std::string& path) {
  RecordedRun r;
  std::string error;
  auto packet = replay::read_packet(path, error);
  if (!packet) return Error{error};
  r.packet = std::move(*packet);
  const replay::Packet& p = r.packet;
  if (!p.complete)
    return Error{path + ": incomplete packet (" + p.incomplete +
                 "; the recording was interrupted): nothing to profile exactly"};
  if (p.major < replay::kFormatMajor)
    return Error{path + ": recorded by an older packet format (" + std::to_string(p.major) + "." +
                 std::to_string(p.minor) + "); record it again to profile it"};
  std::string design_error;
  const std::string revision = emu::packet_design_revision(p.header.design(), design_error);
  if (revision.empty()) return Error{path + ": " + design_error};
  if (p.header.model_revision() != revision)
    return Error{path + ": recorded with model revision " + p.header.model_revision() +
                 ", this bud has " + revision +
                 ": its profile here would not be the recorded run's"};
  if (p.header.start_cycle() != 0)
    return Error{path + ": records cycles from " + std::to_string(p.header.start_cycle()) +
                 " (a range of a debug session): profiling needs the run from cycle 0"};
  // The stimulus decodes and matches its fingerprint (what every replaying command refuses).
  if (!replay::replayable_job(p, error, false)) return Error{error};
  auto spec = replay::spec_from_header(p.header);
  if (!spec) return Error{path + ": " + spec.error()};
  auto prepared = replay::prepare_spec(*spec, true);
  if (!prepared) return Error{path + ": embedded workload: " + prepared.error()};
  if (prepared->job.fingerprint() != p.header.stimulus().job_fingerprint())
    return Error{path + ": the embedded workload no longer generates the recorded stimulus"};
  r.options = spec->options;
  r.options.progress = nullptr;
  // A recording stopped before the run's end profiles what it recorded (exit 3, as the cycle
  // budget), as `bud replay` replays only the recorded prefix.
  r.prefix = !(p.result && !p.result->stopped());
  if (r.prefix) r.options.max_cycles = p.last_cycle();
  r.prepared = std::move(prepared).value();
  return r;
}

ProfiledRun run_recorded(const RecordedRun& recorded, uint64_t trace_window) {
  const replay::Packet& p = recorded.packet;
  auto interventions = [&p](const emu::Emulator& emu,
                            std::string& error) -> std::optional<std::vector<drive::Intervention>> {
    std::vector<drive::Intervention> log;
    for (const auto& record : p.interventions) {
      auto iv = replay::intervention_from(record, emu, error);
      if (!iv) {
        error = p.name + ": " + error;
        return std::nullopt;
      }
      log.push_back(std::move(*iv));
    }
    return log;
  };
  return run_profiled(recorded.prepared, recorded.options, trace_window, interventions);
}

}  // namespace bud::profile
