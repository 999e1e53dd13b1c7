#include "replay/Replayer.h"

#include <functional>
#include <map>

#include "bud/ModelRevision.h"
#include "emu/run/Designs.h"
#include "replay/PacketRun.h"
#include "replay/ReplayPlan.h"
#include "replay/WindowReplay.h"

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
  if (packet.header.has_design_run()) {
    // Its run is a design file's (no host job, no checkpoints): only `bud replay` re-runs it.
    error = packet.name + ": a design packet (" + packet.header.design() +
            ", format 2.4): replay it with `bud replay`";
    return std::nullopt;
  }
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

ReplayOutcome unreplayed_outcome(const Packet& packet) {
  ReplayOutcome o;
  o.packet = packet.name;
  o.recorded_revision = packet.header.model_revision();
  o.recorded_symptom = packet.symptom;
  o.evidence = evidence_of(packet);
  return o;
}

ReplayOutcome replay(const Packet& packet, const ReplayOptions& options) {
  if (packet.header.has_design_run()) {
    if (options.design_replay) return options.design_replay(packet, options);
    return incompatible(unreplayed_outcome(packet),
                        packet.name + ": a design packet (" + packet.header.design() +
                            "): this command cannot re-run a design file");
  }
  ReplayOutcome o = unreplayed_outcome(packet);
  auto plan = ReplayPlan::make(packet, options, o);
  if (!plan) return o;
  if (options.window_jobs > 1 && window_parallel(*plan))
    return replay_windows(*plan, options.window_jobs, std::move(o));
  return replay_serial(*plan, std::move(o));
}

ReplayOutcome replay_serial(const ReplayPlan& plan, ReplayOutcome o) {
  const Packet& packet = plan.packet();
  std::string error;
  auto made = plan.make_emulator(error);
  if (!made) return incompatible(o, error);
  emu::Emulator& emu = *made;
  uint64_t start = plan.start();
  if (auto e = plan.restore(emu, start); !e.empty()) {
    // A checkpoint of another model revision cannot restore (Emulator::save holds the
    // revision): replay the whole run from the fresh load instead.
    if (plan.same_revision() || packet.checkpoints.front().cycle() > 0) return incompatible(o, e);
    o.notes.push_back("checkpoint at cycle " + std::to_string(start) +
                      " does not restore on this model (" + e + "): replaying from cycle 0");
    start = 0;
  }
  o.start_cycle = start;

  // The replay is one driver with one participant that pauses at every recorded digest point.
  Checks checks;
  ReplayVerifier verifier(plan, emu, checks);
  // Changes recorded from outside the design (a debugger's deposits and forces) happen again.
  auto log = plan.interventions(start, emu, error);
  if (!log) return incompatible(o, error);
  drive::InterventionActor actor(emu, *log);
  drive::Driver driver(emu);
  driver.add(actor);
  driver.add(verifier);
  auto checker = plan.prefix_checker(emu, error);
  if (!checker && !error.empty())
    return incompatible(o, packet.name + ": golden check of the prefix: " + error);
  if (checker) driver.add(*checker);
  const auto driven = driver.run_until(plan.limit(), plan.digest_interval());
  o.digests_checked = checks.digests;
  o.windows_checked = checks.windows;
  o.divergence = checks.divergence;
  plan.conclude(emu, driven, o, checker.get());
  add_check_counts(o);
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
