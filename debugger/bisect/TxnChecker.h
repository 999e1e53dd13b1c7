// Difftest at the stage boundaries: checks every transaction the RTL produces, as it happens,
// against the golden model's transactions of the same stage and command (a multiset, so memory
// reordering inside a command is fine), and reports where the streams first part ways. Everything
// is sized at construction: on_txn() and finish() never allocate or free (they run on every
// transaction of a debug session; tests/bisect/NoAlloc.test.cpp counts).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  TxnChecker(const GoldenTrace& trace, const std::array<uint64_t, emu::kNumStages>& consumed);
  /// Resumes checking at a checkpoint whose stage digests are `at` (the RTL's, cumulative): a
  /// stage caught inside a command (memory reordering means which of its transactions were
  /// produced is unknown) expects all of that command's transactions, and when the stage moves
  /// past it the ones not seen must be exactly the ones produced before (same count and sum).
  TxnChecker(const GoldenTrace& trace, const std::array<emu::StageDigest, emu::kNumStages>& at);

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
  /// One golden command of a stage: its transactions are [first, last) of the stage's golden
  /// stream (golden transactions are grouped by command, in program order).
  struct Cmd {
    uint32_t cmd_id = 0;
    uint64_t first = 0, last = 0;
    uint64_t left = 0;     ///< of them not produced yet
    uint64_t scan = 0;     ///< no transaction before this index is still expected
    bool present = false;  ///< still expected: not complete (unless open) and not swept
  };
  /// What a stage still expects. Sized once at construction: checking never allocates.
  struct StageExpect {
    std::vector<Cmd> cmds;          ///< by cmd_id
    std::vector<bool> produced;     ///< per golden transaction
    size_t cursor = 0;              ///< commands before it are swept
  };
  struct Open {
    bool active = false;
    uint32_t cmd_id = 0;
    uint64_t count = 0;  ///< transactions of cmd_id produced before the start
    uint64_t sum = 0;
  };
  void init(const std::array<uint64_t, emu::kNumStages>& consumed);
  Cmd* find(int stage, uint32_t cmd_id);
  /// Marks golden transaction `idx` of `c` produced (no longer expected).
  void take(int stage, Cmd& c, uint64_t idx);
  void note(Divergence d);
  bool keep_open(int stage, uint32_t cmd_id) const;
  void sweep_missing(int stage, uint32_t before_cmd, uint64_t cycle);

  const GoldenTrace& trace_;
  std::array<StageExpect, emu::kNumStages> expect_;
  std::array<Open, emu::kNumStages> open_{};
  std::optional<BeforeStart> before_start_;
  mutable std::vector<Divergence> found_;
  mutable size_t resolved_ = 0;  ///< found_[0, resolved_) carry their expected transactions
  std::array<int, emu::kNumStages> per_stage_{};
  uint64_t checked_ = 0;
};

}  // namespace bud::debugger
