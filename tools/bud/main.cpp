// bud: a bring-up debugger for AI-accelerator RTL. main only wires the subcommands.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "bud/ModelRevision.h"
#include "tools/bud/AttachCommand.h"
#include "tools/bud/BisectCommand.h"
#include "tools/bud/CorpusCommand.h"
#include "tools/bud/DebugCommand.h"
#include "tools/bud/DesignCommand.h"
#include "tools/bud/FitCommand.h"
#include "tools/bud/MatrixCommand.h"
#include "tools/bud/ImportCommand.h"
#include "tools/bud/MinimizeCommand.h"
#include "tools/bud/Output.h"
#include "tools/bud/PacketCommand.h"
#include "tools/bud/ProfileCommand.h"
#include "tools/bud/ServeLoadCommand.h"
#include "tools/bud/MemoCommand.h"
#include "tools/bud/ReplayCommand.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/ServeCommand.h"
#include "tools/bud/TriggerCommand.h"
#include "tools/bud/WorkloadsCommand.h"

namespace {

// Levenshtein distance, for "did you mean" on a mistyped subcommand.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest subcommand name within two edits (or a prefix of one), empty when none is close.
std::string closest_subcommand(const CLI::App& app, const std::string& word) {
  std::string best;
  size_t best_d = 3;
  for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = s->get_name();
    const size_t d = name.rfind(word, 0) == 0 ? 1 : edit_distance(word, name);
    if (d < best_d) best_d = d, best = name;
  }
  return best;
}

bool has_subcommand(CLI::App& app, const std::string& name) {
  try {
    return app.get_subcommand(name) != nullptr;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bud: bring-up debugger for the NPU accelerator RTL"};
  app.footer(
      "Examples:\n"
      "  bud workloads                 # what can run\n"
      "  bud run gemm_small            # run and check bit-exactly against the golden model\n"
      "  bud run conv --json           # machine-readable result\n"
      "  bud import model.onnx -o m.textpb  # ONNX model to workload (docs/import.md)\n"
      "  bud profile conv              # where the cycles went, per layer (docs/profiling.md)\n"
      "  bud memo base.bpk new.bpk     # review memo of a performance change\n"
      "  bud serve-load mlp --sla-p99-us 200  # latency and perf/W under load (docs/serving.md)\n"
      "  bud debug conv                # interactive: break, step, print, goto, wave dump\n"
      "  bud trigger check my.trig     # validate a trigger file (docs/triggers.md)\n"
      "  bud design check my.toml      # your own design: check its file (docs/designs.md)\n"
      "  bud serve conv --listen unix:/tmp/conv.sock; bud attach unix:/tmp/conv.sock  # remote\n"
      "Run `bud COMMAND --help` for each command's options.");
  app.set_version_flag("--version", std::string("bud 0.1.0, model ") +
                                        bud::build::kModelRevision + ", " +
                                        bud::build::kVerilatorVersion);
  app.require_subcommand(1);
  bud::cli::RunCommandOptions run_options;
  bud::cli::WorkloadsOptions workloads_options;
  bud::cli::ImportOptions import_options;
  bud::cli::setup_run(app, run_options);
  bud::cli::setup_workloads(app, workloads_options);
  bud::cli::setup_import(app, import_options);
  bud::cli::ProfileCommandOptions profile_options;
  bud::cli::setup_profile(app, profile_options);
  bud::cli::MemoOptions memo_options;
  bud::cli::setup_memo(app, memo_options);
  bud::cli::ServeLoadOptions serve_load_options;
  bud::cli::setup_serve_load(app, serve_load_options);
  bud::cli::FitOptions fit_options;
  bud::cli::setup_fit(app, fit_options);
  bud::cli::MatrixOptions matrix_options;
  bud::cli::setup_matrix(app, matrix_options);
  bud::cli::DebugOptions debug_options;
  bud::cli::setup_debug(app, debug_options);
  bud::cli::PacketOptions packet_options;
  bud::cli::setup_packet(app, packet_options);
  bud::cli::ReplayCommandOptions replay_options;
  bud::cli::setup_replay(app, replay_options);
  bud::cli::BisectCommandOptions bisect_options;
  bud::cli::setup_bisect(app, bisect_options);
  bud::cli::MinimizeCommandOptions minimize_options;
  bud::cli::setup_minimize(app, minimize_options);
  bud::cli::TriggerCommandOptions trigger_options;
  bud::cli::setup_trigger(app, trigger_options);
  bud::cli::ServeOptions serve_options;
  bud::cli::setup_serve(app, serve_options);
  bud::cli::AttachOptions attach_options;
  bud::cli::setup_attach(app, attach_options);
  bud::cli::CorpusOptions corpus_options;
  bud::cli::setup_corpus(app, corpus_options);
  bud::cli::DesignOptions design_options;
  bud::cli::setup_design(app, design_options);
  // `bud help [SUBCOMMAND]` is `bud [SUBCOMMAND] --help`; an unknown first word gets a suggestion
  // instead of CLI11's "arguments were not expected".
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "help") {
    args.erase(args.begin());
    if (args.size() > 1) {
      std::cerr << "bud help: expected at most one command name, got " << args.size() << "\n";
      return 2;
    }
    if (!args.empty() && !has_subcommand(app, args[0])) {
      const auto near = closest_subcommand(app, args[0]);
      std::cerr << "bud help: unknown command '" << args[0] << "'"
                << (near.empty() ? std::string() : "; did you mean 'bud help " + near + "'?")
                << " (see `bud help`)\n";
      return 2;
    }
    args.push_back("--help");
  } else if (!args.empty() && !args[0].empty() && args[0][0] != '-' &&
             !has_subcommand(app, args[0])) {
    const auto near = closest_subcommand(app, args[0]);
    const std::string message =
        "bud: unknown command '" + args[0] + "'" +
        (near.empty() ? std::string() : "; did you mean 'bud " + near + "'?") + " (see `bud help`)";
    std::cerr << message << "\n";
    if (std::find(args.begin(), args.end(), "--json") != args.end())
      std::cout << bud::cli::usage_error_json(message) << "\n";
    return 2;
  }
  if (!args.empty() && args[0] == "matrix") bud::cli::protect_inline_configurations(args);
  app.name("bud");
  // CLI11 consumes the vector it parses; remember whether --json was asked for.
  const bool json = std::find(args.begin(), args.end(), "--json") != args.end();
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector form last-argument-first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    // --json callers get their one object on usage errors too.
    if (json) std::cout << bud::cli::usage_error_json(std::string("bud: ") + e.what()) << "\n";
    return 2;
  }
  if (app.got_subcommand("run")) return bud::cli::run_run(run_options);
  if (app.got_subcommand("profile")) return bud::cli::run_profile(profile_options);
  if (app.got_subcommand("memo")) return bud::cli::run_memo(memo_options);
  if (app.got_subcommand("serve-load")) return bud::cli::run_serve_load(serve_load_options);
  if (app.got_subcommand("fit")) return bud::cli::run_fit(fit_options);
  if (app.got_subcommand("matrix")) return bud::cli::run_matrix(matrix_options);
  if (app.got_subcommand("workloads")) return bud::cli::run_workloads(workloads_options);
  if (app.got_subcommand("import")) return bud::cli::run_import(import_options);
  if (app.got_subcommand("debug")) return bud::cli::run_debug(debug_options);
  if (app.got_subcommand("packet")) return bud::cli::run_packet(packet_options);
  if (app.got_subcommand("replay")) return bud::cli::run_replay(replay_options);
  if (app.got_subcommand("bisect")) return bud::cli::run_bisect(bisect_options);
  if (app.got_subcommand("minimize")) return bud::cli::run_minimize(minimize_options);
  if (app.got_subcommand("trigger")) return bud::cli::run_trigger(trigger_options);
  if (app.got_subcommand("serve")) return bud::cli::run_serve(serve_options);
  if (app.got_subcommand("attach")) return bud::cli::run_attach(attach_options);
  if (app.got_subcommand("corpus")) return bud::cli::run_corpus(corpus_options);
  if (app.got_subcommand("design")) return bud::cli::run_design(design_options);
  return 2;
}
