#include "debugger/remote/RemoteClient.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "debugger/remote/ListenAddress.h"
#include "debugger/remote/TokenAuth.h"

namespace bud::remote {

std::string status_text(const grpc::Status& s) {
  static const char* kNames[] = {"OK",
                                 "CANCELLED",
                                 "UNKNOWN",
                                 "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED",
                                 "NOT_FOUND",
                                 "ALREADY_EXISTS",
                                 "PERMISSION_DENIED",
                                 "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION",
                                 "ABORTED",
                                 "OUT_OF_RANGE",
                                 "UNIMPLEMENTED",
                                 "INTERNAL",
                                 "UNAVAILABLE",
                                 "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  const int code = static_cast<int>(s.error_code());
  const std::string name = code >= 0 && code <= 16 ? kNames[code] : std::to_string(code);
  return name + ": " + s.error_message();
}

std::unique_ptr<RemoteClient> RemoteClient::connect(const ClientOptions& o, std::string& error) {
  auto addr = parse_listen_address(o.address, error);
  if (!addr) return nullptr;
  if (addr->kind == ListenAddress::Kind::Unix) {
    struct stat st {};
    if (stat(addr->path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
      error = addr->to_string() + ": no socket there (is `bud serve` running?)";
      return nullptr;
    }
  }
  std::unique_ptr<RemoteClient> c(new RemoteClient());
  if (!o.token_file.empty()) {
    auto t = load_token_file(o.token_file, error);
    if (!t) return nullptr;
    c->token_ = *t;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(8 << 20);
  // One connection per client object: do not share subchannels between clients in one process
  // (tests open many), so a closed client really closes its socket.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  c->channel_ =
      grpc::CreateCustomChannel(addr->grpc_uri(), grpc::InsecureChannelCredentials(), args);
  if (!c->channel_->WaitForConnected(std::chrono::system_clock::now() + o.connect_timeout)) {
    error = addr->to_string() + ": cannot connect (is `bud serve` running there?)";
    return nullptr;
  }
  c->stub_ = v1::Debugger::NewStub(c->channel_);
  if (!c->token_.empty()) c->stream_ctx_.AddMetadata("authorization", "Bearer " + c->token_);
  v1::AttachRequest req;
  req.set_client_name(o.name);
  req.set_want_control(o.want_control);
  req.set_require_control(o.require_control);
  c->stream_ = c->stub_->Attach(&c->stream_ctx_, req);
  v1::Event first;
  if (!c->stream_->Read(&first) || !first.has_attached()) {
    const auto st = c->stream_->Finish();
    c->stream_.reset();
    c->detached_ = true;
    error =
        addr->to_string() + ": " + (st.ok() ? "the server closed the session" : status_text(st));
    return nullptr;
  }
  c->attached_ = first.attached();
  c->role_ = c->attached_.role();
  c->reader_ = std::thread([p = c.get()] { p->read_events(); });
  return c;
}

RemoteClient::~RemoteClient() { detach(); }

void RemoteClient::detach() {
  if (detached_ || !stub_ || !stream_) return;  // never attached
  detached_ = true;
  if (!stream_done_.load()) {
    auto ctx = context(std::chrono::milliseconds(2000));
    v1::DetachRequest req;
    v1::DetachReply reply;
    stub_->Detach(ctx.get(), req, &reply);
  }
  stream_ctx_.TryCancel();
  if (reader_.joinable()) reader_.join();
  if (stream_) stream_->Finish();
}

std::unique_ptr<grpc::ClientContext> RemoteClient::context(
    std::optional<std::chrono::milliseconds> deadline) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!token_.empty()) ctx->AddMetadata("authorization", "Bearer " + token_);
  ctx->AddMetadata("bud-session", attached_.session_id());
  if (deadline) ctx->set_deadline(std::chrono::system_clock::now() + *deadline);
  return ctx;
}

grpc::Status RemoteClient::execute(const std::string& line, v1::CommandReply& reply) {
  auto ctx = context();
  v1::ExecuteRequest req;
  req.set_line(line);
  return stub_->Execute(ctx.get(), req, &reply);
}

void RemoteClient::read_events() {
  v1::Event e;
  while (stream_->Read(&e)) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (events_.size() >= 4096) events_.pop_front();
      events_.push_back(e);
    }
    cv_.notify_all();
  }
  stream_done_.store(true);
  cv_.notify_all();
}

std::optional<v1::Event> RemoteClient::next_event(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_for(lock, timeout, [&] { return !events_.empty() || stream_done_.load(); });
  if (events_.empty()) return std::nullopt;
  auto e = events_.front();
  events_.pop_front();
  return e;
}

}  // namespace bud::remote
