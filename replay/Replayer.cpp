#include "replay/Replayer.h"

#include <functional>
#include <map>

#include "bud/ModelRevision.h"
#include "emu/run/Designs.h"
#include "replay/PacketRun.h"

namespace bud::replay {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Reproduced:
      return "reproduced";
    case Verdict::Fixed:
      return "fixed";
    case Verdict::Passed:
      return "passed";
    case Verdict::NewSymptom:
      return "new-symptom";
    case Verdict::Diverged:
      return "diverged";
    case Verdict::Incompatible:
      return "incompatible";
    case Verdict::Crashed:
      return "crashed";
  }
  return "?";
}

int verdict_exit_code(Verdict v) {
  switch (v) {
    case Verdict::Reproduced:
    case Verdict::NewSymptom:
      return 1;
    case Verdict::Fixed:
    case Verdict::Passed:
      return 0;
    case Verdict::Diverged:
    case Verdict::Incompatible:
    case Verdict::Crashed:
      return 125;
  }
  return 125;
}

std::string Divergence::describe() const {
  std::string s = "first divergent window " + std::to_string(window) + " (cycles " +
                  std::to_string(window_start) + ".." + std::to_string(window_end) +
                  "): state digest at cycle " + std::to_string(cycle) + " is " +
                  std::to_string(actual) + ", recorded " + std::to_string(expected);
  if (!stages.empty()) {
    s += "; stages differing at the window end:";
    for (const auto& st : stages) s += " " + st;
  }
  return s;
}

namespace {

ReplayOutcome incompatible(ReplayOutcome o, std::string why) {
  o.verdict = Verdict::Incompatible;
  o.message = std::move(why);
  return o;
}

}  // namespace

std::optional<emu::HostJob> replayable_job(const Packet& packet, std::string& error,
                                           bool check_first_checkpoint) {
  if (auto spec = spec_from_header(packet.header); !spec) {
    error = packet.name + ": " + spec.error();
    return std::nullopt;
  }
  if (packet.windows.empty() || packet.checkpoints.empty()) {
    error = packet.name + ": packet holds no checkpoint window to replay";
    return std::nullopt;
  }
  auto bytes = packet.stimulus_bytes(error);
  if (!bytes) return std::nullopt;
  auto job = decode_job(*bytes, error);
  if (!job) {
    error = packet.name + ": " + error;
    return std::nullopt;
  }
  if (job->fingerprint() != packet.header.stimulus().job_fingerprint()) {
    error = packet.name + ": the stimulus does not match its fingerprint";
    return std::nullopt;
  }
  if (check_first_checkpoint && !packet.checkpoint_state(0, error)) return std::nullopt;
  return job;
}

ReplayOutcome replay(const Packet& packet, const ReplayOptions& options) {
  ReplayOutcome o;
  o.packet = packet.name;
  o.recorded_revision = packet.header.model_revision();
  o.recorded_symptom = packet.symptom;
  if (!packet.complete) {
    if (!options.allow_incomplete)
      return incompatible(o, packet.name + ": incomplete packet (" + packet.incomplete +
                                 "; the recording was interrupted): pass --allow-incomplete to "
                                 "replay its first " +
                                 std::to_string(packet.last_cycle()) + " cycles");
    o.notes.push_back("incomplete packet (" + packet.incomplete + "): replaying the recorded " +
                      std::to_string(packet.windows.size()) + " windows up to cycle " +
                      std::to_string(packet.last_cycle()));
  }
  const bool same_revision = o.recorded_revision == build::kModelRevision;
  if (!same_revision) {
    if (!options.allow_revision_mismatch)
      return incompatible(o, packet.name + ": recorded with model revision " + o.recorded_revision +
                                 ", this bud has " + build::kModelRevision +
                                 " (pass --allow-revision-mismatch to replay anyway)");
    o.notes.push_back("model revision " + std::string(build::kModelRevision) +
                      " differs from the recorded " + o.recorded_revision +
                      ": digest differences are expected");
  }
  auto spec = spec_from_header(packet.header);
  if (!spec) return incompatible(o, packet.name + ": " + spec.error());
  // The host job comes from the packet itself: a replay does not depend on the workload data
  // generator. The workload is parsed (and the reference and golden models run) only if the run
  // finishes and its results must be checked.
  run::PreparedRun prepared;
  {
    std::string error;
    // The starting checkpoint is reassembled (and so verified) below.
    auto job = replayable_job(packet, error, false);
    if (!job) return incompatible(o, error);
    prepared.job = std::move(*job);
    prepared.workload.name = packet.header.workload().name();
    prepared.program.commands.resize(prepared.job.commands.size());
  }

  std::string made_error;
  auto made = emu::make_emulator(spec->options.emulator, made_error);
  if (!made) return incompatible(o, packet.name + ": " + made_error);
  emu::Emulator& emu = *made;
  if (auto e = run::start(prepared, spec->options, emu); !e.empty())
    return incompatible(o, packet.name + ": cannot start the run: " + e);

  // Where to start: the packet's first checkpoint, or the latest one at or before --at. Even at
  // cycle 0 the recorded state is restored over the fresh load: the Verilated context's
  // serialised bytes include uninitialised struct padding (VerilatedContext::m_s), so two fresh
  // emulators may digest differently; restoring makes them identical (tests/replay, [!mayfail]).
  const uint64_t first = packet.checkpoints.front().cycle();
  uint64_t start = first;
  if (options.at) {
    auto idx = packet.checkpoint_at_or_before(std::max(*options.at, first));
    start = packet.checkpoints[*idx].cycle();
  }
  {
    std::string error;
    auto idx = packet.checkpoint_at_or_before(start);
    auto state = packet.checkpoint_state(*idx, error);
    if (!state) return incompatible(o, error);
    if (!emu.restore(*state, error)) {
      // A checkpoint of another model revision cannot restore (Emulator::save holds the
      // revision): replay the whole run from the fresh load instead.
      if (same_revision || first > 0)
        return incompatible(o, packet.name + ": checkpoint at cycle " + std::to_string(start) +
                                   " does not restore: " + error);
      o.notes.push_back("checkpoint at cycle " + std::to_string(start) +
                        " does not restore on this model (" + error + "): replaying from cycle 0");
      start = 0;
    } else if (emu.cycle() != start) {
      return incompatible(o, packet.name + ": checkpoint recorded at cycle " +
                                 std::to_string(start) + " restores a state of cycle " +
                                 std::to_string(emu.cycle()));
    }
  }
  o.start_cycle = start;

  std::map<uint64_t, std::pair<uint64_t, uint32_t>> recorded;  // cycle -> digest, window
  for (const auto& w : packet.windows)
    for (const auto& d : w.digests()) recorded[d.cycle()] = {d.digest(), w.index()};
  std::map<uint64_t, const pb::Window*> window_end;
  for (const auto& w : packet.windows) window_end[w.end_cycle()] = &w;

  const bool full = packet.complete && packet.result && !packet.result->stopped();
  const uint64_t limit = full ? spec->options.max_cycles : packet.last_cycle();
  const uint64_t k = std::max<uint64_t>(1, packet.header.intervals().digest());

  auto check = [&](uint64_t c) {
    if (auto it = recorded.find(c); it != recorded.end()) {
      ++o.digests_checked;
      if (!o.divergence) {
        const uint64_t actual = emu.digest();
        if (actual != it->second.first) {
          Divergence d;
          d.window = it->second.second;
          const auto& w = packet.windows[std::min<size_t>(d.window, packet.windows.size() - 1)];
          d.window_start = w.start_cycle();
          d.window_end = w.end_cycle();
          d.cycle = c;
          d.expected = it->second.first;
          d.actual = actual;
          o.divergence = d;
        }
      }
    }
    if (auto it = window_end.find(c); it != window_end.end()) {
      ++o.windows_checked;
      const pb::Window& w = *it->second;
      std::vector<std::string> differ;
      for (int s = 0; s < emu::kNumStages && s < w.stages_size(); ++s) {
        const auto st = static_cast<emu::Stage>(s);
        const auto d = emu.stage_digest(st);
        if (d.count != w.stages(s).count() || d.sum != w.stages(s).sum())
          differ.push_back(emu.describe().stage(st).empty() ? emu::stage_name(st)
                                                            : emu.describe().stage(st));
      }
      if (o.divergence && o.divergence->window == w.index() && o.divergence->stages.empty())
        o.divergence->stages = differ;
      if (!o.divergence && !differ.empty()) {
        Divergence d;
        d.window = w.index();
        d.window_start = w.start_cycle();
        d.window_end = w.end_cycle();
        d.cycle = c;
        d.stages = differ;
        o.divergence = d;
      }
    }
  };

  // The replay is one driver with one participant: a pause at every recorded digest point.
  struct Verifier final : drive::Participant {
    uint64_t k;
    std::function<void(uint64_t)> check;
    uint64_t next_pause(uint64_t now) const override { return (now / k + 1) * k; }
    drive::PauseAction on_pause(uint64_t c) override {
      check(c);
      return drive::PauseAction::Continue;
    }
  } verifier;
  verifier.k = k;
  verifier.check = check;
  // Changes recorded from outside the design (a debugger's deposits and forces) happen again.
  std::vector<drive::Intervention> log;
  for (const auto& r : packet.interventions) {
    if (r.cycle() < start) continue;  // already in the checkpoint replay starts from
    std::string error;
    auto iv = intervention_from(r, emu, error);
    if (!iv) return incompatible(o, packet.name + ": " + error);
    log.push_back(std::move(*iv));
  }
  drive::InterventionActor actor(emu, log);
  drive::Driver driver(emu);
  driver.add(actor);
  driver.add(verifier);
  const auto driven = driver.run_until(limit, k);
  o.end_cycle = emu.cycle();
  o.full_run = full;
  if (full) {
    if (emu.state() == emu::RunState::Finished) {
      auto full_prep = prepare_spec(*spec, true);
      if (!full_prep)
        return incompatible(o, packet.name + ": embedded workload: " + full_prep.error());
      if (full_prep->job.fingerprint() != prepared.job.fingerprint())
        return incompatible(o, packet.name +
                                   ": cannot check the results: the embedded workload no longer "
                                   "generates the recorded stimulus (data generator changed)");
      prepared = std::move(full_prep).value();
    }
    run::RunOptions ro = spec->options;
    ro.progress = nullptr;
    o.report = run::finish(prepared, ro, emu);
    o.replay_symptom = symptom_of(o.report);
    if (packet.result && o.report.cycles != packet.result->cycles() && !o.divergence) {
      Divergence d;
      d.window = static_cast<uint32_t>(packet.windows.size() - 1);
      d.window_start = packet.windows.back().start_cycle();
      d.window_end = packet.windows.back().end_cycle();
      d.cycle = o.report.cycles;
      o.divergence = d;
    }
  } else if (emu.state() != emu::RunState::Ready) {
    // A prefix replay that stops early has diverged from the recording.
    pb::Symptom s;
    s.set_kind(emu.state() == emu::RunState::Hang        ? pb::Symptom::HANG
               : emu.state() == emu::RunState::Assertion ? pb::Symptom::ASSERTION
                                                         : pb::Symptom::DESIGN_ERROR);
    s.set_cycle(emu.cycle());
    s.set_message(driven.message);
    o.replay_symptom = s;
  }

  const std::string where = o.divergence ? "; " + o.divergence->describe() : "";
  if (o.divergence && same_revision) {
    o.verdict = Verdict::Diverged;
    o.message = "diverged from the recording on the same model revision" + where;
    return o;
  }
  if (o.replay_symptom) {
    const auto& s = *o.replay_symptom;
    const std::string what = std::string(symptom_kind_name(s.kind())) + " at cycle " +
                             std::to_string(s.cycle()) + ": " + s.message();
    if (o.recorded_symptom && o.recorded_symptom->kind() == s.kind()) {
      o.verdict = Verdict::Reproduced;
      o.message = "symptom reproduced: " + what;
    } else {
      o.verdict = Verdict::NewSymptom;
      o.message = "a symptom the recording did not have: " + what;
    }
  } else if (o.recorded_symptom && full) {
    o.verdict = Verdict::Fixed;
    o.message = std::string("symptom gone (recorded ") +
                symptom_kind_name(o.recorded_symptom->kind()) + " at cycle " +
                std::to_string(o.recorded_symptom->cycle()) + "); results match the golden model";
  } else {
    o.verdict = Verdict::Passed;
    o.message = full ? "no symptom; results match the golden model"
                     : "recorded prefix verified up to cycle " + std::to_string(o.end_cycle);
  }
  if (!o.divergence && o.digests_checked > 0)
    o.message += " (" + std::to_string(o.digests_checked) + " digests bit-exact)";
  else
    o.message += where;
  return o;
}

ReplayOutcome replay_file(const std::string& path, const ReplayOptions& options) {
  std::string error;
  auto p = read_packet(path, error);
  if (!p) {
    ReplayOutcome o;
    o.packet = path;
    o.verdict = Verdict::Incompatible;
    o.message = error;
    return o;
  }
  return replay(*p, options);
}

}  // namespace bud::replay
