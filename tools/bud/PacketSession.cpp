#include "tools/bud/PacketSession.h"

#include <cctype>

#include "debugger/bisect/GoldenPrefixChecker.h"
#include "emu/run/Designs.h"
#include "replay/PacketWriter.h"
#include "replay/Recorder.h"

namespace bud::cli {

std::string attach_packet(debugger::Session& session, const replay::Packet& packet) {
  std::string error;
  std::vector<uint8_t> first;
  // At most kMaxPacketCheckpoints of them, evenly spaced (the first and the last always), so a
  // packet of any length attaches in bounded time and memory; goto re-executes from the nearest.
  const size_t n = packet.checkpoints.size();
  const size_t stride = n <= kMaxPacketCheckpoints ? 1 : (n - 1 + kMaxPacketCheckpoints - 2) /
                                                             (kMaxPacketCheckpoints - 1);
  for (size_t i = 0; i < n; i = i + stride < n || i + 1 == n ? i + stride : n - 1) {
    auto state = packet.checkpoint_state(i, error);
    if (!state) return error;
    if (!session.emu().restore(*state, error))
      return packet.name + ": checkpoint at cycle " +
             std::to_string(packet.checkpoints[i].cycle()) + ": " + error;
    // A crafted packet may label a state with another cycle than it holds.
    if (session.emu().cycle() != packet.checkpoints[i].cycle())
      return packet.name + ": checkpoint recorded at cycle " +
             std::to_string(packet.checkpoints[i].cycle()) + " restores a state of cycle " +
             std::to_string(session.emu().cycle());
    session.timeline().save_named("packet@" + std::to_string(packet.checkpoints[i].cycle()));
    if (i == 0) first = std::move(*state);
  }
  if (!first.empty() && !session.emu().restore(first, error)) return error;
  // The recorded changes from outside the design (a prompt's deposits and forces) happen again.
  std::vector<drive::Intervention> log;
  for (const auto& r : packet.interventions) {
    auto iv = replay::intervention_from(r, session.emu(), error);
    if (!iv) return packet.name + ": " + error;
    log.push_back(std::move(*iv));
  }
  return session.adopt_interventions(std::move(log));
}

std::string PacketRecordBackend::start(debugger::Session& session, const std::string& path) {
  if (active_) return "already recording to " + path_ + " (record stop first)";
  std::string error;
  if (!replay::PacketWriter::create(path, error)) return error;  // fail now, not at stop
  state_.clear();
  session.emu().save(state_);
  start_cycle_ = session.emu().cycle();
  path_ = path;
  active_ = true;
  return {};
}

std::string PacketRecordBackend::stop(debugger::Session& session, std::string& summary) {
  if (!active_) return "not recording (record start FILE first)";
  active_ = false;
  const uint64_t end = session.emu().cycle();
  if (end < start_cycle_)
    return "the session went back before the recording started (cycle " +
           std::to_string(start_cycle_) + "): nothing recorded";
  return record_range(&state_, start_cycle_, end, &session, path_,
                      {origin_ + ", cycles " + std::to_string(start_cycle_) + ".." +
                       std::to_string(end)},
                      summary);
}

std::optional<std::string> trigger_packet_path(const debugger::TriggerHit& hit,
                                               const std::string& file,
                                               const PacketPathResolver& resolve,
                                               std::string& error) {
  std::string path = file;
  if (path.empty()) {
    path = "trigger-" + hit.trigger + "-" + std::to_string(hit.number) + ".bpk";
    for (char& c : path)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  if (resolve) return resolve(path, error);
  return path;
}

std::string PacketRecordBackend::record(const debugger::TriggerHit& hit, const std::string& file,
                                        std::string& written) {
  std::string error;
  const auto resolved = trigger_packet_path(hit, file, resolve_, error);
  if (!resolved) return error;
  const std::string& path = *resolved;
  std::string summary;
  const std::vector<std::string> notes = {
      origin_ + ": trigger " + hit.trigger + " hit " + std::to_string(hit.number) +
      " at cycle " + std::to_string(hit.cycle) + " (" + hit.condition + ")"};
  // From the session's timeline when it reaches back to cycle 0 (else a fresh start).
  std::vector<uint8_t> state;
  const bool from_timeline =
      session_ && session_->timeline().state_at_or_before(0, state, error).has_value();
  if (auto e = record_range(from_timeline ? &state : nullptr, 0, hit.cycle, session_, path, notes,
                            summary);
      !e.empty())
    return e;
  written = path;
  return {};
}

std::string PacketRecordBackend::record_range(const std::vector<uint8_t>* state,
                                              uint64_t start_cycle, uint64_t end,
                                              const debugger::Session* session,
                                              const std::string& path,
                                              const std::vector<std::string>& notes,
                                              std::string& summary) {
  std::string error;
  auto made = emu::make_emulator(spec_.options.emulator, error);
  if (!made) return error;
  emu::Emulator& emu = *made;
  if (auto e = run::start(prepared_, spec_.options, emu); !e.empty()) return e;
  if (state && !emu.restore(*state, error)) return error;
  std::vector<drive::Intervention> log;
  if (session)
    for (const auto& iv : session->interventions())
      if (iv.cycle >= start_cycle && iv.cycle <= end) log.push_back(iv);
  auto writer = replay::PacketWriter::create(path, error);
  if (!writer) return error;
  replay::RecordConfig config;
  replay::Recorder rec(*writer, emu, config);
  const auto header = replay::make_header(spec_, prepared_, config.digest_interval,
                                          config.checkpoint_interval, start_cycle);
  if (!rec.begin(header, replay::encode_job(prepared_.job), notes)) return rec.error();
  for (const auto& iv : log)
    if (!rec.write_intervention(iv)) return rec.error();
  drive::Driver driver(emu);
  drive::InterventionActor actor(emu, log);
  driver.add(actor);
  driver.add(rec);
  // The recording may stop before the run ends: its stages are then checked against the golden
  // model over the recorded cycles, as the session's own check saw them.
  auto checker = debugger::golden_prefix_check()(spec_, emu, error);
  if (!checker) return "golden check of the recording: " + error;
  driver.add(*checker);
  run::RunOptions ro = spec_.options;
  ro.progress = nullptr;
  ro.max_cycles = end;
  drive::DriveStop stop;
  const auto report = run::finish(prepared_, ro, driver, &stop);
  if (stop.failed) return rec.error().empty() ? stop.detail : rec.error();
  const auto prefix_symptom = checker->symptom();
  const bool ok = emu.state() != emu::RunState::Ready
                      ? rec.end(&report, false)
                      : rec.end(nullptr, true, prefix_symptom);
  if (!ok) return rec.error();
  const auto s = rec.summary();
  summary = "recorded cycles " + std::to_string(start_cycle) + ".." + std::to_string(end) +
            " to " + path + " (" + std::to_string(s.bytes) + " bytes, " +
            std::to_string(s.checkpoints) + " checkpoints" +
            (log.empty() ? "" : ", " + std::to_string(log.size()) + " interventions") + ")";
  if (emu.state() == emu::RunState::Ready && prefix_symptom)
    summary += "; symptom " + std::string(replay::symptom_kind_name(prefix_symptom->kind())) +
               ": " + prefix_symptom->message();
  return {};
}

}  // namespace bud::cli
