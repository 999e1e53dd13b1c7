#include "tools/bud/ServeCommand.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

#include "debugger/commands/Interpreter.h"
#include "debugger/json/Json.h"
#include "debugger/remote/DebugServer.h"
#include "debugger/remote/TokenAuth.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"
#include "tools/bud/DebugCommand.h"
#include "tools/bud/DesignSession.h"
#include "tools/bud/Output.h"
#include "tools/bud/PacketSession.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

void setup_serve(CLI::App& app, ServeOptions& options) {
  auto* sub = app.add_subcommand(
      "serve", "Run a workload under the debug service for `bud attach` and scripts (gRPC)");
  sub->footer(
      "Examples:\n"
      "  bud serve conv --listen unix:/tmp/conv.sock           # private socket (mode 0600)\n"
      "  bud attach unix:/tmp/conv.sock                        # the bud debug prompt, remotely\n"
      "  bud serve long_run.textpb --run --listen unix:lr.sock # start running; attach later\n"
      "  bud serve mlp --listen tcp:127.0.0.1:7000 --token-file ~/.bud-token\n"
      "  bud serve --packet hang.bpk --listen unix:hang.sock   # serve a recorded run\n"
      "  bud serve --design vec_dma.toml --listen unix:v.sock  # a design file's model\n"
      "Files the clients ask for (wave dump, record start, trigger captures) are written inside\n"
      "--output-dir. Stop the server with Ctrl-C, SIGTERM or a controller's Shutdown request.\n"
      "docs/remote.md describes roles, events and the security model.");
  sub->add_option("workload", options.run.workload, "Built-in name or workload file")
      ->capture_default_str();
  add_emulation_options(*sub, options.run);
  sub->add_option("--fault", options.fault_texts,
                  "Inject a fault (repeatable; see bud run --help)");
  sub->add_option("--packet", options.packet, "Serve the run recorded in a replay packet");
  sub->add_option("--triggers", options.triggers, "Load the triggers of FILE");
  add_trigger_limit_options(*sub, options.trigger_limits);
  sub->add_option("--listen", options.listen, "unix:PATH or tcp:HOST:PORT (port 0: any free)")
      ->capture_default_str();
  sub->add_option("--token-file", options.token_file,
                  "Clients must present this token (mode 0600 file); required for TCP");
  sub->add_flag("--allow-remote", options.allow_remote,
                "Allow a non-loopback TCP address (needs --token-file; traffic is not encrypted)");
  sub->add_option("--output-dir", options.output_dir,
                  "The only directory the server writes files into (created 0700)")
      ->capture_default_str();
  sub->add_flag("--run", options.run_now, "Start running at once (as a background continue)");
  sub->add_option("--max-clients", options.max_clients, "Attached clients at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->add_option("--max-read-bytes", options.max_read_bytes, "ReadMemory bytes per request")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u << 20));
  sub->add_option("--checkpoint-interval", options.checkpoint_interval,
                  "Cycles between automatic checkpoints (0: the default, as bud debug)")
      ->capture_default_str();
  sub->add_option("--checkpoint-budget", options.checkpoint_budget_mb,
                  "MiB for automatic checkpoints")
      ->capture_default_str();
  sub->add_flag("--json", options.json, "Print the listening line as one JSON object");
  sub->add_option("--design", options.design,
                  "Serve the model of a design file (docs/designs.md) instead of a workload; "
                  "--seed seeds its back-pressure and DRAM timing");
  sub->add_option("--define", options.defines, "With --design: set a define (NAME[=VALUE])");
  sub->add_option("--param", options.params, "With --design: set a parameter (NAME=VALUE)");
  sub->add_option("--design-cache", options.design_cache,
                  "With --design or a design packet: the model cache (default: "
                  "$XDG_CACHE_HOME/bud/designs)");
}

namespace {

// Serves `session` until a Shutdown request or SIGINT/SIGTERM (`signals`, blocked by the
// caller): the listening line, then the wait.
int serve_session(const ServeOptions& options, debugger::Session& session,
                  const remote::OutputDir& output, remote::ServerConfig config,
                  const sigset_t& signals, const char* kind, const std::string& name,
                  const std::string& what) {
  remote::DebugServer server(session, output, config);
  if (auto e = server.start(); !e.empty()) return fail_command("serve", options.json, 2, e);
  if (options.run_now)
    if (auto e = server.run_in_background(); !e.empty())
      return fail_command("serve", options.json, 2, e);
  if (options.json) {
    json::Json j = json::Json::object();
    j["listening"] = server.address().to_string();
    j[kind] = name;  // "workload" or "design"
    j["output_dir"] = output.path();
    j["pid"] = static_cast<int64_t>(getpid());
    j["running"] = options.run_now;
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << "bud serve: listening on " << server.address().to_string() << " (" << what
              << ", " << (options.run_now ? "running" : "stopped at cycle 0")
              << "); output directory " << output.path() << std::endl;
  }
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    const timespec tick{0, 100'000'000};
    while (!done.load()) {
      if (sigtimedwait(&signals, nullptr, &tick) > 0) {
        server.request_shutdown();
        return;
      }
    }
  });
  server.wait();
  done.store(true);
  waiter.join();
  if (!options.json) std::cout << "bud serve: stopped" << std::endl;
  return 0;
}

// `bud serve --design FILE` or `--packet` of a design packet: the session `bud debug --design`
// opens, served; `record start|stop` and the `record` trigger action write design packets
// inside the output directory.
int serve_design(const ServeOptions& options, const std::optional<replay::Packet>& packet,
                 const remote::OutputDir& output, remote::ServerConfig config,
                 const sigset_t& signals) {
  const auto fail = [&options](int rc, const std::string& message) {
    return fail_command("serve", options.json, rc, message);
  };
  design::DesignError derr;
  std::optional<DesignOpen> open;
  if (packet) {
    if (!options.fault_texts.empty() || !options.defines.empty() || !options.params.empty() ||
        options.run.seed)
      return fail(2, options.packet + " is a design packet: it runs with the --define, --param "
                                      "and --seed it recorded (--fault, --define, --param and "
                                      "--seed do not apply)");
    open = open_design_packet(*packet, options.packet, options.design_cache, derr);
  } else {
    if (!options.fault_texts.empty())
      return fail(2, "--design cannot be combined with --fault");
    open = open_design_file(options.design,
                            design::target_options(options.defines, options.params,
                                                   options.design_cache, options.run.seed),
                            derr);
  }
  if (!open) return fail(derr.exit_code, derr.to_string());
  DesignSessionSetup setup;
  setup.emulator = options.run.emulator;
  setup.checkpoint_interval = options.checkpoint_interval;
  setup.checkpoint_budget_mb = options.checkpoint_budget_mb;
  setup.trigger_file = options.triggers;
  setup.triggers.capture_dir = output.path();
  setup.triggers.open_output = [&output](const std::string& name, std::string& e) {
    return output.create(name, e);
  };
  setup.triggers.limits = trigger_limits(options.trigger_limits);
  setup.origin = "recorded through bud serve";
  setup.resolve_record = [&output](const std::string& name, std::string& e) {
    return output.create(name, e);
  };
  std::string error;
  std::vector<std::string> errors;
  auto s = open_design_session(*open, setup, error, errors);
  if (!s) {
    for (const auto& e : errors) std::cerr << e << "\n";
    return fail(2, error);
  }
  config.record = s->recorder.get();
  return serve_session(options, *s->session, output, std::move(config), signals, "design",
                       open->target.spec.name, open->banner);
}

}  // namespace

int run_serve(const ServeOptions& options) {
  const auto fail = [&options](const std::string& message) {
    return fail_command("serve", options.json, 2, message);
  };
  // Signals are taken synchronously by one thread (below): block them before any thread exists
  // so that gRPC's and the emulation's threads inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (auto e = validate_emulation_options(options.run); !e.empty()) return fail(e);
  std::string error;
  auto address = remote::parse_listen_address(options.listen, error);
  if (!address) return fail("--listen " + error);
  if (address->kind == remote::ListenAddress::Kind::Unix) {
    // gRPC's own bind error for this is several lines about "Failed to add port"; say what it is.
    const auto dir = std::filesystem::path(address->path).parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      return fail("--listen " + options.listen + ": directory " + dir.string() +
                  (std::filesystem::exists(dir, ec) ? " is not a directory" : " does not exist"));
  }
  remote::ServerConfig config;
  config.address = *address;
  config.allow_remote = options.allow_remote;
  config.max_clients = options.max_clients;
  config.max_read_bytes = options.max_read_bytes;
  if (!options.token_file.empty()) {
    auto token = remote::load_token_file(options.token_file, error);
    if (!token) return fail(error);
    config.token = *token;
  }
  auto output = remote::OutputDir::open(options.output_dir, error);
  if (!output) return fail(error);
  if (!options.design.empty()) {
    if (!options.packet.empty()) return fail("--design cannot be combined with --packet");
    return serve_design(options, std::nullopt, *output, std::move(config), signals);
  }
  const bool design_flags =
      !options.defines.empty() || !options.params.empty() || !options.design_cache.empty();

  run::RunOptions ro = options.run;
  if (int rc = resolve_config("serve", options.json, ro)) return rc;
  if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty()) return fail(e);
  if (ro.thermal || !ro.point.empty() || !ro.energy_table.empty())
    if (auto table = resolve_power_options(ro); !table) return fail(table.error());
  std::optional<replay::Packet> packet;
  if (!options.packet.empty()) {
    packet = replay::read_packet(options.packet, error);
    if (!packet) return fail(error);
    if (packet->header.has_design_run())
      return serve_design(options, packet, *output, std::move(config), signals);
    auto spec = replay::spec_from_header(packet->header);
    if (!spec) return fail(options.packet + ": " + spec.error());
    ro = spec->options;
  }
  if (design_flags)  // a design packet was served above
    return fail("--define, --param and --design-cache need --design (or a design packet)");
  auto prepared = packet ? replay::prepare_spec(replay::spec_from_header(packet->header).value())
                         : run::prepare(ro);
  if (!prepared) return fail(prepared.error());
  debugger::SessionConfig sconfig;
  if (options.checkpoint_interval) sconfig.timeline.interval = options.checkpoint_interval;
  sconfig.timeline.memory_budget = options.checkpoint_budget_mb << 20;
  auto session = make_session(*prepared, ro, sconfig, error);
  if (!session) return fail(error);
  if (packet)
    if (auto e = attach_packet(*session, *packet); !e.empty()) return fail(e);
  auto check = attach_check(*session, *prepared, true, error);
  if (!check) return fail(error);
  struct UninstallCheck {
    debugger::Session& s;
    ~UninstallCheck() { s.set_stage_check(nullptr); }
  } uninstall_check{*session};
  std::unique_ptr<PacketRecordBackend> recorder;
  {
    auto spec =
        packet ? replay::spec_from_header(packet->header) : replay::make_spec(ro, *prepared);
    if (spec) {
      recorder = std::make_unique<PacketRecordBackend>(std::move(spec).value(), *prepared,
                                                       "recorded through bud serve");
      recorder->bind(*session);
    }
  }
  // Trigger captures, logs and state files are created through the output directory's
  // confinement function like every other file the server writes.
  debugger::TriggerEngineConfig tconfig;
  tconfig.capture_dir = output->path();
  tconfig.open_output = [&output](const std::string& name, std::string& e) {
    return output->create(name, e);
  };
  tconfig.limits = trigger_limits(options.trigger_limits);
  auto triggers = attach_triggers(*session, *prepared, ro, options.triggers, tconfig, error);
  if (!triggers) return fail(error + "\n" + options.triggers + " is invalid");
  if (recorder) {
    // The `record` trigger action writes inside the output directory too.
    recorder->set_trigger_resolver([&output](const std::string& name, std::string& e) {
      return output->create(name, e);
    });
    triggers->set_record_hook(recorder.get());
  }

  config.record = recorder.get();
  return serve_session(options, *session, *output, std::move(config), signals, "workload",
                       prepared->workload.name, prepared->workload.name + ", " +
                           std::to_string(prepared->program.commands.size()) + " commands");
}

}  // namespace bud::cli
