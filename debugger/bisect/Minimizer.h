// `bud minimize`: shrink a failing run to the smallest reproducer that keeps the same symptom
// and the same first failing stage. Greedy reduction in the spirit of ddmin / Lockstep: drop
// layers (shortest failing prefix first, then single layers), shrink tensor shapes, bring the
// injected faults earlier with the shapes, and tighten the hang watchdog; every candidate is run
// and bisected, and accepted only if the failure is the same. A fault pinned to a cycle follows
// the command its engine held at that cycle: in each candidate it is moved to the same offset
// from when the engine takes the same command (same layer, opcode and ordinal).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/Bisector.h"
#include "debugger/json/Json.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

/// A run to shrink: the workload text plus everything else that defines the run.
struct MinimizeInput {
  std::string workload_text;
  run::RunOptions options;  ///< seeds, memory model, limits, faults
};

struct MinimizeOptions {
  uint32_t max_candidates = 300;  ///< candidate runs at most
  /// Called after each candidate (for progress display): candidates tried, accepted.
  std::function<void(uint32_t, uint32_t)> progress;
};

struct MinimizeResult {
  bool ok = false;
  std::string error;
  FailureKind symptom = FailureKind::None;  ///< what the failure is (kept throughout)
  std::optional<Rung> first_failing_stage;   ///< kept throughout
  MinimizeInput minimized;
  uint64_t commands_before = 0, commands_after = 0;
  uint64_t cycles_before = 0, cycles_after = 0;
  uint32_t layers_before = 0, layers_after = 0;
  uint32_t candidates = 0, accepted = 0;
  std::vector<std::string> steps;  ///< the accepted reductions, in order
  /// Per fault pinned to a cycle: the command and element it follows ("flip:...@800: command #4
  /// POST 1 of layer 'fc' on compute, 12 cycles after it took it"), or why it cannot.
  std::vector<std::string> anchors;
  /// Why a candidate's fault could not follow its own command (each reason once, with how many
  /// candidates): moved to the same place in the layer, or kept the reduction's own cycle.
  std::vector<std::string> anchor_notes;

  std::string text() const;
  json::Json to_json() const;
};

MinimizeResult minimize(const MinimizeInput& input, const MinimizeOptions& options);

}  // namespace bud::debugger
