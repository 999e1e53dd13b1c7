// The review memo of a performance change (`bud memo BASE NEW`, docs/profiling.md "Review
// memo"): built from the comparison of two profiles of one workload, it states the symptom with
// the failing metric and the workload slice, the first failing layer, the build and runtime tags
// of both runs, the mechanism hypothesis with the competing ones and the evidence for each, the
// smallest reversible change with its expected movement, and the regression risk, every figure
// naming the artifact (packet or profile JSON) it comes from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "profile/Compare.h"

namespace bud::profile {

/// One candidate mechanism for the divergent scope: a top-down class whose share moved.
struct Hypothesis {
  TopClass cls = TopClass::Unattributed;
  SubClass sub = SubClass::Unattributed;  ///< its sub-class that moved most
  int32_t share_change_bp = 0;            ///< new - base share of the scope's MAC slots
  int64_t cycles_change = 0;              ///< its slots / array MACs, new - base
  std::string rule, advice;               ///< the triage rule of the class (docs/profiling.md)
  std::vector<CompareDivergence::Evidence> evidence;
  bool leading = false;  ///< the comparison's mechanism
  /// Its cycles moved against the change (or not at all): listed, but ruled out.
  bool ruled_out = false;
};

/// Energy and perf/W of both runs, when both profiles carry an energy account (one run = one
/// inference). Changes are relative: (new - base) / base.
struct EnergyDeltas {
  Delta energy_uj;             ///< per inference
  Delta watts;                 ///< average power over the run
  Delta inferences_per_joule;  ///< perf/W
  Delta tops_per_watt;
  Delta seconds;         ///< per inference
  RunEnergy base, next;  ///< as read (table, operating point)
};

/// A mechanism of the energy change the top-down classes cannot name: the operating point, the
/// thermal clamp, the work per inference. Its evidence is figures of the two profiles.
struct EnergyHypothesis {
  enum class Kind : uint8_t { OperatingPoint, ThermalClamp, WorkPerInference };
  Kind kind = Kind::WorkPerInference;
  bool leading = false;
  std::string statement;  ///< what it claims, with the figures, and how to reverse it
  struct Figure {
    std::string name;  ///< "frequency MHz", "energy per inference uJ", ...
    double base = 0, next = 0;
  };
  std::vector<Figure> evidence;
};
/// "operating point", "thermal clamp", "work per inference".
const char* energy_hypothesis_name(EnergyHypothesis::Kind kind);

struct Memo {
  std::string workload;
  std::string base_file, next_file;  ///< the artifacts every figure comes from
  bool diverged = false;
  // Symptom: the failing metric over the run, and the slice it shows in.
  Delta run_cycles;
  std::string slice;             ///< the divergent layer ("tail" after the last one)
  Delta slice_cycles;            ///< of the slice (run: the tail's change)
  std::string divergence_kind;   ///< "layer", "accumulated", "tail"
  // Tags of both runs.
  struct Tags {
    std::string model_revision;
    uint64_t seed = 0, mem_seed = 0;
    uint64_t cycles = 0;
    uint32_t array_macs = 0;
  } base, next;
  /// Leading first, then the competing ones by cycles moved in the change's direction, then the
  /// ruled-out ones.
  std::vector<Hypothesis> hypotheses;
  std::string change;    ///< the smallest reversible change
  std::string expected;  ///< its expected movement
  std::vector<std::string> risks;
  /// Energy and perf/W (when both profiles have them) and its mechanisms, the leading first;
  /// `energy_note` says why they are absent otherwise.
  std::optional<EnergyDeltas> energy;
  std::vector<EnergyHypothesis> energy_hypotheses;
  std::string energy_note;
};

/// The memo of `c`, the comparison of `base` and `next` (check_comparable passed).
Memo make_memo(const Comparison& c, const ProfileInput& base, const ProfileInput& next);
/// The memo as Markdown (the form reviewers read), with a link to each artifact.
std::string memo_markdown(const Memo& m);
json::Json memo_json(const Memo& m);

}  // namespace bud::profile
