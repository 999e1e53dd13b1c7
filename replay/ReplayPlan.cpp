#include "replay/ReplayPlan.h"

#include <algorithm>

#include "emu/run/Designs.h"

namespace bud::replay {

namespace {

std::optional<ReplayPlan> refuse(ReplayOutcome& o, std::string why) {
  o.verdict = Verdict::Incompatible;
  o.message = std::move(why);
  return std::nullopt;
}

}  // namespace

std::optional<ReplayPlan> ReplayPlan::make(const Packet& packet, const ReplayOptions& options,
                                           ReplayOutcome& o) {
  ReplayPlan plan;
  plan.packet_ = &packet;
  plan.prefix_check_ = options.prefix_check;
  if (!packet.complete) {
    if (!options.allow_incomplete)
      return refuse(o, packet.name + ": incomplete packet (" + packet.incomplete +
                           "; the recording was interrupted): pass --allow-incomplete to "
                           "replay its first " +
                           std::to_string(packet.last_cycle()) + " cycles");
    o.notes.push_back("incomplete packet (" + packet.incomplete + "): replaying the recorded " +
                      std::to_string(packet.windows.size()) + " windows up to cycle " +
                      std::to_string(packet.last_cycle()));
  }
  // Each array variant is its own design and model revision: the packet's must be built here.
  std::string design_error;
  const std::string revision = emu::packet_design_revision(packet.header.design(), design_error);
  if (revision.empty()) return refuse(o, packet.name + ": " + design_error);
  plan.same_revision_ = o.recorded_revision == revision;
  if (!plan.same_revision_) {
    if (!options.allow_revision_mismatch)
      return refuse(o, packet.name + ": recorded with model revision " + o.recorded_revision +
                           ", this bud has " + revision +
                           " (pass --allow-revision-mismatch to replay anyway)");
    o.notes.push_back("model revision " + revision + " differs from the recorded " +
                      o.recorded_revision + ": digest differences are expected");
  }
  auto spec = spec_from_header(packet.header);
  if (!spec) return refuse(o, packet.name + ": " + spec.error());
  plan.spec_ = std::move(spec).value();
  // The host job comes from the packet itself: a replay does not depend on the workload data
  // generator. The workload is parsed (and the reference and golden models run) only if the run
  // finishes and its results must be checked.
  {
    std::string error;
    // The starting checkpoint is reassembled (and so verified) when it is restored.
    auto job = replayable_job(packet, error, false);
    if (!job) return refuse(o, error);
    plan.prepared_.job = std::move(*job);
    plan.prepared_.workload.name = packet.header.workload().name();
    plan.prepared_.program.commands.resize(plan.prepared_.job.commands.size());
  }
  // Where to start: the packet's first checkpoint, or the latest one at or before --at. Even at
  // cycle 0 the recorded state is restored over the fresh load: the Verilated context's
  // serialised bytes include uninitialised struct padding (VerilatedContext::m_s), so two fresh
  // emulators may digest differently; restoring makes them identical (tests/replay, [!mayfail]).
  const uint64_t first = packet.checkpoints.front().cycle();
  plan.start_ = first;
  if (options.at) {
    auto idx = packet.checkpoint_at_or_before(std::max(*options.at, first));
    plan.start_ = packet.checkpoints[*idx].cycle();
  }
  for (const auto& w : packet.windows)
    for (const auto& d : w.digests()) plan.recorded_[d.cycle()] = {d.digest(), w.index()};
  for (const auto& w : packet.windows) plan.window_end_[w.end_cycle()] = &w;
  plan.full_ = packet.complete && packet.result && !packet.result->stopped();
  plan.limit_ = plan.full_ ? plan.spec_.options.max_cycles : packet.last_cycle();
  plan.k_ = std::max<uint64_t>(1, packet.header.intervals().digest());
  return plan;
}

std::unique_ptr<emu::Emulator> ReplayPlan::make_emulator(std::string& error) const {
  std::string made_error;
  auto made = emu::make_emulator(spec_.options.emulator, made_error);
  if (!made) {
    error = packet_->name + ": " + made_error;
    return nullptr;
  }
  if (auto e = run::start(prepared_, spec_.options, *made); !e.empty()) {
    error = packet_->name + ": cannot start the run: " + e;
    return nullptr;
  }
  return made;
}

std::string ReplayPlan::restore(emu::Emulator& emu, uint64_t cycle) const {
  std::string error;
  const auto idx = packet_->checkpoint_at_or_before(cycle);
  if (!idx || packet_->checkpoints[*idx].cycle() != cycle)
    return packet_->name + ": no checkpoint recorded at cycle " + std::to_string(cycle);
  auto state = packet_->checkpoint_state(*idx, error);
  if (!state) return error;
  if (!emu.restore(*state, error))
    return packet_->name + ": checkpoint at cycle " + std::to_string(cycle) +
           " does not restore: " + error;
  if (emu.cycle() != cycle)
    return packet_->name + ": checkpoint recorded at cycle " + std::to_string(cycle) +
           " restores a state of cycle " + std::to_string(emu.cycle());
  return {};
}

std::optional<std::vector<drive::Intervention>> ReplayPlan::interventions(
    uint64_t from, const emu::Emulator& emu, std::string& error) const {
  std::vector<drive::Intervention> log;
  for (const auto& r : packet_->interventions) {
    if (r.cycle() < from) continue;  // already in the checkpoint the segment starts from
    auto iv = intervention_from(r, emu, error);
    if (!iv) {
      error = packet_->name + ": " + error;
      return std::nullopt;
    }
    log.push_back(std::move(*iv));
  }
  return log;
}

void ReplayPlan::check(emu::Emulator& emu, uint64_t c, Checks& checks) const {
  const Packet& packet = *packet_;
  if (auto it = recorded_.find(c); it != recorded_.end()) {
    ++checks.digests;
    if (!checks.divergence) {
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
        checks.divergence = d;
      }
    }
  }
  if (auto it = window_end_.find(c); it != window_end_.end()) {
    ++checks.windows;
    const pb::Window& w = *it->second;
    std::vector<std::string> differ;
    for (int s = 0; s < emu::kNumStages && s < w.stages_size(); ++s) {
      const auto st = static_cast<emu::Stage>(s);
      const auto d = emu.stage_digest(st);
      if (d.count != w.stages(s).count() || d.sum != w.stages(s).sum())
        differ.push_back(emu.describe().stage(st).empty() ? emu::stage_name(st)
                                                          : emu.describe().stage(st));
    }
    auto& div = checks.divergence;
    if (div && div->window == w.index() && div->stages.empty()) div->stages = differ;
    if (!div && !differ.empty()) {
      Divergence d;
      d.window = w.index();
      d.window_start = w.start_cycle();
      d.window_end = w.end_cycle();
      d.cycle = c;
      d.stages = differ;
      div = d;
    }
  }
}

std::unique_ptr<PrefixChecker> ReplayPlan::prefix_checker(const emu::Emulator& emu,
                                                          std::string& error) const {
  if (full_ || !prefix_check_) return nullptr;
  auto checker = prefix_check_(spec_, emu, error);
  if (!checker && error.empty()) error = "the golden model cannot check this prefix";
  return checker;
}

void ReplayPlan::conclude(emu::Emulator& emu, const drive::DriveStop& driven, ReplayOutcome& o,
                          const PrefixChecker* checker) const {
  const Packet& packet = *packet_;
  auto incompatible = [&o](std::string why) {
    o.verdict = Verdict::Incompatible;
    o.message = std::move(why);
  };
  o.end_cycle = emu.cycle();
  o.full_run = full_;
  if (full_) {
    const run::PreparedRun* prepared = &prepared_;
    std::optional<run::PreparedRun> checked;
    if (emu.state() == emu::RunState::Finished) {
      auto full_prep = prepare_spec(spec_, true);
      if (!full_prep)
        return incompatible(packet.name + ": embedded workload: " + full_prep.error());
      if (full_prep->job.fingerprint() != prepared_.job.fingerprint())
        return incompatible(packet.name +
                            ": cannot check the results: the embedded workload no longer "
                            "generates the recorded stimulus (data generator changed)");
      checked = std::move(full_prep).value();
      prepared = &*checked;
    }
    run::RunOptions ro = spec_.options;
    ro.progress = nullptr;
    o.report = run::finish(*prepared, ro, emu);
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
  } else if (checker) {
    // A prefix that ends while the run goes on: its stages against the golden model, as the
    // debugger checked them while it was recorded.
    o.replay_symptom = checker->symptom();
    o.prefix_checked = true;
  } else if (o.recorded_symptom && o.recorded_symptom->kind() == pb::Symptom::STAGE_MISMATCH) {
    // Without the golden check, a bit-exact replay on the recorded model revision still shows
    // the recorded stage divergence: the same state holds the same transactions.
    if (!same_revision_)
      return incompatible(packet.name + ": the recorded stage divergence can only be checked "
                          "against the golden model on another model revision");
    o.replay_symptom = o.recorded_symptom;
  }

  const std::string where = o.divergence ? "; " + o.divergence->describe() : "";
  if (o.divergence && same_revision_) {
    o.verdict = Verdict::Diverged;
    o.message = "diverged from the recording on the same model revision" + where;
    return;
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
  } else if (o.recorded_symptom && (full_ || o.prefix_checked)) {
    o.verdict = Verdict::Fixed;
    o.message = std::string("symptom gone (recorded ") +
                symptom_kind_name(o.recorded_symptom->kind()) + " at cycle " +
                std::to_string(o.recorded_symptom->cycle()) +
                (full_ ? "); results match the golden model"
                       : "); the prefix's stages match the golden model up to cycle " +
                             std::to_string(o.end_cycle));
  } else {
    o.verdict = Verdict::Passed;
    o.message = full_ ? "no symptom; results match the golden model"
                : o.prefix_checked
                    ? "recorded prefix verified up to cycle " + std::to_string(o.end_cycle) +
                          "; its stages match the golden model"
                    : "recorded prefix verified up to cycle " + std::to_string(o.end_cycle);
  }
}

void add_check_counts(ReplayOutcome& o) {
  // Diverged says where in its message already; Incompatible has nothing to count.
  if (o.verdict == Verdict::Diverged || o.verdict == Verdict::Incompatible) return;
  if (!o.divergence && o.digests_checked > 0)
    o.message += " (" + std::to_string(o.digests_checked) + " digests bit-exact)";
  else if (o.divergence)
    o.message += "; " + o.divergence->describe();
}

}  // namespace bud::replay
