#include "design/DesignReplay.h"

#include <cstdio>

#include "design/DesignCheck.h"
#include "design/DesignTarget.h"
#include "design/ModelBuild.h"
#include "design/RtlSignals.h"
#include "replay/PacketEvidence.h"

namespace bud::design {

namespace {

namespace pb = replay::pb;
using replay::ReplayOutcome;
using replay::Verdict;

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

ReplayOutcome refuse(ReplayOutcome o, std::string why) {
  o.verdict = Verdict::Incompatible;
  o.message = std::move(why);
  return o;
}

// What differs between the recorded and the replayed result, each a short phrase; the names of
// the stages whose totals differ go to `stages`.
std::vector<std::string> differences(const pb::Result& want, const pb::Result& got,
                                     std::vector<std::string>& stages) {
  std::vector<std::string> d;
  const auto& wd = want.design();
  const auto& gd = got.design();
  if (want.cycles() != got.cycles())
    d.push_back("cycles " + std::to_string(got.cycles()) + ", recorded " +
                std::to_string(want.cycles()));
  if (want.state_digest() != got.state_digest())
    d.push_back("final state digest " + hex(got.state_digest()) + ", recorded " +
                hex(want.state_digest()));
  if (want.stages_size() != got.stages_size() || wd.stage_names_size() != want.stages_size()) {
    d.push_back(std::to_string(got.stages_size()) + " stages, recorded " +
                std::to_string(want.stages_size()));
  } else {
    for (int i = 0; i < want.stages_size(); ++i) {
      const auto& w = want.stages(i);
      const auto& g = got.stages(i);
      if (w.count() == g.count() && w.sum() == g.sum()) continue;
      stages.push_back(wd.stage_names(i));
      d.push_back("stage " + wd.stage_names(i) + ": " + std::to_string(g.count()) +
                  " transactions, digest " + hex(g.sum()) + "; recorded " +
                  std::to_string(w.count()) + ", " + hex(w.sum()));
    }
  }
  if (wd.streams_size() != gd.streams_size()) {
    d.push_back(std::to_string(gd.streams_size()) + " streams, recorded " +
                std::to_string(wd.streams_size()));
  } else {
    for (int i = 0; i < wd.streams_size(); ++i) {
      const auto& w = wd.streams(i);
      const auto& g = gd.streams(i);
      if (w.beats() != g.beats() || w.bytes() != g.bytes() || w.hash() != g.hash())
        d.push_back("stream " + w.name() + ": " + std::to_string(g.bytes()) + " bytes (hash " +
                    hex(g.hash()) + "); recorded " + std::to_string(w.bytes()) + " (" +
                    hex(w.hash()) + ")");
    }
  }
  if (want.output_digest() != got.output_digest() || wd.checked_bytes() != gd.checked_bytes())
    d.push_back("checked bytes hash " + hex(got.output_digest()) + ", recorded " +
                hex(want.output_digest()));
  if (wd.verdict() != gd.verdict() || wd.message() != gd.message() ||
      wd.exit_code() != gd.exit_code())
    d.push_back("verdict '" + gd.message() + "', recorded '" + wd.message() + "'");
  return d;
}

std::optional<pb::Symptom> symptom_of(const pb::Result& r) {
  if (r.passed()) return std::nullopt;
  pb::Symptom s;
  using V = pb::DesignOutcome;
  s.set_kind(r.design().verdict() == V::ERROR         ? pb::Symptom::DESIGN_ERROR
             : r.design().verdict() == V::CYCLE_LIMIT ? pb::Symptom::CYCLE_LIMIT
                                                      : pb::Symptom::RESULT_MISMATCH);
  s.set_cycle(r.cycles());
  s.set_message(r.design().message());
  s.add_details(r.design().message());
  return s;
}

}  // namespace

ReplayOutcome replay_design_packet(const replay::Packet& packet,
                                   const replay::ReplayOptions& options,
                                   const std::string& cache_dir) {
  ReplayOutcome o;
  o.packet = packet.name;
  o.recorded_revision = packet.header.model_revision();
  o.recorded_symptom = packet.symptom;
  o.evidence = replay::evidence_of(packet);
  const std::string& name = packet.name;
  if (!packet.complete) {
    if (!options.allow_incomplete)
      return refuse(o, name + ": incomplete packet (" + packet.incomplete +
                           "; the recording was interrupted): pass --allow-incomplete to replay "
                           "what it holds");
    o.notes.push_back("incomplete packet (" + packet.incomplete + ")");
  }
  if (!packet.design_files)
    return refuse(o, name + ": a design packet without its design-files record");
  if (!packet.result || !packet.result->has_design())
    return refuse(o, name + ": a design packet without the result of its run");
  const pb::Result& recorded = *packet.result;
  std::string error;
  const auto opened = open_packet(packet, cache_dir, error);
  if (!opened) return refuse(o, error);
  const auto& expected = opened->expected;

  // The design as it was run: its file read from the copy (absolute paths it names below the
  // recorded tree mapped into the copy), with the recorded overrides.
  auto recorded_spec = opened->recorded_spec(error);
  if (!recorded_spec) return refuse(o, name + ": " + error);
  DesignSpec& spec = *recorded_spec;
  DesignError derr;
  const std::string revision = model_revision(spec, derr);
  if (revision.empty()) return refuse(o, name + ": " + derr.to_string());
  const bool same_revision = revision == o.recorded_revision;
  if (!same_revision) {
    if (!options.allow_revision_mismatch)
      return refuse(o, name + ": recorded with design revision " + o.recorded_revision +
                           ", its embedded files build revision " + revision +
                           " here (another Verilator or bud model ABI, or edited files; pass "
                           "--allow-revision-mismatch to replay anyway)");
    o.notes.push_back("design revision " + revision + " differs from the recorded " +
                      o.recorded_revision + ": digest differences are expected");
  }
  const auto rtl = read_rtl_signals(spec, derr);
  if (!rtl) return refuse(o, name + ": the embedded design: " + derr.to_string());
  if (const auto checked = check_design(spec, *rtl); !checked.ok())
    return refuse(o, name + ": the embedded design: " + checked.error->to_string());

  RunOptions ro;
  ro.seed = opened->run.seed;
  ro.max_cycles = opened->run.max_cycles;
  ro.quiet_cycles = opened->run.quiet_cycles;
  ro.cache_dir = cache_dir;
  ro.expected = expected;
  ro.write_sinks = false;
  const auto outcome = run_design(spec, ro, derr);
  o.full_run = true;
  if (!outcome) {
    // The recording finished with a verdict; this run could not (a build, AXI or firmware error).
    o.verdict = same_revision ? Verdict::Diverged : Verdict::NewSymptom;
    o.message = (same_revision ? "diverged from the recording on the same design revision: "
                               : "a symptom the recording did not have: ") +
                derr.to_string();
    return o;
  }
  const pb::Result replayed = design_result(*outcome);
  o.end_cycle = replayed.cycles();
  o.replay_symptom = symptom_of(replayed);
  std::vector<std::string> stages;
  const auto diff = differences(recorded, replayed, stages);
  o.digests_checked = 2 + static_cast<uint64_t>(recorded.stages_size());
  for (const auto& s : recorded.design().streams()) o.digests_checked += s.sink();
  const std::string what = replayed.design().message();
  if (diff.empty()) {
    o.verdict = o.recorded_symptom ? Verdict::Reproduced : Verdict::Passed;
    o.message = (o.recorded_symptom ? "symptom reproduced bit-exactly: " : "passes bit-exactly: ") +
                what + " (" + std::to_string(replayed.cycles()) + " cycles, state digest " +
                hex(replayed.state_digest()) + ")";
    return o;
  }
  if (same_revision) {
    replay::Divergence d;
    d.window_end = std::max(recorded.cycles(), replayed.cycles());
    d.cycle = std::min(recorded.cycles(), replayed.cycles());
    d.expected = recorded.state_digest();
    d.actual = replayed.state_digest();
    d.stages = stages;
    o.divergence = d;
    o.verdict = Verdict::Diverged;
    std::string all;
    for (const auto& x : diff) all += (all.empty() ? "" : "; ") + x;
    o.message = "diverged from the recording on the same design revision: " + all;
    return o;
  }
  // Another revision, replayed on request: what matters is whether the symptom is still there.
  if (o.recorded_symptom && o.replay_symptom) {
    o.verdict = Verdict::Reproduced;
    o.message = "symptom reproduced: " + what;
  } else if (o.replay_symptom) {
    o.verdict = Verdict::NewSymptom;
    o.message = "a symptom the recording did not have: " + what;
  } else if (o.recorded_symptom) {
    o.verdict = Verdict::Fixed;
    o.message = "symptom gone (recorded: " + o.recorded_symptom->message() + "): " + what;
  } else {
    o.verdict = Verdict::Passed;
    o.message = "passes: " + what;
  }
  return o;
}

Reproduction reproduce(const replay::Packet& packet, const std::string& cache_dir,
                       bool allow_revision_mismatch, const std::string& command) {
  Reproduction r;
  if (!packet.complete) {
    r.message = packet.name + ": incomplete packet (" + packet.incomplete + "); " + command +
                " needs a finished recording";
    return r;
  }
  std::string why;
  r.opened = open_packet(packet, cache_dir, why);
  if (!r.opened) {
    r.message = why;
    return r;
  }
  replay::ReplayOptions ro;
  ro.allow_revision_mismatch = allow_revision_mismatch;
  r.replay = replay_design_packet(packet, ro, cache_dir);
  switch (r.replay.verdict) {
    case Verdict::Reproduced:
    case Verdict::NewSymptom:
      r.fails = true;
      break;
    case Verdict::Passed:
    case Verdict::Fixed:
      r.passes = true;
      r.message = packet.name + " does not fail (replay: " + replay::verdict_name(r.replay.verdict) +
                  ", " + r.replay.message + "): nothing to " + command;
      break;
    default:
      r.message = r.replay.message;
  }
  return r;
}

}  // namespace bud::design
