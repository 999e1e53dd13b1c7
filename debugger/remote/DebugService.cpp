#include "debugger/remote/DebugService.h"

#include <chrono>
#include <condition_variable>

#include "debugger/commands/Format.h"
#include "debugger/remote/CommandPolicy.h"
#include "debugger/remote/Utf8.h"
#include "debugger/trigger/TriggerFile.h"
#include "emu/core/Fault.h"

namespace bud::remote {

namespace {

constexpr uint32_t kProtocolMinor = 1;
constexpr auto kPoll = std::chrono::milliseconds(50);

std::string metadata(const grpc::ServerContext* ctx, const char* key) {
  const auto& md = ctx->client_metadata();
  auto it = md.find(key);
  if (it == md.end()) return {};
  return std::string(it->second.data(), it->second.size());
}

v1::Role role_of(ClientRole r) {
  return r == ClientRole::Controller ? v1::ROLE_CONTROLLER : v1::ROLE_OBSERVER;
}

void fill_stop(const debugger::StopInfo& s, v1::StopInfo* out) {
  out->set_cycle(s.cycle);
  for (const auto& r : s.reasons) {
    auto* x = out->add_reasons();
    x->set_kind(debugger::stop_kind_name(r.kind));
    x->set_id(r.id);
    x->set_detail(valid_utf8(r.detail));
  }
}

void fill_reply(const debugger::CommandResult& r, uint64_t cycle, v1::CommandReply& out) {
  out.set_ok(r.ok);
  out.set_error(valid_utf8(r.error));
  for (const auto& l : r.lines) out.add_lines(valid_utf8(l));
  out.set_data_json(r.data.dump(-1, ' ', false, json::Json::error_handler_t::replace));
  out.set_cycle(cycle);
  if (r.stop) fill_stop(*r.stop, out.mutable_stop());
  out.set_quit(r.quit);
}

// Printable text only: a line is one prompt command.
bool printable(const std::string& s) {
  for (char ch : s)
    if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\t') || ch == 0x7f) return false;
  return true;
}

grpc::Status refused(Refusal why, const std::string& error) {
  switch (why) {
    case Refusal::Busy:
      return {grpc::StatusCode::FAILED_PRECONDITION, valid_utf8(error)};
    case Refusal::QueueFull:
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, valid_utf8(error)};
    case Refusal::Stopping:
      return {grpc::StatusCode::UNAVAILABLE, valid_utf8(error)};
    case Refusal::None:
      break;
  }
  return grpc::Status::OK;
}

}  // namespace

DebugService::DebugService(RequestExecutor& executor, ClientRegistry& clients, EventBus& events,
                           TokenAuth auth, RequestLimits limits, std::function<void()> on_shutdown)
    : executor_(executor),
      clients_(clients),
      events_(events),
      auth_(std::move(auth)),
      limits_(limits),
      on_shutdown_(std::move(on_shutdown)) {}

void DebugService::publish(EventBus& bus, const ExecutorEvent& e) {
  v1::Event ev;
  switch (e.kind) {
    case ExecutorEvent::Kind::Running:
      ev.mutable_running()->set_cycle(e.cycle);
      break;
    case ExecutorEvent::Kind::Stopped:
      fill_stop(e.stop, ev.mutable_stopped());
      break;
    case ExecutorEvent::Kind::TriggerHit: {
      auto* h = ev.mutable_trigger_hit();
      h->set_cycle(e.hit.cycle);
      h->set_trigger_id(e.hit.trigger_id);
      h->set_trigger(valid_utf8(e.hit.trigger));
      h->set_number(e.hit.number);
      h->set_halted(e.hit.halted);
      for (const auto& [name, value] : e.hit.values) {
        auto* c = h->add_values();
        c->set_name(valid_utf8(name));
        c->set_value(value);
      }
      for (const auto& c : e.hit.captures)
        if (c.error.empty()) {
          h->add_captures(valid_utf8(c.fst));
          h->add_captures(valid_utf8(c.log));
        }
      for (const auto& m : e.hit.messages) h->add_messages(valid_utf8(m));
      break;
    }
    case ExecutorEvent::Kind::Symptom: {
      auto* s = ev.mutable_symptom();
      s->set_kind(emu::run_state_name(e.state));
      s->set_cycle(e.cycle);
      s->set_message(valid_utf8(e.message));
      break;
    }
    case ExecutorEvent::Kind::RunFinished: {
      auto* f = ev.mutable_run_finished();
      f->set_state(emu::run_state_name(e.state));
      f->set_cycle(e.cycle);
      break;
    }
  }
  bus.publish(ev);
}

grpc::Status DebugService::authenticate(grpc::ServerContext* ctx) const {
  if (!auth_.accepts(metadata(ctx, "authorization")))
    return {grpc::StatusCode::UNAUTHENTICATED, "missing or wrong token (bud attach --token-file)"};
  return grpc::Status::OK;
}

grpc::Status DebugService::identify(grpc::ServerContext* ctx, ClientInfo& client) const {
  if (auto st = authenticate(ctx); !st.ok()) return st;
  auto c = clients_.find(metadata(ctx, "bud-session"));
  if (!c)
    return {grpc::StatusCode::FAILED_PRECONDITION,
            "no such session: call Attach first and send its id as bud-session metadata"};
  client = *c;
  return grpc::Status::OK;
}

grpc::Status DebugService::controller(grpc::ServerContext* ctx, ClientInfo& client) const {
  if (auto st = identify(ctx, client); !st.ok()) return st;
  if (client.role != ClientRole::Controller) {
    const std::string who = clients_.controller_name();
    return {grpc::StatusCode::PERMISSION_DENIED,
            "observers may only read (print, counters, x, info, where, help); " +
                (who.empty() ? std::string("take control first") : "'" + who + "' has control")};
  }
  return grpc::Status::OK;
}

template <class Reply>
grpc::Status DebugService::call(grpc::ServerContext* ctx, Access access,
                                std::function<grpc::Status(Reply&)> work, Reply* reply, bool wait) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    Reply reply;
  };
  auto st = std::make_shared<State>();
  std::string error;
  const Refusal why = executor_.submit(
      access,
      [st, work = std::move(work)](const std::string* refusal) {
        grpc::Status s =
            refusal ? grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, valid_utf8(*refusal))
                    : work(st->reply);
        {
          std::lock_guard<std::mutex> lock(st->m);
          st->status = s;
          st->done = true;
        }
        st->cv.notify_all();
      },
      error);
  if (why != Refusal::None) return refused(why, error);
  if (!wait) return grpc::Status::OK;
  std::unique_lock<std::mutex> lock(st->m);
  while (!st->cv.wait_for(lock, kPoll, [&] { return st->done; }))
    if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "the client went away"};
  *reply = st->reply;
  return st->status;
}

void DebugService::control_changed() {
  v1::Event ev;
  ev.mutable_control_changed()->set_controller(valid_utf8(clients_.controller_name()));
  events_.publish(ev);
}

grpc::Status DebugService::Attach(grpc::ServerContext* ctx, const v1::AttachRequest* req,
                                  grpc::ServerWriter<v1::Event>* writer) {
  if (auto st = authenticate(ctx); !st.ok()) return st;
  if (req->client_name().size() > limits_.max_name_bytes || !printable(req->client_name()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "client_name: at most 256 printable bytes"};
  // What the emulation is doing, read on its thread (between cycles when it runs).
  v1::Event first;
  auto st = call<v1::Attached>(
      ctx, Access::ReadOnly,
      [this](v1::Attached& a) {
        auto& s = executor_.session();
        a.set_workload(valid_utf8(s.program().workload));
        a.set_cycle(s.emu().cycle());
        a.set_running(executor_.running());
        return grpc::Status::OK;
      },
      first.mutable_attached());
  if (!st.ok()) return st;
  std::string error;
  auto client =
      clients_.add(req->client_name(), req->want_control(), req->require_control(), error);
  if (!client)
    return {req->require_control() && error.find("limit") == std::string::npos
                ? grpc::StatusCode::FAILED_PRECONDITION
                : grpc::StatusCode::RESOURCE_EXHAUSTED,
            error};
  first.mutable_attached()->set_session_id(valid_utf8(client->id));
  first.mutable_attached()->set_role(role_of(client->role));
  first.mutable_attached()->set_protocol_minor(kProtocolMinor);
  auto box = events_.subscribe(&first);
  {
    std::lock_guard<std::mutex> lock(boxes_mutex_);
    boxes_[client->id] = box;
  }
  if (client->role == ClientRole::Controller) control_changed();
  // The stream is the session: it ends when the client cancels or disconnects (IsCancelled),
  // when it detaches (its mailbox is closed) or when the server shuts down.
  while (!ctx->IsCancelled()) {
    auto ev = box->pop(kPoll);
    if (ev) {
      if (!writer->Write(*ev)) break;
    } else if (box->closed()) {
      break;
    }
  }
  events_.unsubscribe(box);
  {
    std::lock_guard<std::mutex> lock(boxes_mutex_);
    boxes_.erase(client->id);
  }
  if (clients_.remove(client->id)) control_changed();
  return grpc::Status::OK;
}

grpc::Status DebugService::Detach(grpc::ServerContext* ctx, const v1::DetachRequest*,
                                  v1::DetachReply*) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  const bool was_controller = clients_.remove(c.id);
  {
    std::lock_guard<std::mutex> lock(boxes_mutex_);
    if (auto it = boxes_.find(c.id); it != boxes_.end()) it->second->close();
  }
  if (was_controller) control_changed();
  return grpc::Status::OK;
}

grpc::Status DebugService::TakeControl(grpc::ServerContext* ctx, const v1::ControlRequest*,
                                       v1::ControlReply* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  const auto role = clients_.take_control(c.id);
  if (!role) return {grpc::StatusCode::FAILED_PRECONDITION, "the session ended"};
  reply->set_role(role_of(*role));
  reply->set_controller(valid_utf8(clients_.controller_name()));
  if (*role == ClientRole::Controller && c.role != ClientRole::Controller) control_changed();
  return grpc::Status::OK;
}

grpc::Status DebugService::ReleaseControl(grpc::ServerContext* ctx, const v1::ControlRequest*,
                                          v1::ControlReply* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  const bool released = clients_.release_control(c.id);
  reply->set_role(v1::ROLE_OBSERVER);
  reply->set_controller(valid_utf8(clients_.controller_name()));
  if (released) control_changed();
  return grpc::Status::OK;
}

grpc::Status DebugService::Execute(grpc::ServerContext* ctx, const v1::ExecuteRequest* req,
                                   v1::CommandReply* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  const std::string line = req->line();
  if (line.size() > limits_.max_line_bytes || !printable(line))
    return {
        grpc::StatusCode::INVALID_ARGUMENT,
        "a command line is at most " + std::to_string(limits_.max_line_bytes) + " printable bytes"};
  const bool read_only =
      executor_.collecting_commands() == 0 && is_read_only_command(executor_.commands(), line);
  if (!read_only)
    if (auto st = controller(ctx, c); !st.ok()) return st;
  const auto access = read_only ? Access::ReadOnly : Access::Control;
  auto st = call<v1::CommandReply>(
      ctx, access,
      [this, line, read_only](v1::CommandReply& out) {
        const auto r = read_only ? executor_.execute_read_only(line) : executor_.execute_line(line);
        fill_reply(r, executor_.session().emu().cycle(), out);
        return grpc::Status::OK;
      },
      reply);
  reply->set_running(executor_.running());
  return st;
}

grpc::Status DebugService::Complete(grpc::ServerContext* ctx, const v1::CompleteRequest* req,
                                    v1::CompleteReply* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  if (req->line().size() > limits_.max_line_bytes || !printable(req->line()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "line too long or not printable"};
  const std::string line = req->line();
  return call<v1::CompleteReply>(
      ctx, Access::ReadOnly,
      [this, line](v1::CompleteReply& out) {
        for (auto& s : executor_.complete(line)) out.add_candidates(valid_utf8(s));
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::Continue(grpc::ServerContext* ctx, const v1::ContinueRequest* req,
                                    v1::CommandReply* reply) {
  ClientInfo c;
  if (auto st = controller(ctx, c); !st.ok()) return st;
  const std::string line =
      req->cycles() ? "continue " + std::to_string(req->cycles()) : std::string("continue");
  auto st = call<v1::CommandReply>(
      ctx, Access::Control,
      [this, line](v1::CommandReply& out) {
        const auto r = executor_.execute_line(line);  // before reading the cycle it reached
        fill_reply(r, executor_.session().emu().cycle(), out);
        return grpc::Status::OK;
      },
      reply, req->wait());
  if (st.ok() && !req->wait()) {
    reply->set_ok(true);
    reply->add_lines("running in the background (interrupt to stop; a `stopped` event follows)");
    reply->set_running(true);
  } else {
    reply->set_running(executor_.running());
  }
  return st;
}

grpc::Status DebugService::Interrupt(grpc::ServerContext* ctx, const v1::InterruptRequest*,
                                     v1::InterruptReply* reply) {
  ClientInfo c;
  if (auto st = controller(ctx, c); !st.ok()) return st;
  reply->set_was_running(executor_.interrupt());
  return grpc::Status::OK;
}

grpc::Status DebugService::GetStatus(grpc::ServerContext* ctx, const v1::StatusRequest* req,
                                     v1::Status* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  const bool digest = req->digest();
  auto st = call<v1::Status>(
      ctx, Access::ReadOnly,
      [this, digest](v1::Status& out) {
        auto& s = executor_.session();
        out.set_cycle(s.emu().cycle());
        out.set_state(valid_utf8(emu::run_state_name(s.emu().state())));
        out.set_running(executor_.running());
        out.set_furthest_cycle(s.furthest_cycle());
        out.set_has_end_cycle(s.end_cycle().has_value());
        out.set_end_cycle(s.end_cycle().value_or(0));
        out.set_workload(valid_utf8(s.program().workload));
        if (digest) out.set_digest(s.emu().digest());
        if (auto* e = s.triggers()) out.set_trigger_hits(e->hits().size());
        return grpc::Status::OK;
      },
      reply);
  reply->set_role(role_of(c.role));
  reply->set_controller(valid_utf8(clients_.controller_name()));
  reply->set_sessions(static_cast<uint32_t>(clients_.size()));
  return st;
}

grpc::Status DebugService::ReadCounters(grpc::ServerContext* ctx,
                                        const v1::ReadCountersRequest* req, v1::Counters* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  // The design's description never changes after construction: safe to read on this thread.
  const emu::DesignInfo& design = executor_.session().emu().describe();
  std::vector<int> which;
  if (req->names().empty()) {
    for (int i = 0; i < design.num_counters(); ++i) which.push_back(i);
  } else {
    if (req->names_size() > design.num_counters() * 4)
      return {grpc::StatusCode::INVALID_ARGUMENT, "too many counter names"};
    for (const auto& n : req->names()) {
      const std::string name = n.rfind("pmu.", 0) == 0 ? n.substr(4) : n;
      const int found = design.find_counter(name).value_or(-1);
      if (found < 0)
        return {grpc::StatusCode::NOT_FOUND,
                valid_utf8("no counter '" + n.substr(0, limits_.max_name_bytes) +
                           "' (bud: `counters`)")};
      which.push_back(found);
    }
  }
  return call<v1::Counters>(
      ctx, Access::ReadOnly,
      [this, which, &design](v1::Counters& out) {
        auto& s = executor_.session();
        const auto& last = s.counters_at_last_stop();
        out.set_cycle(s.emu().cycle());
        for (int i : which) {
          auto* x = out.add_counters();
          const uint64_t v = s.emu().counter(i);
          x->set_name(valid_utf8(design.counters[static_cast<size_t>(i)]));
          x->set_value(v);
          x->set_delta(static_cast<int64_t>(v - last[static_cast<size_t>(i)]));
        }
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::ReadSignal(grpc::ServerContext* ctx, const v1::ReadSignalRequest* req,
                                      v1::SignalValue* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  if (req->name().empty() || req->name().size() > limits_.max_name_bytes || !printable(req->name()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "name: 1..256 printable bytes"};
  const std::string name = req->name();
  return call<v1::SignalValue>(
      ctx, Access::ReadOnly,
      [this, name](v1::SignalValue& out) {
        auto& emu = executor_.session().emu();
        std::string error;
        auto t = debugger::resolve_target(emu, name, error);
        if (!t) return grpc::Status(grpc::StatusCode::NOT_FOUND, valid_utf8(error));
        const auto v = debugger::read_target(emu, *t);
        out.set_name(valid_utf8(t->name));
        out.set_width(v.width);
        out.set_value(v.low());
        std::string bits;
        for (uint32_t b = 0; b < (v.width + 7) / 8 && b / 8 < v.words.size(); ++b)
          bits.push_back(static_cast<char>((v.words[b / 8] >> (8 * (b % 8))) & 0xff));
        out.set_bits(bits);
        out.set_cycle(emu.cycle());
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::ReadMemory(grpc::ServerContext* ctx, const v1::ReadMemoryRequest* req,
                                      v1::MemoryBytes* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  if (req->length() > limits_.max_read_bytes)
    return {grpc::StatusCode::OUT_OF_RANGE,
            "length " + std::to_string(req->length()) + " exceeds the limit of " +
                std::to_string(limits_.max_read_bytes) + " bytes per request"};
  if (req->memory().size() > limits_.max_name_bytes)
    return {grpc::StatusCode::INVALID_ARGUMENT, "memory name too long"};
  const std::string memory = req->memory();
  const uint64_t offset = req->offset();
  const uint32_t length = req->length();
  return call<v1::MemoryBytes>(
      ctx, Access::ReadOnly,
      [this, memory, offset, length](v1::MemoryBytes& out) {
        auto& emu = executor_.session().emu();
        const emu::MemoryInfo* info = nullptr;
        for (const auto& m : emu.memories())
          if (m.name == memory) info = &m;
        if (!info) {
          std::string names;
          for (const auto& m : emu.memories()) names += (names.empty() ? "" : ", ") + m.name;
          return grpc::Status(grpc::StatusCode::NOT_FOUND,
                              "no memory '" + memory + "' (memories: " + names + ")");
        }
        // offset + length <= size, written so that it cannot overflow.
        if (offset > info->size_bytes || length > info->size_bytes - offset)
          return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                              memory + " holds " + std::to_string(info->size_bytes) +
                                  " bytes; cannot read " + std::to_string(length) + " at " +
                                  std::to_string(offset));
        std::string data(length, '\0');
        if (length && !emu.read_memory(
                          memory, offset,
                          std::span<uint8_t>(reinterpret_cast<uint8_t*>(data.data()), data.size())))
          return grpc::Status(grpc::StatusCode::INTERNAL, "the emulator refused the read");
        out.set_data(std::move(data));
        out.set_cycle(emu.cycle());
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::LoadTriggers(grpc::ServerContext* ctx,
                                        const v1::LoadTriggersRequest* req,
                                        v1::CommandReply* reply) {
  ClientInfo c;
  if (auto st = controller(ctx, c); !st.ok()) return st;
  if (req->name().size() > limits_.max_name_bytes || !printable(req->name()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "name: at most 256 printable bytes"};
  const std::string text = req->text();
  const std::string name = req->name().empty() ? "<remote>" : req->name();
  return call<v1::CommandReply>(
      ctx, Access::Control,
      [this, text, name](v1::CommandReply& out) {
        auto& s = executor_.session();
        debugger::CommandResult r;
        auto* engine = s.triggers();
        if (!engine) {
          r.fail("triggers are not available in this session");
        } else {
          auto p = debugger::parse_triggers(text, name, engine->env());
          if (!p.ok()) {
            std::string e;
            for (const auto& x : p.errors) e += (e.empty() ? "" : "; ") + x.to_string();
            r.fail(e);
          } else {
            json::Json ids = json::Json::array();
            for (int id : engine->add(std::move(*p.program))) {
              ids.push_back(id);
              r.say("trigger " + std::to_string(id) + " loaded from " + name);
            }
            r.data["ids"] = ids;
          }
        }
        fill_reply(r, s.emu().cycle(), out);
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::ListFaults(grpc::ServerContext* ctx, const v1::ListFaultsRequest*,
                                      v1::FaultList* reply) {
  ClientInfo c;
  if (auto st = identify(ctx, c); !st.ok()) return st;
  return call<v1::FaultList>(
      ctx, Access::ReadOnly,
      [this](v1::FaultList& out) {
        for (const auto& f : executor_.session().emu().faults())
          out.add_faults(valid_utf8(f.to_string()));
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::InjectFault(grpc::ServerContext* ctx, const v1::InjectFaultRequest* req,
                                       v1::CommandReply* reply) {
  ClientInfo c;
  if (auto st = controller(ctx, c); !st.ok()) return st;
  if (req->spec().size() > limits_.max_line_bytes || !printable(req->spec()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "spec too long or not printable"};
  std::string error;
  auto fault = emu::parse_fault(req->spec(), error);
  if (!fault)
    return {grpc::StatusCode::INVALID_ARGUMENT, valid_utf8("'" + req->spec() + "': " + error)};
  const emu::FaultSpec f = *fault;
  return call<v1::CommandReply>(
      ctx, Access::Control,
      [this, f](v1::CommandReply& out) {
        auto& emu = executor_.session().emu();
        debugger::CommandResult r;
        if (f.cycle < emu.cycle())
          r.fail("cycle " + std::to_string(f.cycle) + " is in the past (now " +
                 std::to_string(emu.cycle()) + ")");
        else if (auto e = emu.add_fault(f); !e.empty())
          r.fail(e);
        else
          r.say("fault " + f.to_string() + " armed");
        fill_reply(r, emu.cycle(), out);
        return grpc::Status::OK;
      },
      reply);
}

grpc::Status DebugService::Shutdown(grpc::ServerContext* ctx, const v1::ShutdownRequest*,
                                    v1::ShutdownReply*) {
  ClientInfo c;
  if (auto st = controller(ctx, c); !st.ok()) return st;
  if (on_shutdown_) on_shutdown_();
  return grpc::Status::OK;
}

void DebugService::close_sessions() { events_.close_all(); }

}  // namespace bud::remote
