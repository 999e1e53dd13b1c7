// Breakpoints and watchpoints, evaluated after every cycle while the session runs with them.
// Installed as the emulator's CycleHook and TxnObserver only while a `continue`-like command
// runs, so a run without breakpoints pays nothing.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "debugger/expr/Compiler.h"
#include "debugger/expr/EmulatorResolver.h"
#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"

namespace bud::debugger {

enum class BreakKind : uint8_t { Cycle, Condition, Command, WatchSignal, WatchMemory };
const char* break_kind_name(BreakKind k);  // "cycle", "condition", "command", "watch", "watch"

/// Which dispatched commands a command breakpoint matches (all given fields must match).
struct CommandMatch {
  std::optional<uint8_t> opcode;
  std::optional<uint32_t> cmd_id;
  std::optional<uint32_t> layer;
};

struct Breakpoint {
  int id = 0;
  BreakKind kind = BreakKind::Cycle;
  bool enabled = true;
  std::string spec;      ///< as the user wrote it, normalised
  uint64_t hits = 0;
  bool temporary = false;  ///< tbreak: deleted by the interpreter after the stop it caused
  /// `condition N EXPR`: a hit counts only if this stateless expression holds on the hit cycle
  /// (evaluated only when the breakpoint would fire, so it costs nothing on other cycles).
  std::shared_ptr<Expr> filter;
  /// `commands N ... end`: debugger command lines run after a stop this breakpoint caused.
  std::vector<std::string> commands;
  // Cycle
  uint64_t cycle = 0;
  // Condition (stops on the cycle it becomes true, i.e. on a false -> true edge)
  std::shared_ptr<Expr> cond;
  bool was_true = false;
  // Command
  CommandMatch match;
  // WatchSignal
  emu::SignalId signal = 0;
  uint32_t element = 0;
  emu::SignalValue last_value;
  // WatchMemory
  std::string memory;
  uint64_t offset = 0;
  uint32_t width = 0;
  std::array<uint8_t, 8> last_bytes{};
};

/// A breakpoint that fired, with what it saw.
struct Hit {
  int id = 0;
  std::string detail;  ///< e.g. "gemm.stall_mem > 1000", "load.state: 2 -> 3"
};

class Breakpoints final : public emu::CycleHook, public emu::TxnObserver {
 public:
  explicit Breakpoints(emu::Emulator& emu) : emu_(emu), sampler_(emu) {}

  /// Adders return the new id, or 0 with `error` set.
  int add_cycle(uint64_t cycle, std::string& error);
  int add_condition(const std::string& text, std::string& error);
  int add_command(const CommandMatch& m, const std::string& spec, std::string& error);
  int add_watch_signal(const std::string& name, std::string& error);
  int add_watch_memory(const std::string& memory, uint64_t offset, uint32_t width,
                       std::string& error);
  /// Sets (text non-empty) or clears (empty) the extra condition of breakpoint `id`. Refuses
  /// unknown ids, malformed expressions (with the column) and windowed functions.
  bool set_filter(int id, const std::string& text, std::string& error);
  /// Replaces the command lines of `id` (empty: none). False if there is no such breakpoint.
  bool set_commands(int id, std::vector<std::string> commands);
  /// Marks `id` one-shot (tbreak). False if there is no such breakpoint.
  bool set_temporary(int id, bool temporary);
  /// Replaces the spec shown by `info breakpoints` (for breakpoints made of a condition, such
  /// as `break layer L end`). False if there is no such breakpoint.
  bool set_spec(int id, std::string spec);
  /// Removes `id` and, if it was the newest, gives its number back (internal breakpoints such as
  /// `finish` uses do not leave a gap in the user's numbering).
  void remove_internal(int id);
  /// The breakpoint with `id`, or nullptr.
  const Breakpoint* find(int id) const;
  bool remove(int id);
  void remove_all();
  bool set_enabled(int id, bool enabled);
  bool set_hits(int id, uint64_t hits);
  const std::vector<Breakpoint>& list() const { return bps_; }
  bool any_enabled() const;

  /// Prepares for a run from the current state: arms conditions, samples watched values.
  void arm();
  /// Hits recorded since arm() (cleared by arm()).
  const std::vector<Hit>& hits() const { return hits_; }

  // emu::CycleHook / TxnObserver
  bool after_cycle(uint64_t cycle) override;
  void on_txn(const emu::StageTxn& txn) override;

 private:
  /// An enabled NAME CMP INTEGER condition, evaluated in a tight loop (no interpreter).
  /// True if b has no extra condition or it holds now.
  bool passes(Breakpoint& b);
  struct Fast {
    Expr::SimpleCompare cmp;
    Breakpoint* bp = nullptr;
  };
  int next_id_ = 1;
  std::vector<Fast> fast_;     ///< set by arm()
  std::vector<size_t> slow_;   ///< indices into bps_ of every other breakpoint (set by arm())
  emu::Emulator& emu_;
  EmulatorSampler sampler_;
  std::vector<Breakpoint> bps_;
  std::vector<Hit> hits_;
  bool pending_cmd_hit_ = false;
  std::vector<int> pending_cmd_ids_;
  std::vector<std::string> pending_cmd_details_;
};

/// Breakpoints and watchpoints as a participant of a run: armed at the first start and after a
/// trip back (their later hits happen again); a pause with hits halts the run there. A pause that
/// only serves another participant does not restart their windows.
class BreakpointParticipant final : public drive::Participant {
 public:
  explicit BreakpointParticipant(Breakpoints& b) : b_(b) {}
  emu::CycleHook* cycle_hook() override;
  emu::TxnObserver* txn_observer() override;
  void on_start(uint64_t cycle) override;
  void on_rewind(uint64_t cycle) override;
  drive::PauseAction on_pause(uint64_t cycle) override;

 private:
  Breakpoints& b_;
  bool armed_ = false;
};

}  // namespace bud::debugger
