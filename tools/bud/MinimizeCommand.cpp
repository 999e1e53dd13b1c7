#include "tools/bud/MinimizeCommand.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "debugger/bisect/GoldenPrefixChecker.h"
#include "debugger/bisect/Minimizer.h"
#include "emu/run/Designs.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"
#include "replay/Replayer.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_minimize(CLI::App& app, MinimizeCommandOptions& options) {
  auto* sub = app.add_subcommand(
      "minimize", "Shrink a failing packet while the same symptom and first failing stage persist");
  sub->footer(
      "Examples:\n"
      "  bud minimize bad.bpk -o min.bpk\n"
      "  bud minimize bad.bpk -o min.bpk --json --max-candidates 100\n"
      "The result is a valid packet that replays deterministically (checked before exiting).\n"
      "Exit status: 0 minimized, 1 nothing to minimize or the result did not reproduce,\n"
      "2 bad usage, 125 the packet cannot be used.");
  sub->add_option("packet", options.packet, "Replay packet of a failing run")->required();
  sub->add_option("-o,--output", options.output, "Where to write the minimized packet")->required();
  sub->add_option("--max-candidates", options.max_candidates, "Candidate runs at most")
      ->capture_default_str();
  sub->add_flag("--allow-revision-mismatch", options.allow_revision_mismatch,
                "Use a packet recorded with another model revision");
  sub->add_flag("--json", options.json, "One JSON object");
}

int run_minimize(const MinimizeCommandOptions& o) {
  std::string error;
  auto packet = replay::read_packet(o.packet, error);
  if (!packet) {
    return fail_command("minimize", o.json, 125, error);
  }
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
