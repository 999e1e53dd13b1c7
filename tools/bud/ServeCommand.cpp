#include "tools/bud/ServeCommand.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <iostream>
#include <thread>

#include "debugger/commands/Interpreter.h"
#include "debugger/json/Json.h"
#include "debugger/remote/DebugServer.h"
#include "debugger/remote/TokenAuth.h"
#include "emu/npu/NpuEmulator.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"
#include "tools/bud/DebugCommand.h"
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
}

namespace {

// `record start|stop` for remote sessions: the same design as `bud debug`'s backend (the
// recorded range is re-simulated in a second emulator from the state saved at `start`).
class ServeRecordBackend final : public debugger::RecordBackend {
 public:
  ServeRecordBackend(replay::RunSpec spec, const run::PreparedRun& prepared)
      : spec_(std::move(spec)), prepared_(prepared) {}

  std::string start(debugger::Session& session, const std::string& path) override {
    if (active_) return "already recording to " + path_ + " (record stop first)";
    std::string error;
    if (!replay::PacketWriter::create(path, error)) return error;
    state_.clear();
    session.emu().save(state_);
    start_cycle_ = session.emu().cycle();
    path_ = path;
    active_ = true;
    return {};
  }

  std::string stop(debugger::Session& session, std::string& summary) override {
    if (!active_) return "not recording (record start FILE first)";
    active_ = false;
    const uint64_t end = session.emu().cycle();
    if (end < start_cycle_) return "the session went back before the recording started";
    emu::NpuEmulator emu(spec_.options.npu);
    std::string error;
    if (auto e = run::start(prepared_, spec_.options, emu, &emu); !e.empty()) return e;
    if (!emu.restore(state_, error)) return error;
    auto writer = replay::PacketWriter::create(path_, error);
    if (!writer) return error;
    replay::RecordConfig config;
    replay::Recorder rec(*writer, emu, config);
    const auto header = replay::make_header(spec_, prepared_, config.digest_interval,
                                            config.checkpoint_interval, start_cycle_);
    const std::vector<std::string> notes = {"recorded through bud serve, cycles " +
                                            std::to_string(start_cycle_) + ".." +
                                            std::to_string(end)};
    if (!rec.begin(header, replay::encode_job(prepared_.job), notes) || !rec.run(end))
      return rec.error();
    bool ok = true;
    if (emu.state() != emu::RunState::Ready) {
      run::RunOptions ro = spec_.options;
      ro.progress = nullptr;
      const auto report = run::finish(prepared_, ro, emu);
      ok = rec.end(&report, false);
    } else {
      ok = rec.end(nullptr, true);
    }
    if (!ok) return rec.error();
    const auto s = rec.summary();
    summary = "recorded cycles " + std::to_string(start_cycle_) + ".." + std::to_string(end) +
              " to " + path_ + " (" + std::to_string(s.bytes) + " bytes)";
    return {};
  }

 private:
  replay::RunSpec spec_;
  const run::PreparedRun& prepared_;
  std::vector<uint8_t> state_;
  uint64_t start_cycle_ = 0;
  std::string path_;
  bool active_ = false;
};

// The packet's checkpoints as named checkpoints "packet@CYCLE" (as `bud debug --packet`).
std::string attach_packet(debugger::Session& session, const replay::Packet& packet) {
  std::string error;
  std::vector<uint8_t> first;
  for (size_t i = 0; i < packet.checkpoints.size(); ++i) {
    auto state = packet.checkpoint_state(i, error);
    if (!state) return error;
    if (!session.emu().restore(*state, error)) return packet.name + ": " + error;
    session.timeline().save_named("packet@" + std::to_string(packet.checkpoints[i].cycle()));
    if (i == 0) first = std::move(*state);
  }
  if (!first.empty() && !session.emu().restore(first, error)) return error;
  return {};
}

int fail(const std::string& message) {
  std::cerr << "bud serve: " << message << "\n";
  return 2;
}

}  // namespace

int run_serve(const ServeOptions& options) {
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

  run::RunOptions ro = options.run;
  if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty()) return fail(e);
  std::optional<replay::Packet> packet;
  if (!options.packet.empty()) {
    packet = replay::read_packet(options.packet, error);
    if (!packet) return fail(error);
    auto spec = replay::spec_from_header(packet->header);
    if (!spec) return fail(options.packet + ": " + spec.error());
    ro = spec->options;
  }
  auto prepared = packet ? replay::prepare_spec(replay::spec_from_header(packet->header).value())
                         : run::prepare(ro);
  if (!prepared) return fail(prepared.error());
  debugger::SessionConfig sconfig;
  if (options.checkpoint_interval) sconfig.timeline.interval = options.checkpoint_interval;
  sconfig.timeline.memory_budget = options.checkpoint_budget_mb << 20;
  auto session = make_npu_session(*prepared, ro, sconfig, error);
  if (!session) return fail(error);
  if (packet)
    if (auto e = attach_packet(*session, *packet); !e.empty()) return fail(e);
  std::unique_ptr<ServeRecordBackend> recorder;
  {
    auto spec =
        packet ? replay::spec_from_header(packet->header) : replay::make_spec(ro, *prepared);
    if (spec) {
      recorder = std::make_unique<ServeRecordBackend>(std::move(spec).value(), *prepared);
      debugger::set_record_backend(recorder.get());
    }
  }
  struct Uninstall {
    ~Uninstall() { debugger::set_record_backend(nullptr); }
  } uninstall;
  // Trigger captures go to the output directory like every other file the server writes.
  auto triggers = attach_triggers(*session, *prepared, ro, options.triggers, output->path(), error);
  if (!triggers) return fail(error + "\n" + options.triggers + " is invalid");

  remote::DebugServer server(*session, *output, config);
  if (auto e = server.start(); !e.empty()) return fail(e);
  if (options.run_now)
    if (auto e = server.run_in_background(); !e.empty()) return fail(e);
  if (options.json) {
    json::Json j = json::Json::object();
    j.set("listening", server.address().to_string());
    j.set("workload", prepared->workload.name);
    j.set("output_dir", output->path());
    j.set("pid", static_cast<int64_t>(getpid()));
    j.set("running", options.run_now);
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << "bud serve: listening on " << server.address().to_string() << " ("
              << prepared->workload.name << ", " << prepared->program.commands.size()
              << " commands, " << (options.run_now ? "running" : "stopped at cycle 0")
              << "); output directory " << output->path() << std::endl;
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

}  // namespace bud::cli
