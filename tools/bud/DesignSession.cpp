#include "tools/bud/DesignSession.h"

#include <cctype>
#include <filesystem>

#include "debugger/trigger/TriggerFile.h"
#include "design/DesignEmulator.h"
#include "design/DesignPacket.h"
#include "design/DesignRun.h"
#include "design/OpenedPacket.h"
#include "emu/run/Designs.h"
#include "replay/InputFile.h"
#include "replay/PacketRun.h"
#include "replay/PacketWriter.h"

namespace bud::cli {

namespace {

std::string design_banner(const design::DesignTarget& target) {
  return "design " + target.spec.name + " (revision " + target.revision + ")";
}

design::DesignError plain_error(std::string message, int exit_code = 2) {
  design::DesignError e;
  e.message = std::move(message);
  e.exit_code = exit_code;
  return e;
}

}  // namespace

std::optional<DesignOpen> open_design_file(const std::string& path,
                                           const design::TargetOptions& options,
                                           design::DesignError& error) {
  auto target = design::prepare_design(path, options, error);
  if (!target) return std::nullopt;
  std::string banner = design_banner(*target);
  return DesignOpen{std::move(*target), options, std::move(banner)};
}

std::optional<DesignOpen> open_design_packet(const replay::Packet& packet, const std::string& path,
                                             const std::string& cache_dir,
                                             design::DesignError& error) {
  std::string why;
  const auto opened = design::open_packet(packet, cache_dir, why);
  if (!opened) {
    error = plain_error(why);
    return std::nullopt;
  }
  auto spec = opened->recorded_spec(why);
  if (!spec) {
    error = plain_error(path + ": " + why);
    return std::nullopt;
  }
  design::TargetOptions options = opened->target_options(cache_dir);
  auto target = design::prepare_spec(std::move(*spec), options, error);
  if (!target) {
    error.message = path + ": the recorded design: " + error.message;
    return std::nullopt;
  }
  if (target->revision != opened->revision) {
    error = plain_error(path + ": recorded with design revision " + opened->revision +
                        ", its embedded files build revision " + target->revision +
                        " here (another Verilator or bud model ABI): the session would not be "
                        "the recorded run");
    return std::nullopt;
  }
  std::string banner = "packet " + replay::printable(packet.name) + ": design " + opened->design +
                       " (" +
                       (opened->run.defines.empty() && opened->run.params.empty()
                            ? std::string("no overrides")
                            : opened->overrides_text()) +
                       ", seed " + std::to_string(opened->run.seed) + ")";
  if (packet.result) banner += ", cycles 0.." + std::to_string(packet.result->cycles());
  if (packet.symptom)
    banner += std::string(", symptom ") + replay::symptom_kind_name(packet.symptom->kind()) +
              " at cycle " + std::to_string(packet.symptom->cycle()) + ": " +
              replay::printable(packet.symptom->message());
  banner += "; " + design_banner(*target);
  return DesignOpen{std::move(*target), std::move(options), std::move(banner)};
}

std::string DesignRecordBackend::start(debugger::Session& session, const std::string& path) {
  if (active_) return "already recording to " + path_ + " (record stop first)";
  std::string error;
  if (!replay::PacketWriter::create(path, error)) return error;  // fail now, not at stop
  start_cycle_ = session.emu().cycle();
  path_ = path;
  active_ = true;
  return {};
}

std::string DesignRecordBackend::stop(debugger::Session& session, std::string& summary) {
  if (!active_) return "not recording (record start FILE first)";
  active_ = false;
  const uint64_t end = session.emu().cycle();
  if (end < start_cycle_)
    return "the session went back before the recording started (cycle " +
           std::to_string(start_cycle_) + "): nothing recorded";
  auto e = record_to(session, end, path_,
                     origin_ + ", record start at cycle " + std::to_string(start_cycle_) +
                         ", stop at cycle " + std::to_string(end),
                     summary);
  // `record start` created the file; a refused recording leaves nothing behind.
  if (!e.empty()) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  return e;
}

std::string DesignRecordBackend::record(const debugger::TriggerHit& hit, const std::string& file,
                                        std::string& written) {
  if (!session_) return "no session to record";
  std::string error;
  const auto resolved = trigger_packet_path(hit, file, resolve_, error);
  if (!resolved) return error;
  const std::string& path = *resolved;
  std::string summary;
  if (auto e = record_to(*session_, hit.cycle, path,
                         origin_ + ": trigger " + hit.trigger + " hit " +
                             std::to_string(hit.number) + " at cycle " +
                             std::to_string(hit.cycle) + " (" + hit.condition + ")",
                         summary);
      !e.empty())
    return e;
  written = path;
  return {};
}

std::string DesignRecordBackend::record_to(const debugger::Session& session, uint64_t end,
                                           const std::string& path, const std::string& note,
                                           std::string& summary) {
  for (const auto& iv : session.interventions())
    if (iv.cycle <= end)
      return "the session changed the run at cycle " + std::to_string(iv.cycle) +
             " (deposit, force or memory write): a design packet replays from its files alone "
             "and cannot hold that; nothing recorded (record a run without interventions)";
  const emu::Emulator& emu = session.emu();
  // The session's run ended at `end` (drained, or an error of the design's own making): the
  // packet is that whole run, checked. Otherwise the run so far, up to its cycle limit `end`.
  const bool at_end = emu.cycle() == end && (emu.state() == emu::RunState::Finished ||
                                             emu.state() == emu::RunState::Error);
  design::RunOptions ro;
  ro.seed = options_.seed;
  ro.quiet_cycles = options_.quiet_cycles;
  ro.cache_dir = options_.cache_dir;
  ro.write_sinks = false;
  if (!at_end) ro.max_cycles = end;
  else if (ro.max_cycles < end) ro.max_cycles = end;
  design::DesignError derr;
  const auto outcome = design::run_design(target_.spec, ro, derr);
  if (!outcome) return "record: " + derr.to_string();
  if (outcome->cycles != end)
    return "record: a fresh run of the design ends at cycle " + std::to_string(outcome->cycles) +
           ", the session's is at cycle " + std::to_string(end) + ": nothing recorded";
  // The packet must replay to what the session shows: the fresh run's state against the
  // session's own, when the session is at that cycle (a trigger hit performed later is not).
  if (emu.cycle() == end)
    if (const auto* d = dynamic_cast<const design::DesignEmulator*>(&emu);
        d && d->harness().digest() != outcome->state_digest)
      return "record: the session's state at cycle " + std::to_string(end) +
             " differs from a fresh run's of the same design and seed: nothing recorded";
  const design::RecordedRun rec{options_.defines, options_.params, options_.seed, ro.max_cycles,
                                ro.quiet_cycles};
  std::string error;
  const auto written =
      design::write_design_packet(path, target_.spec, rec, *outcome, error, {{end, note}});
  if (!written) return "record " + path + ": " + error;
  summary = "recorded cycles 0.." + std::to_string(end) + " of design " + target_.spec.name +
            " to " + path + " (" + std::to_string(written->bytes) + " bytes, " +
            std::to_string(written->files) + " files; " + outcome->message + ")";
  return {};
}

std::optional<DesignSession> open_design_session(const DesignOpen& open,
                                                 const DesignSessionSetup& setup,
                                                 std::string& error,
                                                 std::vector<std::string>& errors) {
  emu::EmulatorConfig ec = setup.emulator;
  ec.design = open.target.emulator;
  auto emu = emu::make_emulator(ec, error);
  if (!emu) return std::nullopt;
  debugger::ProgramInfo info;
  info.workload = open.target.spec.name;
  debugger::SessionConfig config;
  if (setup.checkpoint_interval) config.timeline.interval = setup.checkpoint_interval;
  config.timeline.memory_budget = setup.checkpoint_budget_mb << 20;
  DesignSession s;
  s.session = std::make_unique<debugger::Session>(std::move(emu), std::move(info), config);
  // Triggers on the simulation thread; a capture re-executes its window on a replica: another
  // instance of the design, restored from the trigger history's snapshot.
  debugger::TriggerEngineConfig tconfig = setup.triggers;
  tconfig.async = false;
  tconfig.make_replica = [ec](std::string& why) { return emu::make_emulator(ec, why); };
  s.triggers = std::make_unique<debugger::TriggerEngine>(s.session->emu(), tconfig);
  s.triggers->attach(*s.session);
  if (!setup.trigger_file.empty()) {
    auto parse = debugger::load_trigger_file(setup.trigger_file, s.triggers->env());
    if (!parse.ok()) {
      for (const auto& e : parse.errors) errors.push_back(e.to_string());
      error = setup.trigger_file + " is invalid";
      return std::nullopt;
    }
    s.triggers->add(std::move(*parse.program));
  }
  s.recorder = std::make_unique<DesignRecordBackend>(open.target, open.options, setup.origin);
  s.recorder->bind(*s.session);
  if (setup.resolve_record) s.recorder->set_trigger_resolver(setup.resolve_record);
  s.triggers->set_record_hook(s.recorder.get());
  return s;
}

}  // namespace bud::cli
