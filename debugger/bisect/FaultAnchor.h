// Faults that follow their work into a reduced program (`bud minimize`). A fault pinned to a
// cycle is re-addressed by what it acts on: the command its engine holds (by layer, opcode and
// ordinal, so it survives reductions that renumber commands) and the element of that command's
// work (the stage transaction it corrupts: an ACC entry and lane a GEMM accumulates, the OUT
// entry POST writes, the SRAM entry a scratchpad flip hits after its producer wrote it). In a
// candidate the fault moves to the same element of the same command, at the same offset from
// that element's transaction, or, where the element no longer exists, to the one at the same
// place in the command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emu/core/StageTxn.h"
#include "emu/isa/Isa.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

/// A command's identity across reductions: its layer, opcode and ordinal among the layer's
/// commands of that opcode.
struct CmdKey {
  std::string layer;
  isa::Opcode op = isa::Opcode::Sync;
  uint32_t ordinal = 0;
  uint32_t of = 0;  ///< the layer's commands of that opcode in the original run
  std::string text() const;
};

/// The element of a command's work a fault acts on: one of the command's transactions on one
/// stage, and the fault's cycle relative to it.
struct ElementAnchor {
  emu::Stage stage = emu::Stage::Load;
  uint8_t buffer = 0;
  uint8_t segment = 0;
  uint32_t addr = 0;        ///< SRAM entry (or DRAM address) of the transaction
  uint32_t occurrence = 0;  ///< earlier transactions of the command to the same entry
  uint32_t ordinal = 0;     ///< index among the command's transactions on `stage`
  uint32_t of = 0;          ///< the command's transactions on `stage`
  int64_t offset = 0;       ///< fault cycle - the transaction's cycle
  /// A scratchpad flip: the byte within the entry, and the entry size (the fault's address
  /// moves with the entry).
  bool memory = false;
  uint32_t byte_in_entry = 0, word_bytes = 0;
  std::string text() const;
};

/// Where a fault pinned to a cycle acts, in terms of the work.
struct Anchor {
  std::string engine;  ///< "load", "compute", "store"
  CmdKey key;
  int64_t offset = 0;  ///< fault cycle - when the engine took the command
  std::optional<ElementAnchor> element;
};

/// The anchors of the faults of `options` (one per fault; nullopt: it keeps its cycle), with one
/// line each in `lines`. Positions come from the run of `p` without faults, so the faults' own
/// effects cannot move them (candidates are located the same way). `verdict_cmd` is the command
/// the failure was pinned to: faults acting on no engine's command follow it.
std::vector<std::optional<Anchor>> make_anchors(const run::PreparedRun& p,
                                                const run::RunOptions& options,
                                                std::optional<uint32_t> verdict_cmd,
                                                std::vector<std::string>& lines);

/// What moving the faults to a candidate did.
struct Reanchored {
  std::vector<std::string> notes;  ///< one per fault not on its own command and element
  bool moved_all = true;           ///< every anchored fault was moved
};
/// Moves the faults of `options` with their anchors to the commands and elements of candidate
/// `p`.
Reanchored reanchor(run::RunOptions& options, const run::PreparedRun& p,
                    const std::vector<std::optional<Anchor>>& anchors);

}  // namespace bud::debugger
