// Difftest at the stage boundaries: checks every transaction the RTL produces, as it happens,
// against the golden model's transactions of the same stage and command (a multiset, so memory
// reordering inside a command is fine), and reports where the streams first part ways.
//
// The golden transactions come from a golden model that runs alongside (GoldenStream): each
// command the RTL fetches is executed there, and each stage keeps a window of the golden
// transactions of its commands from the oldest one not yet complete to the latest fetched. The
// windows are sized at construction for a correct RTL (GoldenTrace::Stream::window_txns), so the
// check's memory does not grow with the run and on_txn() and finish() never allocate or free
// (they run on every transaction of a debug session; tests/bisect/NoAlloc.test.cpp counts). Only
// an RTL that leaves more commands unfinished than its queues can hold makes a window grow.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/circular_buffer.hpp>

#include "debugger/bisect/GoldenStream.h"
#include "debugger/bisect/GoldenTrace.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// One place where the RTL's transactions and the golden model's part ways.
struct Divergence {
  enum class Kind : uint8_t { Wrong, Extra, Missing };
  Kind kind = Kind::Wrong;
  emu::Stage stage = emu::Stage::Fetch;
  uint64_t cycle = 0;     ///< cycle it was observed (Missing: when the stage moved past it)
  uint32_t cmd_id = 0;
  std::optional<emu::StageTxn> actual;    ///< what the RTL produced (Wrong, Extra)
  std::optional<emu::StageTxn> expected;  ///< the golden transaction it should have been
  /// Where `expected` is in the stage's golden stream (the checker fills `expected` from it
  /// when divergences are read).
  std::optional<uint64_t> expected_index;
  /// "wrong", "extra", "missing".
  static const char* kind_name(Kind k);
  const char* kind_name() const { return kind_name(kind); }
  /// "gemm #12 acc[40]: expected [..] actual [..]" etc.
  std::string describe() const;
};

class TxnChecker final : public emu::TxnObserver {
 public:
  /// `consumed[s]`: how many of stage s's golden transactions (in program order) the RTL has
  /// already produced before checking starts (0 from reset; a clean checkpoint's totals).
  /// Runs the golden model up to the command the fetch stage stopped at.
  TxnChecker(const GoldenTrace& trace, const std::array<uint64_t, emu::kNumStages>& consumed);
  /// Resumes checking at a checkpoint whose stage digests are `at` (the RTL's, cumulative). A
  /// stage caught inside a command whose transactions so far are the golden ones in golden order
  /// resumes after them; otherwise (memory reordering: which of its transactions were produced is
  /// unknown) it expects all of that command's transactions, and when the stage moves past it the
  /// ones not seen must be exactly the ones produced before (same count and sum).
  TxnChecker(const GoldenTrace& trace, const std::array<emu::StageDigest, emu::kNumStages>& at);
  TxnChecker(const TxnChecker&) = delete;
  TxnChecker& operator=(const TxnChecker&) = delete;

  void on_txn(const emu::StageTxn& txn) override;
  /// Declares the end of the run at `cycle`: golden transactions never produced become
  /// Missing divergences.
  void finish(uint64_t cycle);

  /// Divergences in the order found (at most 64 kept per stage), with their expected golden
  /// transactions: reading new divergences runs the golden model once to re-derive them (the
  /// trace keeps hashes only), so per-transaction code asks `divergence_count` instead.
  const std::vector<Divergence>& divergences() const;
  size_t divergence_count() const { return found_.size(); }
  /// The first divergence of each stage (by cycle), if any.
  std::optional<Divergence> first_of(emu::Stage s) const;
  /// Number of RTL transactions checked.
  uint64_t checked() const { return checked_; }
  /// Whether every stage started at an exact golden prefix (no command caught mid-way with a
  /// subset of its transactions that only their sum witnesses).
  bool start_exact() const { return start_exact_; }
  /// Program index the checker's golden model started from: a golden snapshot's (0: reset).
  size_t golden_start() const { return golden_start_; }
  /// Golden transactions held now, over all stages (what the windows' memory holds).
  uint64_t window_size() const;

  /// A command caught mid-way at the start whose transactions produced before the start were
  /// not the golden ones: the divergence lies before where checking started, so it cannot be
  /// pinned from here (start from an earlier checkpoint).
  struct BeforeStart {
    emu::Stage stage = emu::Stage::Fetch;
    uint32_t cmd_id = 0;
    uint64_t cycle = 0;  ///< when the stage moved past the command
  };
  const std::optional<BeforeStart>& before_start() const { return before_start_; }

 private:
  /// One golden transaction in a window: what matching needs (the rest is re-derived for
  /// reports).
  struct Golden {
    uint64_t hash = 0;
    uint32_t addr = 0;
    uint8_t buffer = 0;
    bool produced = false;  ///< the RTL produced it (or it was produced before the start)
  };
  /// One golden command of a stage: its transactions are [first, last) of the stage's golden
  /// stream (golden transactions are grouped by command, in program order).
  struct Cmd {
    uint32_t cmd_id = 0;
    uint64_t first = 0, last = 0;
    uint64_t left = 0;     ///< of them not produced yet
    uint64_t scan = 0;     ///< no transaction before this index is still expected
    bool present = true;   ///< still expected: not complete (unless open) and not swept
  };
  /// What a stage still expects: its commands from the oldest one not complete to the latest
  /// the golden model has run, and their transactions.
  struct Window {
    boost::circular_buffer<Golden> txns;  ///< golden transactions [base, base + size)
    uint64_t base = 0;
    boost::circular_buffer<Cmd> cmds;     ///< in program order
    uint64_t keep_from = 0;  ///< earlier transactions belong to commands done before the start
    uint64_t consumed = 0;   ///< transactions before this index were produced before the start
  };
  /// A stage caught inside a command at the start: whether the transactions it produced there are
  /// the golden ones in golden order is settled when the golden model runs that command.
  struct Candidate {
    bool active = false;
    uint32_t cmd_id = 0;
    uint64_t count = 0, sum = 0;  ///< the RTL's transactions of the command before the start
    uint64_t seen = 0, seen_sum = 0;  ///< the golden command's first `count` so far
  };
  struct Open {
    bool active = false;
    uint32_t cmd_id = 0;
    uint64_t count = 0;  ///< transactions of cmd_id produced before the start
    uint64_t sum = 0;
  };
  void start(const std::array<uint64_t, emu::kNumStages>& consumed);
  /// The golden model's transaction `index` of its stage (GoldenStream's sink).
  void on_golden(const emu::StageTxn& x, uint64_t index);
  /// Runs the golden model's next command; false at the end of the program.
  bool step_golden();
  /// Runs the golden model through the command `cmd_id` the RTL fetched (unless it is not a
  /// command of the program or lies implausibly far ahead).
  void advance_to(uint32_t cmd_id);
  /// Settles a start candidate once its command has run.
  void settle(int stage);
  Golden& golden(int stage, uint64_t index) {
    auto& w = win_[stage];
    return w.txns[static_cast<size_t>(index - w.base)];
  }
  /// Drops the window's oldest command and its transactions.
  void drop_front(int stage);
  /// Drops commands no longer expected from the front of the window.
  void trim(int stage);
  Cmd* find(int stage, uint32_t cmd_id);
  /// Marks golden transaction `idx` of `c` produced (no longer expected). May drop `c`.
  void take(int stage, Cmd& c, uint64_t idx);
  void note(Divergence d);
  bool keep_open(int stage, uint32_t cmd_id) const;
  void sweep_missing(int stage, uint32_t before_cmd, uint64_t cycle);

  const GoldenTrace& trace_;
  std::array<Window, emu::kNumStages> win_;
  std::array<Candidate, emu::kNumStages> candidate_{};
  std::array<Open, emu::kNumStages> open_{};
  GoldenStream golden_;
  bool flushing_ = false;      ///< finish(): golden transactions not produced are Missing
  uint64_t flush_cycle_ = 0;
  uint32_t last_run_id_ = 0;    ///< cmd_id of the last command the golden model ran
  bool start_exact_ = true;
  size_t golden_start_ = 0;
  std::optional<BeforeStart> before_start_;
  mutable std::vector<Divergence> found_;
  mutable size_t resolved_ = 0;  ///< found_[0, resolved_) carry their expected transactions
  std::array<int, emu::kNumStages> per_stage_{};
  uint64_t checked_ = 0;
};

}  // namespace bud::debugger
