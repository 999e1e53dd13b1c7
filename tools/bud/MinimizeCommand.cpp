#include "tools/bud/MinimizeCommand.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "debugger/bisect/GoldenPrefixChecker.h"
#include "debugger/bisect/Minimizer.h"
#include "design/DesignMinimize.h"
#include "emu/run/Designs.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"
#include "replay/Replayer.h"
#include "tools/bud/GoodSideArgs.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_minimize(CLI::App& app, MinimizeCommandOptions& options) {
  auto* sub = app.add_subcommand(
      "minimize", "Shrink a failing packet while the same symptom and first failing stage persist");
  sub->footer(
      "Examples:\n"
      "  bud minimize bad.bpk -o min.bpk\n"
      "  bud minimize bad.bpk -o min.bpk --json --max-candidates 100\n"
      "  bud minimize sat.bpk -o sat-min.bpk    # a design packet: shorter streams, fewer\n"
      "                                         # firmware commands, fewer cycles\n"
      "The result is a valid packet that replays deterministically (checked before exiting).\n"
      "A design packet keeps failing the same way: the same ending, and the same first stage\n"
      "differing from the good side (--good G.bpk, --good-define/--good-param, else its design\n"
      "without the recorded overrides; none when it has none: the ending alone). Each candidate\n"
      "reruns the design's reference on the reduced inputs (docs/designs.md).\n"
      "Exit status: 0 minimized, 1 nothing to minimize or the result did not reproduce,\n"
      "2 bad usage, 9 a design's reference fails on the packet's inputs, 125 the packet cannot\n"
      "be used.");
  sub->add_option("packet", options.packet, "Replay packet of a failing run")->required();
  sub->add_option("-o,--output", options.output, "Where to write the minimized packet")->required();
  sub->add_option("--max-candidates", options.max_candidates, "Candidate runs at most")
      ->capture_default_str();
  sub->add_flag("--allow-revision-mismatch", options.allow_revision_mismatch,
                "Use a packet recorded with another model revision");
  sub->add_flag("--json", options.json, "One JSON object");
  sub->add_option("--good", options.good,
                  "Design packet: a packet of a good run of the same design (its good side)");
  sub->add_option("--good-define", options.good_defines,
                  "Design packet: the good side is its design with this define (NAME[=VALUE], "
                  "repeatable)");
  sub->add_option("--good-param", options.good_params,
                  "Design packet: the good side's parameter NAME=VALUE (repeatable)");
  sub->add_option("--design-cache", options.design_cache,
                  "Design packet: where its files are written and models cached");
}

namespace {

// `bud minimize P.bpk -o M.bpk` on a design packet.
int run_design_packet_minimize(const MinimizeCommandOptions& o, const replay::Packet& packet) {
  std::optional<replay::Packet> good;
  design::MinimizeOptions mo;
  mo.cache_dir = o.design_cache;
  mo.allow_revision_mismatch = o.allow_revision_mismatch;
  const GoodSideArgs args{o.good, o.good_defines, o.good_params, o.design_cache};
  if (auto e = good_side_request(args, good, mo.good); !e.empty())
    return fail_command("minimize", o.json, 125, e);
  mo.max_candidates = o.max_candidates;
  const bool tty = isatty(STDERR_FILENO) != 0 && !o.json;
  mo.progress = [tty](uint32_t tried, uint32_t kept) {
    if (tty) std::fprintf(stderr, "\rminimize: %u candidates, %u kept   ", tried, kept);
  };
  const auto r = design::minimize_design_packet(packet, o.output, mo);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!r.written) return fail_command("minimize", o.json, r.exit_code, r.message);
  std::error_code ec;
  const auto before = std::filesystem::file_size(o.packet, ec);
  const auto after = std::filesystem::file_size(o.output, ec);
  if (o.json) {
    Json j = Json::object();
    j["packet"] = r.packet;
    j["output"] = r.output;
    j["design"] = r.design;
    j["overrides"] = r.overrides;
    j["good_side"] = r.good ? good_side_json(*r.good) : Json();
    j["failure"] = {
        {"bad", design::ending_name(r.signature.bad)},
        {"good", r.signature.good ? Json(design::ending_name(*r.signature.good)) : Json()},
        {"first_failing_stage", r.first_stage.empty() ? Json() : Json(r.first_stage)}};
    Json red = Json::array();
    for (const auto& x : r.reductions)
      red.push_back({{"what", x.what}, {"unit", x.unit}, {"before", x.before}, {"after", x.after}});
    j["reductions"] = red;
    j["candidates"] = r.candidates;
    j["kept"] = r.kept;
    j["budget_exhausted"] = r.budget_exhausted;
    j["simulated_cycles"] = r.simulated_cycles;
    j["bytes_before"] = static_cast<uint64_t>(before);
    j["bytes_after"] = static_cast<uint64_t>(after);
    j["symptom"] = r.symptom;
    j["replay"] = replay::verdict_name(r.replay);
    j["message"] = r.message;
    j["exit_code"] = r.exit_code;
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    return r.exit_code;
  }
  std::printf("packet     %s -> %s (design %s%s%s)\n", replay::printable(r.packet).c_str(),
              replay::printable(r.output).c_str(), r.design.c_str(),
              r.overrides.empty() ? "" : ", ", r.overrides.c_str());
  std::printf("good side  %s\n", r.good ? r.good->description.c_str()
                                       : "none (no overrides recorded): the ending alone is kept");
  std::printf("failure    bad %s, good %s, first differing stage %s\n",
              design::ending_name(r.signature.bad),
              r.signature.good ? design::ending_name(*r.signature.good) : "-",
              r.first_stage.empty() ? "none" : r.first_stage.c_str());
  std::printf("reduced    %-24s %12s %12s\n", "", "before", "after");
  for (const auto& x : r.reductions)
    std::printf("           %-24s %12llu %12llu %s\n", x.what.c_str(),
                static_cast<unsigned long long>(x.before), static_cast<unsigned long long>(x.after),
                x.unit.c_str());
  std::printf("search     %u candidates (%u kept)%s, %llu cycles simulated\n", r.candidates,
              r.kept, r.budget_exhausted ? ", stopped at --max-candidates" : "",
              static_cast<unsigned long long>(r.simulated_cycles));
  std::printf("bytes      %llu -> %llu\n", static_cast<unsigned long long>(before),
              static_cast<unsigned long long>(after));
  std::printf("result     %s\n", r.symptom.c_str());
  std::printf("packet     %s (replay: %s)\n", replay::printable(r.output).c_str(),
              replay::verdict_name(r.replay));
  if (r.exit_code != 0) std::fprintf(stderr, "bud minimize: %s\n", r.message.c_str());
  return r.exit_code;
}

}  // namespace

int run_minimize(const MinimizeCommandOptions& o) {
  std::string error;
  auto packet = replay::read_packet(o.packet, error);
  if (!packet) {
    return fail_command("minimize", o.json, 125, error);
  }
  if (packet->header.has_design_run()) return run_design_packet_minimize(o, *packet);
  if (!o.good.empty() || !o.good_defines.empty() || !o.good_params.empty() ||
      !o.design_cache.empty())
    return fail_command("minimize", o.json, 2,
                        "--good, --good-define, --good-param and --design-cache apply to a "
                        "design packet; " + o.packet + " is a packet of " +
                        packet->header.design());
  std::string design_error;
  const std::string revision = emu::packet_design_revision(packet->header.design(), design_error);
  if (revision.empty())
    return fail_command("minimize", o.json, 125, o.packet + ": " + design_error);
  if (!o.allow_revision_mismatch && packet->header.model_revision() != revision) {
    return fail_command("minimize", o.json, 125,
                        o.packet + " was recorded with model revision " +
                            packet->header.model_revision() + ", this is " + revision +
                            " (use --allow-revision-mismatch)");
  }
  auto spec = replay::spec_from_header(packet->header);
  if (!spec) {
    return fail_command("minimize", o.json, 125, std::string(o.packet) + ": " + spec.error());
  }
  debugger::MinimizeInput in;
  in.workload_text = spec->workload_text;
  in.options = spec->options;
  debugger::MinimizeOptions mo;
  mo.max_candidates = o.max_candidates;
  const bool tty = isatty(STDERR_FILENO) != 0;
  mo.progress = [tty](uint32_t tried, uint32_t kept) {
    if (tty) std::fprintf(stderr, "\rminimize: %u candidates, %u kept   ", tried, kept);
  };
  auto r = debugger::minimize(in, mo);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!r.ok) {
    if (o.json)
      std::cout << r.to_json().dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    return fail_command("minimize", o.json, 1, r.error);
  }
  // Record the reproducer and prove it replays.
  replay::RunSpec out_spec = *spec;
  out_spec.workload_text = r.minimized.workload_text;
  out_spec.options = r.minimized.options;
  out_spec.annotations.push_back("minimized from " + o.packet + " (" +
                                 std::to_string(r.cycles_before) + " -> " +
                                 std::to_string(r.cycles_after) + " cycles)");
  auto prepared = replay::prepare_spec(out_spec, true);
  if (!prepared) {
    return fail_command("minimize", o.json, 1,
                        "the minimized workload does not prepare: " + prepared.error());
  }
  replay::RecordConfig rc;
  rc.digest_interval = packet->header.intervals().digest();
  rc.checkpoint_interval = packet->header.intervals().checkpoint();
  if (!rc.validate().empty()) rc = replay::RecordConfig{};
  const auto rec = replay::record_run(o.output, out_spec, *prepared, rc);
  if (!rec.error.empty()) {
    return fail_command("minimize", o.json, 1, rec.error);
  }
  replay::ReplayOptions ro;
  ro.prefix_check = debugger::golden_prefix_check();
  const auto check = replay::replay_file(o.output, ro);
  json::Json j = r.to_json();
  std::error_code ec;
  const auto before = std::filesystem::file_size(o.packet, ec);
  const auto after = std::filesystem::file_size(o.output, ec);
  j["bytes_before"] = static_cast<uint64_t>(before);
  j["bytes_after"] = static_cast<uint64_t>(after);
  j["output"] = o.output;
  j["replay"] = replay::verdict_name(check.verdict);
  if (o.json) {
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << r.text() << "bytes      " << before << " -> " << after << "\n"
              << "packet     " << o.output << " (replay: " << replay::verdict_name(check.verdict)
              << ")\n";
  }
  return check.verdict == replay::Verdict::Reproduced ? 0 : 1;
}

}  // namespace bud::cli
