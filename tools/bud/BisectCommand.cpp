#include "tools/bud/BisectCommand.h"

#include <fstream>
#include <iostream>

#include "debugger/bisect/Bisector.h"
#include "debugger/bisect/DiffBisector.h"
#include "replay/PacketReader.h"
#include "replay/Replayer.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"

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
      "  bud bisect --workload mlp --good bf16 --bad int8     # precision regression: the\n"
      "  bud bisect --workload net.onnx --good auto --bad new.prec --repro min.prec\n"
      "                                         # layer that breaks the SNR guardrail\n"
      "Exit status: 0 no persistent failure (no layer breaks the guardrail), 1 a failure was\n"
      "localized (the runs differ), 2 bad usage, 125 a packet or workload cannot be used.");
  sub->add_option("packet", options.packet, "Replay packet of the failing run");
  sub->add_option("--good", options.good, "Packet of a good run (with --bad)");
  sub->add_option("--bad", options.bad, "Packet of a bad run (with --good)");
  options.run.workload.clear();  // no default: --workload selects the precision bisect
  sub->add_option("--workload", options.run.workload,
                  "Precision bisect: --good and --bad are precision assignments of this workload "
                  "(int8, bf16, auto or a precision file)");
  sub->add_option("--seed", options.run.seed, "With --workload: data seed (overrides the workload's)");
  sub->add_option("--config", options.run.emulator.design,
                  "With --workload: array configuration (npu8, npu16, npu32)");
  sub->add_option("--min-snr", options.min_snr_db,
                  "Precision bisect: SNR guardrail in dB (default: the workload's, else 30)");
  sub->add_option("--repro", options.repro,
                  "Precision bisect: write the minimal failing assignment as a precision file");
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
  const bool assignments = !o.run.workload.empty();
  if (assignments && !diff) {
    return fail_command("bisect", o.json, 2,
                        "--workload needs --good and --bad precision assignments");
  }
  if (diff) {
    debugger::DiffOptions dopts;
    dopts.allow_revision_mismatch = o.allow_revision_mismatch;
    dopts.tolerance = o.tolerance;
    dopts.min_snr_db = o.min_snr_db;
    debugger::DiffReport r;
    if (assignments) {
      run::RunOptions ro = o.run;
      if (int rc = resolve_config("bisect", o.json, ro); rc != 0) return rc;
      r = debugger::bisect_assignments(ro, o.good, o.bad, dopts);
    } else {
      r = debugger::bisect_pair(o.good, o.bad, dopts);
    }
    if (!o.repro.empty() && r.precision && !r.precision->reproducer.empty()) {
      std::ofstream out(o.repro, std::ios::binary);
      out << r.precision->reproducer;
      if (!out) return fail_command("bisect", o.json, 2, "--repro " + o.repro + ": cannot write");
    }
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
