#include "tools/bud/AttachCommand.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "debugger/frontend/Console.h"
#include "debugger/json/Json.h"
#include "debugger/remote/RemoteClient.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_attach(CLI::App& app, AttachOptions& options) {
  auto* sub = app.add_subcommand("attach",
                                 "Open the bud debug prompt on an emulation served by `bud serve`");
  sub->footer(
      "Examples:\n"
      "  bud attach unix:/tmp/conv.sock                  # prompt; `detach` leaves it running\n"
      "  bud attach unix:lr.sock --observe               # read-only, while another client drives\n"
      "  bud attach unix:lr.sock -x check.bud --batch --json   # scripted, JSON per command\n"
      "  bud attach tcp:127.0.0.1:7000 --token-file ~/.bud-token\n"
      "  bud attach unix:lr.sock --events                # follow stops, trigger hits, symptoms\n"
      "Every bud debug command works. Here only: `detach` (also quit, Ctrl-D), `status`,\n"
      "`interrupt`, `control take|release`. `source FILE` and `trigger load FILE` read FILE on\n"
      "this machine; file names in wave/record commands are inside the server's --output-dir.\n"
      "Ctrl-C interrupts a running command.");
  sub->add_option("address", options.address, "unix:PATH or tcp:HOST:PORT")->required();
  sub->add_option("--token-file", options.token_file, "The server's token (mode 0600 file)");
  sub->add_option("-x,--script", options.scripts, "Run the commands in FILE first (repeatable)");
  sub->add_flag("--batch", options.batch, "Run the scripts and detach (status 1 if one failed)");
  sub->add_flag("--json", options.json, "Print each command's result as one JSON object per line");
  sub->add_flag("--observe", options.observe, "Attach as a read-only observer");
  sub->add_flag("--events", options.events, "Print events (one per line) until Ctrl-C");
  sub->add_option("--name", options.name, "Client name shown to other clients")
      ->capture_default_str();
}

namespace {

/// The attach prompt: runs lines on the server (intercepting the few that act on the client),
/// renders results exactly as debugger::Console does.
class RemotePrompt {
 public:
  RemotePrompt(remote::RemoteClient& client, const AttachOptions& options)
      : client_(client), options_(options) {
    echo_ = !options.json && !isatty(STDIN_FILENO);
    cycle_ = client.attached().cycle();
    interrupter_ = std::thread([this] { forward_interrupts(); });
  }
  ~RemotePrompt() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    interrupter_.join();
  }

  bool quit() const { return quit_; }
  bool failed() const { return failed_; }

  /// Runs one line; returns whether it succeeded.
  bool run_line(const std::string& line, const std::string* error_prefix = nullptr) {
    const auto args = debugger::parse_args(line);
    const std::string& cmd = args.command;
    if (cmd == "detach" || cmd == "quit" || cmd == "q" || cmd == "exit") {
      quit_ = true;
      render_local(line, true, "", {"detached; the emulation goes on"});
      return true;
    }
    if (cmd == "control") return control(line, args);
    if (cmd == "status" && args.words.empty()) return status(line);
    if (cmd == "interrupt" && args.words.empty()) return interrupt(line);
    if (cmd == "source") {
      if (args.words.size() != 1) return render_local(line, false, "usage: source FILE", {});
      return run_script(args.words[0]);
    }
    if ((cmd == "trigger" || cmd == "trig") && args.words.size() == 2 && args.words[0] == "load")
      return load_triggers(line, args.words[1], error_prefix);
    remote::v1::CommandReply reply;
    in_flight_.store(true);
    const auto st = client_.execute(line, reply);
    in_flight_.store(false);
    if (!st.ok()) {
      std::string e = remote::status_text(st);
      if (error_prefix) e = *error_prefix + e;
      return render_local(line, false, e, {});
    }
    if (!reply.ok() && error_prefix) reply.set_error(*error_prefix + reply.error());
    cycle_ = reply.cycle();
    render(line, reply);
    if (!reply.ok()) failed_ = true;
    return reply.ok();
  }

  /// Runs a script from this machine, stopping at the first failing command (FILE:LINE: error).
  bool run_script(const std::string& path) {
    std::ifstream f(path);
    if (!f) return render_local("source " + path, false, "cannot read script '" + path + "'", {});
    if (++depth_ > 16) {
      --depth_;
      return render_local("source " + path, false, path + ": scripts nested more than 16 deep", {});
    }
    std::string line;
    int lineno = 0;
    bool ok = true;
    while (std::getline(f, line)) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      const std::string prefix = path + ":" + std::to_string(lineno) + ": ";
      if (!run_line(line, &prefix)) {
        ok = false;
        break;
      }
      if (quit_) break;
    }
    --depth_;
    return ok;
  }

  void loop(debugger::LineReader& reader) {
    while (!quit_) {
      auto line = reader.read("(bud) ");
      if (!line) break;
      run_line(*line);
      if (!client_.attached_alive() && !quit_) {
        std::cerr << "bud attach: the server ended the session\n";
        failed_ = true;
        break;
      }
    }
  }

 private:
  bool control(const std::string& line, const debugger::Args& args) {
    const std::string sub = args.words.empty() ? "" : args.words[0];
    if (sub != "take" && sub != "release")
      return render_local(line, false, "usage: control take | control release", {});
    auto ctx = client_.context();
    remote::v1::ControlRequest req;
    remote::v1::ControlReply reply;
    const auto st = sub == "take" ? client_.stub().TakeControl(ctx.get(), req, &reply)
                                  : client_.stub().ReleaseControl(ctx.get(), req, &reply);
    if (!st.ok()) return render_local(line, false, remote::status_text(st), {});
    client_.set_role(reply.role());
    const bool controller = reply.role() == remote::v1::ROLE_CONTROLLER;
    if (sub == "take" && !controller)
      return render_local(line, false, "'" + reply.controller() + "' has control", {});
    return render_local(line, true, "",
                        {controller ? "you have control" : "you are an observer now"});
  }

  bool status(const std::string& line) {
    auto ctx = client_.context();
    remote::v1::StatusRequest req;
    remote::v1::Status st;
    const auto rpc = client_.stub().GetStatus(ctx.get(), req, &st);
    if (!rpc.ok()) return render_local(line, false, remote::status_text(rpc), {});
    cycle_ = st.cycle();
    return render_local(
        line, true, "",
        {st.workload() + " at cycle " + std::to_string(st.cycle()) + ", " + st.state() +
             (st.running() ? ", running" : ", stopped"),
         "you are " +
             std::string(st.role() == remote::v1::ROLE_CONTROLLER ? "the controller"
                                                                  : "an observer") +
             "; controller: " + (st.controller().empty() ? "none" : st.controller()) + "; " +
             std::to_string(st.sessions()) + " clients attached"});
  }

  bool interrupt(const std::string& line) {
    auto ctx = client_.context();
    remote::v1::InterruptRequest req;
    remote::v1::InterruptReply reply;
    const auto rpc = client_.stub().Interrupt(ctx.get(), req, &reply);
    if (!rpc.ok()) return render_local(line, false, remote::status_text(rpc), {});
    // The run stops at its next cycle; its stop arrives as an event, shown here.
    for (int i = 0; reply.was_running() && i < 100; ++i) {
      auto e = client_.next_event(std::chrono::milliseconds(100));
      if (e && e->has_stopped()) {
        cycle_ = e->stopped().cycle();
        std::string s = "stopped at cycle " + std::to_string(e->stopped().cycle());
        for (int k = 0; k < e->stopped().reasons_size(); ++k)
          s += (k ? "; " : ": ") + e->stopped().reasons(k).kind();
        return render_local(line, true, "", {s});
      }
    }
    return render_local(line, true, "", {reply.was_running() ? "interrupt sent" : "not running"});
  }

  bool load_triggers(const std::string& line, const std::string& path,
                     const std::string* error_prefix) {
    std::ifstream f(path);
    std::stringstream text;
    if (!f || !(text << f.rdbuf()))
      return render_local(line, false, "cannot read trigger file '" + path + "'", {});
    auto ctx = client_.context();
    remote::v1::LoadTriggersRequest req;
    req.set_text(text.str());
    req.set_name(path);
    remote::v1::CommandReply reply;
    const auto st = client_.stub().LoadTriggers(ctx.get(), req, &reply);
    if (!st.ok())
      return render_local(line, false,
                          (error_prefix ? *error_prefix : "") + remote::status_text(st), {});
    render(line, reply);
    if (!reply.ok()) failed_ = true;
    return reply.ok();
  }

  // Ctrl-C sets Session::interrupt_flag (Console's handler); while a command is on the server
  // it becomes an Interrupt request. Polled every 50 ms only while attached.
  void forward_interrupts() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (in_flight_.load() && debugger::Session::interrupt_flag().exchange(false)) {
        auto ctx = client_.context(std::chrono::milliseconds(2000));
        remote::v1::InterruptRequest req;
        remote::v1::InterruptReply reply;
        client_.stub().Interrupt(ctx.get(), req, &reply);
      }
    }
  }

  bool render_local(const std::string& line, bool ok, const std::string& error,
                    const std::vector<std::string>& lines) {
    remote::v1::CommandReply r;
    r.set_ok(ok);
    r.set_error(error);
    for (const auto& l : lines) r.add_lines(l);
    r.set_data_json("{}");
    r.set_cycle(cycle_);
    render(line, r);
    if (!ok) failed_ = true;
    return ok;
  }

  // The same rendering as debugger::Console::render (the data object arrives as JSON text).
  void render(const std::string& line, const remote::v1::CommandReply& r) {
    if (options_.json) {
      json::Json out = json::Json::object();
      out["command"] = line;
      out["ok"] = r.ok();
      out["cycle"] = r.cycle();
      if (!r.ok()) out["error"] = r.error();
      json::Json lines = json::Json::array();
      for (const auto& l : r.lines()) lines.push_back(l);
      out["output"] = std::move(lines);
      // The server renders data with the same writer; a reply that is not JSON stays visible as
      // a string rather than breaking the line.
      json::Json data = r.data_json().empty()
                            ? json::Json::object()
                            : json::Json::parse(r.data_json(), nullptr, /*allow_exceptions=*/false);
      out["data"] = data.is_discarded() ? json::Json(r.data_json()) : std::move(data);
      std::cout << out.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n"
                << std::flush;
      return;
    }
    if (echo_) std::cout << "(bud) " << line << "\n";
    for (const auto& l : r.lines()) std::cout << l << "\n";
    std::cout.flush();
    if (!r.ok()) std::cerr << "error: " << r.error() << "\n" << std::flush;
  }

  remote::RemoteClient& client_;
  const AttachOptions& options_;
  bool echo_ = false;
  bool quit_ = false;
  bool failed_ = false;
  int depth_ = 0;
  uint64_t cycle_ = 0;
  std::atomic<bool> in_flight_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread interrupter_;
};

std::string describe_event(const remote::v1::Event& e) {
  std::string s;
  if (e.has_running()) return "running from cycle " + std::to_string(e.running().cycle());
  if (e.has_stopped()) {
    s = "stopped at cycle " + std::to_string(e.stopped().cycle());
    for (int i = 0; i < e.stopped().reasons_size(); ++i) {
      const auto& r = e.stopped().reasons(i);
      s += (i ? "; " : ": ") + r.kind() + (r.id() ? " " + std::to_string(r.id()) : "") +
           (r.detail().empty() ? "" : " (" + r.detail() + ")");
    }
    return s;
  }
  if (e.has_trigger_hit())
    return "trigger " + std::to_string(e.trigger_hit().trigger_id()) + " (" +
           e.trigger_hit().trigger() + ") hit #" + std::to_string(e.trigger_hit().number()) +
           " at cycle " + std::to_string(e.trigger_hit().cycle());
  if (e.has_symptom())
    return "symptom " + e.symptom().kind() + " at cycle " + std::to_string(e.symptom().cycle()) +
           ": " + e.symptom().message();
  if (e.has_run_finished())
    return "run finished (" + e.run_finished().state() + ") at cycle " +
           std::to_string(e.run_finished().cycle());
  if (e.has_control_changed())
    return e.control_changed().controller().empty()
               ? std::string("control is free")
               : "'" + e.control_changed().controller() + "' has control";
  return "event";
}

int follow_events(remote::RemoteClient& client, bool json_out) {
  while (client.attached_alive() && !debugger::Session::interrupt_flag().load()) {
    auto e = client.next_event(std::chrono::milliseconds(200));
    if (!e) continue;
    if (json_out) {
      json::Json j = json::Json::object();
      j["sequence"] = e->sequence();
      j["event"] = describe_event(*e);
      std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << std::endl;
    } else {
      std::cout << "[" << e->sequence() << "] " << describe_event(*e) << std::endl;
    }
  }
  return 0;
}

}  // namespace

int run_attach(const AttachOptions& options) {
  remote::ClientOptions co;
  co.address = options.address;
  co.token_file = options.token_file;
  co.name = options.name;
  co.want_control = !options.observe && !options.events;
  std::string error;
  auto client = remote::RemoteClient::connect(co, error);
  if (!client) {
    return fail_command("attach", options.json, 2, error);
  }
  debugger::Console::install_interrupt_handler();
  const auto& a = client->attached();
  if (options.events) return follow_events(*client, options.json);
  if (!options.json && !options.batch) {
    std::cout << "bud attach: " << a.workload() << " at cycle " << a.cycle() << " ("
              << (a.running() ? "running" : "stopped") << "); you are "
              << (client->controller() ? "the controller" : "an observer (read-only)")
              << ". `help` lists commands; `detach` leaves the emulation as it is.\n";
  }
  if (!client->controller() && co.want_control && !options.json)
    std::cerr << "bud attach: another client has control; attached as an observer "
                 "(`control take` when it is free)\n";
  RemotePrompt prompt(*client, options);
  for (const auto& s : options.scripts) {
    if (!prompt.run_script(s) && options.batch) return 1;
    if (prompt.quit()) return prompt.failed() ? 1 : 0;
  }
  if (options.batch) return prompt.failed() ? 1 : 0;
  if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !options.json) {
    const char* home = std::getenv("HOME");
    auto* c = client.get();
    auto reader = debugger::make_editline_reader(
        [c](const std::string& line) {
          std::vector<std::string> out;
          auto ctx = c->context(std::chrono::milliseconds(2000));
          remote::v1::CompleteRequest req;
          req.set_line(line);
          remote::v1::CompleteReply reply;
          if (c->stub().Complete(ctx.get(), req, &reply).ok())
            for (const auto& s : reply.candidates()) out.push_back(s);
          return out;
        },
        home ? std::string(home) + "/.bud_history" : "");
    prompt.loop(*reader);
  } else {
    auto reader = debugger::make_stream_reader(std::cin);
    prompt.loop(*reader);
  }
  return prompt.failed() ? 1 : 0;
}

}  // namespace bud::cli
