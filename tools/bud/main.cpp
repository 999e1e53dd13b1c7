// bud: a bring-up debugger for AI-accelerator RTL. main only wires the subcommands.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bud/ModelRevision.h"
#include "tools/bud/AttachCommand.h"
#include "tools/bud/BisectCommand.h"
#include "tools/bud/DebugCommand.h"
#include "tools/bud/MinimizeCommand.h"
#include "tools/bud/PacketCommand.h"
#include "tools/bud/ReplayCommand.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/ServeCommand.h"
#include "tools/bud/TriggerCommand.h"
#include "tools/bud/WorkloadsCommand.h"

int main(int argc, char** argv) {
  CLI::App app{"bud: bring-up debugger for the NPU accelerator RTL"};
  app.footer(
      "Examples:\n"
      "  bud workloads                 # what can run\n"
      "  bud run gemm_small            # run and check bit-exactly against the golden model\n"
      "  bud run conv --json           # machine-readable result\n"
      "  bud debug conv                # interactive: break, step, print, goto, wave dump\n"
      "  bud trigger check my.trig     # validate a trigger file (docs/triggers.md)\n"
      "  bud serve conv --listen unix:/tmp/conv.sock; bud attach unix:/tmp/conv.sock  # remote\n"
      "Run `bud COMMAND --help` for each command's options.");
  app.set_version_flag("--version", std::string("bud 0.1.0, model ") +
                                        bud::build::kModelRevision + ", " +
                                        bud::build::kVerilatorVersion);
  app.require_subcommand(1);
  bud::cli::RunCommandOptions run_options;
  bud::cli::WorkloadsOptions workloads_options;
  bud::cli::setup_run(app, run_options);
  bud::cli::setup_workloads(app, workloads_options);
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (app.got_subcommand("run")) return bud::cli::run_run(run_options);
  if (app.got_subcommand("workloads")) return bud::cli::run_workloads(workloads_options);
  if (app.got_subcommand("debug")) return bud::cli::run_debug(debug_options);
  if (app.got_subcommand("packet")) return bud::cli::run_packet(packet_options);
  if (app.got_subcommand("replay")) return bud::cli::run_replay(replay_options);
  if (app.got_subcommand("bisect")) return bud::cli::run_bisect(bisect_options);
  if (app.got_subcommand("minimize")) return bud::cli::run_minimize(minimize_options);
  if (app.got_subcommand("trigger")) return bud::cli::run_trigger(trigger_options);
  if (app.got_subcommand("serve")) return bud::cli::run_serve(serve_options);
  if (app.got_subcommand("attach")) return bud::cli::run_attach(attach_options);
  return 2;
}
