#include "design/PacketBisect.h"

#include "design/DesignReplay.h"

namespace bud::design {

const char* packet_bisect_verdict_name(PacketBisectVerdict v) {
  switch (v) {
    case PacketBisectVerdict::Fail: return "fail";
    case PacketBisectVerdict::Pass: return "pass";
    case PacketBisectVerdict::Error: return "error";
  }
  return "?";
}

PacketBisectResult bisect_design_packet(const replay::Packet& packet,
                                        const PacketBisectOptions& options) {
  PacketBisectResult r;
  r.packet = packet.name;
  r.symptom = packet.symptom;
  const auto error = [&](int code, std::string message) {
    r.verdict = PacketBisectVerdict::Error;
    r.exit_code = code;
    r.message = std::move(message);
    return r;
  };
  // 1. The packet must reproduce before anything is localised: `bud replay`'s check.
  const Reproduction rep =
      reproduce(packet, options.cache_dir, options.allow_revision_mismatch, "bisect");
  r.replay = rep.replay.verdict;
  r.replay_message = rep.replay.message;
  if (rep.opened) {
    r.design = rep.opened->design;
    r.overrides = rep.opened->overrides_text();
    r.seed = rep.opened->run.seed;
  }
  if (rep.passes) {
    r.verdict = PacketBisectVerdict::Pass;
    r.exit_code = 0;
    r.message = rep.message;
    return r;
  }
  if (!rep.fails) return error(125, rep.message);
  const OpenedPacket* opened = &*rep.opened;
  std::string why;

  // 2. The bad side as recorded; the good side as asked for.
  auto bad_spec = opened->recorded_spec(why);
  if (!bad_spec) return error(125, packet.name + ": " + why);
  DesignError derr;
  auto good = good_side(*opened, *bad_spec, options.good, derr);
  if (!good) return error(derr.exit_code, derr.to_string());
  r.good = good;
  const TargetOptions to = opened->target_options(options.cache_dir);
  const auto bad = prepare_spec(*bad_spec, to, derr);
  if (!bad) return error(125, packet.name + ": the recorded design: " + derr.to_string());
  r.bad_revision = bad->revision;
  const auto good_target = prepare_spec(good->spec, to, derr);
  if (!good_target)
    return error(derr.exit_code, "the good side (" + good->description + "): " + derr.to_string());

  // 3. Stage by stage, with the recorded seed and limits.
  BisectOptions bo;
  bo.seed = opened->run.seed;
  bo.max_cycles = opened->run.max_cycles;
  bo.quiet_cycles = opened->run.quiet_cycles;
  const auto outcome = bisect_designs(*good_target, *bad, bo, derr);
  if (!outcome) return error(derr.exit_code, derr.to_string());
  const bool fails = outcome->first_failing || outcome->ending_differs;
  r.verdict = fails ? PacketBisectVerdict::Fail : PacketBisectVerdict::Pass;
  r.exit_code = fails ? 1 : 0;
  r.message = outcome->message;
  r.outcome = outcome;
  return r;
}

}  // namespace bud::design
