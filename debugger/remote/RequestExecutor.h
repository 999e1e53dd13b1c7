// The emulation thread of a debug server: the only thread that touches the Session. Network
// handlers submit jobs to it through a queue and wait for their results; they never see the
// Session. While a run is in progress (continue, step, until), the executor is a SessionHook:
// after each cycle it checks one atomic flag and, only when jobs are waiting, answers the
// read-only ones between two cycles (state-changing ones are refused until the run stops), so
// observers can attach and read without stopping the run. Per-cycle work is one relaxed atomic
// load and a counter check: no lock, no allocation, no I/O.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "debugger/commands/Interpreter.h"
#include "debugger/remote/OutputDir.h"
#include "debugger/session/Session.h"
#include "debugger/trigger/TriggerEngine.h"

namespace bud::remote {

/// Something that happened on the emulation thread, for the event stream.
struct ExecutorEvent {
  enum class Kind { Running, Stopped, TriggerHit, Symptom, RunFinished };
  Kind kind = Kind::Stopped;
  uint64_t cycle = 0;
  debugger::StopInfo stop;   ///< Stopped
  debugger::TriggerHit hit;  ///< TriggerHit
  /// Symptom: Hang, Assertion or Error; RunFinished: the final state (rendered on the wire by
  /// emu::run_state_name).
  emu::RunState state = emu::RunState::Ready;
  std::string message;       ///< Symptom: what the emulator reported
};

/// What a job may do: only read (allowed between cycles of a run, and for observers), or change
/// state (run control, deposits, time travel, files).
enum class Access { ReadOnly, Control };

/// Why submit() refused a job.
enum class Refusal { None, Busy, QueueFull, Stopping };

class RequestExecutor final : private debugger::SessionHook {
 public:
  /// A job runs on the emulation thread. It is called once: with nullptr to do its work, or
  /// with the reason it was refused (the run is in progress, the server is stopping).
  using Job = std::function<void(const std::string* refused)>;

  /// Registers itself as a hook of `session` (after any trigger engine, so trigger hits of a
  /// cycle are known when it runs). `on_event` is called on the emulation thread.
  RequestExecutor(debugger::Session& session, const OutputDir& output,
                  std::function<void(const ExecutorEvent&)> on_event, size_t max_queue = 256);
  ~RequestExecutor() override;
  RequestExecutor(const RequestExecutor&) = delete;
  RequestExecutor& operator=(const RequestExecutor&) = delete;

  /// What the controller's `record` command writes with (not owned; null: not available). Set
  /// before start().
  void set_record_backend(debugger::RecordBackend* backend) {
    control_.set_record_backend(backend);
  }
  /// Starts the emulation thread.
  void start();
  /// Stops a run in progress at the next cycle, refuses queued jobs and joins the thread.
  void stop();

  /// Queues a job. Refused (with `error`) when the queue is full, the executor is stopping, or a
  /// Control job arrives while a run is in progress (Busy).
  Refusal submit(Access access, Job job, std::string& error);
  /// Asks the run in progress to stop after the current cycle (reason "interrupted"). Returns
  /// whether a run was in progress.
  bool interrupt();
  /// A run (continue/step/until) is in progress.
  bool running() const { return running_.load(); }

  // --- emulation thread only (inside jobs) ---------------------------------------------------
  debugger::Session& session() { return session_; }
  /// Runs a state-changing prompt line through the controller's interpreter: file names are
  /// confined to the output directory, `source` is refused (scripts run on the client), and the
  /// run's events (running, stopped, trigger hits, symptom, run finished) are published.
  debugger::CommandResult execute_line(const std::string& line);
  /// Runs a read-only line (is_read_only_line) through the observers' interpreter.
  debugger::CommandResult execute_read_only(const std::string& line);
  /// Completion candidates for a prompt line.
  std::vector<std::string> complete(const std::string& line) const;
  /// Publishes trigger hits recorded since the last call (e.g. after LoadTriggers + a run).
  void publish_new_hits();
  const OutputDir& output() const { return output_; }

  /// The command table, for classifying lines on other threads (is_read_only_command: only its
  /// immutable table may be read there).
  const debugger::Interpreter& commands() const { return control_; }
  /// The breakpoint whose `commands` block the controller's interpreter is collecting (0: none),
  /// as of the last line it ran: any thread.
  int collecting_commands() const { return collecting_.load(std::memory_order_acquire); }

 private:
  struct Pending {
    Access access = Access::ReadOnly;
    Job job;
  };
  void loop();
  void serve_between_cycles();
  void emit(ExecutorEvent e);

  // SessionHook
  bool active() const override { return true; }
  void arm() override;
  bool after_cycle(uint64_t cycle) override;
  void stop_reasons(std::vector<debugger::StopReason>& out) override;

  debugger::Session& session_;
  const OutputDir& output_;
  std::function<void(const ExecutorEvent&)> on_event_;
  size_t max_queue_;
  debugger::Interpreter control_;   ///< the controller's commands (keeps "repeat last step")
  debugger::Interpreter observer_;  ///< read-only commands, also between cycles of a run

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::atomic<bool> stopping_{false};   ///< written under mutex_ (the queue's condition)
  std::atomic<bool> pending_{false};    ///< queue_ is not empty: checked after every cycle
  std::atomic<bool> interrupt_{false};  ///< stop the run after this cycle
  std::atomic<bool> running_{false};
  std::atomic<int> collecting_{0};  ///< control_.collecting_commands() after each line
  bool ran_ = false;  ///< the current job started a run (arm() was called)
  debugger::TriggerEngine* engine_ = nullptr;
  size_t published_hits_ = 0;
  std::thread thread_;
};

}  // namespace bud::remote
