#include "tools/bud/BisectCommand.h"

#include <fstream>
#include <iostream>

#include "debugger/bisect/Bisector.h"
#include "debugger/bisect/DiffBisector.h"
#include "design/PacketBisect.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/Replayer.h"
#include "tools/bud/DesignBisectReport.h"
#include "tools/bud/GoodSideArgs.h"
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
      "  bud design run vec_dma.toml --define BUG_NO_SATURATE --record sat.bpk\n"
      "  bud bisect sat.bpk                     # a design packet: first failing [[stage]],\n"
      "                                         # transaction, cycles, payload values\n"
      "  bud bisect sat.bpk --good ok.bpk       # against a recorded good run of the design\n"
      "A design packet is replayed first (one that passes is reported, not bisected); its good\n"
      "side is --good G.bpk, else its design with --good-define/--good-param, else its design\n"
      "without the recorded --define/--param (docs/designs.md, \"Bisecting a design packet\").\n"
      "Exit status: 0 no persistent failure (no layer breaks the guardrail; a design packet: it\n"
      "passes or no stage differs), 1 a failure was localized (the runs differ), 2 bad usage\n"
      "(a design packet without a good side, or a --good of another design), 125 a packet or\n"
      "workload cannot be used.");
  sub->add_option("packet", options.packet, "Replay packet of the failing run");
  sub->add_option("--good", options.good,
                  "Packet of a good run (with --bad); with a design packet: its good side");
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
  sub->add_option("--good-define", options.good_defines,
                  "Design packet: the good side is its design with this define (NAME[=VALUE], "
                  "repeatable) instead of without the recorded overrides");
  sub->add_option("--good-param", options.good_params,
                  "Design packet: the good side's parameter NAME=VALUE (repeatable)");
  sub->add_option("--design-cache", options.design_cache,
                  "Design packet: where its files are written and models cached (default as "
                  "`bud design build`)");
}

namespace {

// `bud bisect P.bpk` on a design packet: the design bisect's table (or JSON), with the packet,
// its reproduction and the good side before it.
int run_design_packet_bisect(const BisectCommandOptions& o, const replay::Packet& packet) {
  std::optional<replay::Packet> good;
  design::PacketBisectOptions po;
  po.cache_dir = o.design_cache;
  po.allow_revision_mismatch = o.allow_revision_mismatch;
  const GoodSideArgs args{o.good, o.good_defines, o.good_params, o.design_cache};
  if (auto e = good_side_request(args, good, po.good); !e.empty())
    return fail_command("bisect", o.json, 125, e);
  const auto r = design::bisect_design_packet(packet, po);
  if (r.verdict == design::PacketBisectVerdict::Error && !r.outcome)
    return fail_command("bisect", o.json, r.exit_code, r.message);
  const std::string printable = replay::printable(r.packet);
  if (o.json) {
    Json j = r.outcome ? design_bisect_json(*r.outcome, r.design, r.seed) : Json::object();
    if (!r.outcome) {
      j["design"] = r.design;
      j["seed"] = r.seed;
      j["first_failing_stage"] = nullptr;
      j["message"] = r.message;
    }
    j["verdict"] = design::packet_bisect_verdict_name(r.verdict);
    j["packet"] = r.packet;
    j["overrides"] = r.overrides;
    j["symptom"] = r.symptom ? Json(r.symptom->message()) : Json();
    j["replay"] = {{"verdict", replay::verdict_name(r.replay)}, {"message", r.replay_message}};
    if (r.good) j["good_side"] = good_side_json(*r.good);
    // The NPU report's names for the first failure: its cycle (in the bad run) and index.
    const design::StageComparison* f =
        r.outcome && r.outcome->first_failing ? &r.outcome->stages[*r.outcome->first_failing]
                                              : nullptr;
    j["first_divergence_cycle"] = f ? Json(f->bad_cycle) : Json();
    j["transaction"] = f ? Json(*f->first_difference) : Json();
    j["exit_code"] = r.exit_code;
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    return r.exit_code;
  }
  std::cout << "packet     " << printable << ": design " << r.design
            << (r.overrides.empty() ? "" : ", " + r.overrides) << ", seed " << r.seed << "\n";
  std::cout << "replay     " << replay::verdict_name(r.replay) << ": " << r.replay_message << "\n";
  if (!r.outcome) {
    std::cout << "verdict    " << design::packet_bisect_verdict_name(r.verdict) << ": "
              << r.message << "\n";
    return r.exit_code;
  }
  std::cout << "good side  " << r.good->description << "\n";
  std::cout << design_bisect_text(*r.outcome, r.design, r.design);
  return r.exit_code;
}

// `bud bisect P.bpk` on an NPU packet.
int run_npu_packet_bisect(const BisectCommandOptions& o, const replay::Packet& packet) {
  std::string error;
  // Refuse what `bud replay` refuses (exit 125): a packet whose stimulus or checkpoint does not
  // verify cannot localize anything.
  if (packet.complete && !replay::replayable_job(packet, error)) {
    return fail_command("bisect", o.json, 125, error);
  }
  debugger::BisectOptions bopts;
  bopts.wave_file = o.wave;
  bopts.wave_radius = o.wave_radius;
  bopts.allow_revision_mismatch = o.allow_revision_mismatch;
  const auto r = debugger::bisect_packet(packet, bopts);
  if (o.json)
    std::cout << r.to_json().dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  else std::cout << r.text();
  if (r.verdict == debugger::BisectVerdict::Error) {
    if (!o.json) return fail_command("bisect", o.json, 125, r.message);
    return 125;  // the JSON above already carries the error
  }
  return r.verdict == debugger::BisectVerdict::Fail ? 1 : 0;
}

}  // namespace

int run_bisect(const BisectCommandOptions& o) {
  const bool design_options =
      !o.good_defines.empty() || !o.good_params.empty() || !o.design_cache.empty();
  // PACKET, with --good only when it is a design packet: read it first to know which.
  if (!o.packet.empty() && o.bad.empty() && o.run.workload.empty()) {
    std::string error;
    auto packet = replay::read_packet(o.packet, error);
    if (!packet) return fail_command("bisect", o.json, 125, error);
    if (packet->header.has_design_run()) return run_design_packet_bisect(o, *packet);
    if (design_options)
      return fail_command("bisect", o.json, 2,
                          "--good-define, --good-param and --design-cache apply to a design "
                          "packet; " + o.packet + " is a packet of " + packet->header.design());
    if (o.good.empty()) return run_npu_packet_bisect(o, *packet);
  }
  if (design_options)
    return fail_command("bisect", o.json, 2,
                        "--good-define, --good-param and --design-cache need a design packet "
                        "(bud bisect P.bpk)");
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
  // Not reached: a PACKET alone went to run_npu_packet_bisect above.
  return fail_command("bisect", o.json, 2, "which packet? (bud bisect PACKET, or --good G --bad B)");
}

}  // namespace bud::cli
