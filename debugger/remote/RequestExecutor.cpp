#include "debugger/remote/RequestExecutor.h"

#include "debugger/remote/CommandPolicy.h"

namespace bud::remote {

namespace {

const std::string kRunning =
    "the emulation is running: only read-only requests are served until it stops (interrupt it "
    "first)";
const std::string kStopping = "the server is shutting down";

}  // namespace

RequestExecutor::RequestExecutor(debugger::Session& session, const OutputDir& output,
                                 std::function<void(const ExecutorEvent&)> on_event,
                                 size_t max_queue)
    : session_(session),
      output_(output),
      on_event_(std::move(on_event)),
      max_queue_(max_queue),
      control_(session),
      observer_(session) {
  session_.add_hook(this);
  engine_ = session_.triggers();
  if (engine_) published_hits_ = engine_->hits().size();
}

RequestExecutor::~RequestExecutor() {
  stop();
  session_.remove_hook(this);
}

void RequestExecutor::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void RequestExecutor::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  interrupt_.store(true);
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Jobs that arrived after the thread ended (or were never started) are refused.
  std::deque<Pending> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(queue_);
    pending_.store(false);
  }
  for (auto& p : left) p.job(&kStopping);
}

Refusal RequestExecutor::submit(Access access, Job job, std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      error = kStopping;
      return Refusal::Stopping;
    }
    if (queue_.size() >= max_queue_) {
      error = "too many requests queued (" + std::to_string(max_queue_) + "); try again";
      return Refusal::QueueFull;
    }
    if (access == Access::Control && running_.load()) {
      error = kRunning;
      return Refusal::Busy;
    }
    queue_.push_back({access, std::move(job)});
    pending_.store(true, std::memory_order_release);
  }
  cv_.notify_one();
  return Refusal::None;
}

bool RequestExecutor::interrupt() {
  if (!running_.load()) return false;
  interrupt_.store(true);
  return true;
}

void RequestExecutor::loop() {
  while (true) {
    Pending p;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
      p = std::move(queue_.front());
      queue_.pop_front();
      pending_.store(!queue_.empty(), std::memory_order_release);
    }
    p.job(nullptr);
    running_.store(false);
  }
}

void RequestExecutor::serve_between_cycles() {
  std::deque<Pending> jobs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs.swap(queue_);
    pending_.store(false, std::memory_order_release);
  }
  for (auto& p : jobs) p.job(p.access == Access::ReadOnly ? nullptr : &kRunning);
}

void RequestExecutor::emit(ExecutorEvent e) {
  if (on_event_) on_event_(e);
}

void RequestExecutor::arm() {
  // A fresh run: a stale interrupt (sent after the previous run had already stopped) must not
  // end it at its first cycle, unless the server is stopping.
  interrupt_.store(stopping_.load());
  ran_ = true;
  running_.store(true);
  ExecutorEvent e;
  e.kind = ExecutorEvent::Kind::Running;
  e.cycle = session_.emu().cycle();
  emit(std::move(e));
}

bool RequestExecutor::after_cycle(uint64_t cycle) {
  if (pending_.load(std::memory_order_relaxed)) [[unlikely]]
    serve_between_cycles();
  // Trigger hits that do not halt are streamed while the run goes on, every 16,384 cycles.
  if ((cycle & 0x3fff) == 0 && engine_ && engine_->hits().size() != published_hits_) [[unlikely]]
    publish_new_hits();
  return interrupt_.load(std::memory_order_relaxed);
}

void RequestExecutor::stop_reasons(std::vector<debugger::StopReason>& out) {
  if (interrupt_.exchange(false)) out.push_back({debugger::StopKind::Interrupted, 0, "remote request"});
}

void RequestExecutor::publish_new_hits() {
  if (!engine_) engine_ = session_.triggers();
  if (!engine_) return;
  const auto& hits = engine_->hits();
  if (hits.size() < published_hits_) published_hits_ = 0;  // the list was cleared
  for (; published_hits_ < hits.size(); ++published_hits_) {
    ExecutorEvent e;
    e.kind = ExecutorEvent::Kind::TriggerHit;
    e.cycle = hits[published_hits_].cycle;
    e.hit = hits[published_hits_];
    emit(std::move(e));
  }
}

debugger::CommandResult RequestExecutor::execute_line(const std::string& line) {
  debugger::CommandResult r;
  std::string error;
  auto confined = confine_paths(control_, line, output_, error);
  if (!confined) {
    r.fail(error);
    return r;
  }
  const auto before = session_.emu().state();
  ran_ = false;
  r = control_.execute(*confined);
  collecting_.store(control_.collecting_commands(), std::memory_order_release);
  if (ran_) publish_new_hits();
  if (r.stop) {
    ExecutorEvent e;
    e.kind = ExecutorEvent::Kind::Stopped;
    e.cycle = r.stop->cycle;
    e.stop = *r.stop;
    emit(std::move(e));
  }
  const auto now = session_.emu().state();
  if (ran_ && before == emu::RunState::Ready && now != emu::RunState::Ready) {
    const emu::RunState state = now;
    if (now != emu::RunState::Finished) {
      ExecutorEvent s;
      s.kind = ExecutorEvent::Kind::Symptom;
      s.cycle = session_.emu().cycle();
      s.state = state;
      if (r.stop)
        for (const auto& reason : r.stop->reasons)
          if (reason.kind == debugger::stop_kind_of(now)) s.message = reason.detail;
      emit(std::move(s));
    }
    ExecutorEvent f;
    f.kind = ExecutorEvent::Kind::RunFinished;
    f.cycle = session_.emu().cycle();
    f.state = state;
    emit(std::move(f));
  }
  ran_ = false;
  running_.store(false);
  return r;
}

debugger::CommandResult RequestExecutor::execute_read_only(const std::string& line) {
  return observer_.execute(line);
}

std::vector<std::string> RequestExecutor::complete(const std::string& line) const {
  return control_.complete(line);
}

}  // namespace bud::remote
