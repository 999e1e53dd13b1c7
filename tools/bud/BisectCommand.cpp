#include "tools/bud/BisectCommand.h"

#include <iostream>

#include "debugger/bisect/Bisector.h"
#include "debugger/bisect/DiffBisector.h"
#include "replay/PacketReader.h"
#include "replay/Replayer.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_bisect(CLI::App& app, BisectCommandOptions& options) {
  auto* sub = app.add_subcommand(
      "bisect", "Find the first persistent failing stage of a recorded failure, or where two runs part");
  sub->footer(
      "Examples:\n"
      "  bud run gemm_small --fault 'flip:compute.m_left[0]@600' --record bad.bpk\n"
      "  bud bisect bad.bpk                     # stage, cycle, command, element, downstream\n"
      "  bud bisect bad.bpk --json --wave first.fst\n"
      "  bud bisect --good ok.bpk --bad bad.bpk # first cycle and state elements that differ\n"
      "Exit status: 0 no persistent failure, 1 a failure was localized (or the runs differ),\n"
      "2 bad usage, 125 a packet cannot be used.");
  sub->add_option("packet", options.packet, "Replay packet of the failing run");
  sub->add_option("--good", options.good, "Packet of a good run (with --bad)");
  sub->add_option("--bad", options.bad, "Packet of a bad run (with --good)");
  sub->add_option("--wave", options.wave, "Write an FST waveform around the first divergence");
  sub->add_option("--wave-radius", options.wave_radius, "Cycles before/after the divergence")
      ->capture_default_str();
  sub->add_option("--tolerance", options.tolerance,
                  "Performance bisect: relative counter change that counts as a divergence")
      ->capture_default_str();
  sub->add_flag("--allow-revision-mismatch", options.allow_revision_mismatch,
                "Use packets recorded with another model revision");
  sub->add_flag("--json", options.json, "One JSON object");
}

int run_bisect(const BisectCommandOptions& o) {
  const bool diff = !o.good.empty() || !o.bad.empty();
  if (diff && (o.good.empty() || o.bad.empty() || !o.packet.empty())) {
    return fail_command("bisect", o.json, 2, "give either PACKET or both --good and --bad");
  }
  if (!diff && o.packet.empty()) {
    return fail_command("bisect", o.json, 2,
                        "which packet? (bud bisect PACKET, or --good G --bad B)");
  }
  if (diff) {
    debugger::DiffOptions dopts;
    dopts.allow_revision_mismatch = o.allow_revision_mismatch;
    dopts.tolerance = o.tolerance;
    const auto r = debugger::bisect_pair(o.good, o.bad, dopts);
    if (o.json)
      std::cout << r.to_json().dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    else std::cout << r.text();
    if (r.verdict == debugger::DiffVerdict::Error) {
      if (!o.json) return fail_command("bisect", o.json, 125, r.message);
      return 125;  // the JSON above already carries the error
    }
    return r.verdict == debugger::DiffVerdict::Same ? 0 : 1;
  }
  std::string error;
  auto packet = replay::read_packet(o.packet, error);
  if (!packet) {
    return fail_command("bisect", o.json, 125, error);
  }
  // Refuse what `bud replay` refuses (exit 125): a packet whose stimulus or checkpoint does not
  // verify cannot localize anything.
  if (packet->complete && !replay::replayable_job(*packet, error)) {
    return fail_command("bisect", o.json, 125, error);
  }
  debugger::BisectOptions bopts;
  bopts.wave_file = o.wave;
  bopts.wave_radius = o.wave_radius;
  bopts.allow_revision_mismatch = o.allow_revision_mismatch;
  const auto r = debugger::bisect_packet(*packet, bopts);
  if (o.json)
    std::cout << r.to_json().dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  else std::cout << r.text();
  if (r.verdict == debugger::BisectVerdict::Error) {
    if (!o.json) return fail_command("bisect", o.json, 125, r.message);
    return 125;  // the JSON above already carries the error
  }
  return r.verdict == debugger::BisectVerdict::Fail ? 1 : 0;
}

}  // namespace bud::cli
