// `bud profile --compare BASE.json NEW.json`: two profiles of the same workload (two `bud profile
// --json` outputs) side by side - per-layer deltas, the first layer from which the run's cycles
// diverge persistently beyond a tolerance, the top-down class that explains it with its evidence
// counters, and the bottleneck ranking before and after. Definitions: docs/profiling.md,
// "Comparing two profiles".
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/workload/Result.h"
#include "profile/Profile.h"
#include "profile/Roofline.h"
#include "profile/RunConditions.h"

namespace bud::profile {

/// A profile read back from `bud profile --json` output, with what identifies its run.
/// A profile's energy account of the whole run (`$.profile.energy`: `run` priced by `table` at
/// its operating point). One run is one inference.
struct RunEnergy {
  uint64_t total_fj = 0;
  double seconds = 0, watts = 0, tops_per_watt = 0, inferences_per_joule = 0;
  std::string table;                      ///< the table's name
  double frequency_mhz = 0, voltage = 0;  ///< the operating point it was priced at
};

/// A profile's thermal figures (`$.profile.thermal`, a run with --thermal).
struct RunThermal {
  uint64_t nominal_cycles = 0, sustained_cycles = 0;  ///< without and with the clamp
  uint64_t clamp_events = 0, clamped_cycles = 0;
  double clamped_fraction = 0;
  double peak_c = 0;  ///< peak die temperature, degrees C
};

struct ProfileInput {
  std::string file;  ///< where it was read from (named in every message)
  std::string workload;
  std::string model_revision;
  uint64_t seed = 0, mem_seed = 0;
  Profile profile;  ///< layers, tail, cycles and array size; the ranking recomputed from them
  /// Present when the profile has them (a `--json` profile priced by an energy table; a packet
  /// profiled as recorded carries neither).
  std::optional<RunEnergy> energy;
  std::optional<RunThermal> thermal;
  /// What the run was measured under (`$.profile.conditions`; nullopt for a profile written
  /// before bud recorded them).
  std::optional<RunConditions> conditions;
  /// The roofline's per-layer memory split (`$.profile.roofline.layers`: latency_cycles,
  /// bandwidth_cycles; empty when the profile has none): which part of a memory change moved.
  std::vector<LayerProjection> roofline;
};

/// Reads the object `j` (the whole output of `bud profile --json`, read from `file`). Errors
/// name the file and the JSON path at fault ("base.json: $.profile.layers[2].cycles: missing").
workload::Result<ProfileInput> read_profile_json(const json::Json& j, const std::string& file);
/// Reads and parses the file at `path`; unreadable files and non-JSON are errors naming it.
workload::Result<ProfileInput> read_profile_file(const std::string& path);
/// What --compare reads: a replay packet (profiled by re-executing the run it recorded, as
/// `bud profile P.bpk`) or else the output of `bud profile --json` (read_profile_file).
workload::Result<ProfileInput> read_profile_input(const std::string& path);

/// One figure before and after.
struct Delta {
  double base = 0, next = 0;
  /// (next - base) / max(base, 1) for counts and cycles; next - base for fractions.
  double change = 0;
};

/// A layer's figures in both profiles.
struct LayerDelta {
  std::string name, kind;
  Delta cycles;     ///< the layer's span (relative change)
  Delta end;        ///< its last retirement on the run's clock (relative change)
  Delta peak;       ///< % of peak MACs, as a fraction (change: difference)
  Delta bandwidth;  ///< DRAM bytes per cycle (relative change)
  std::array<int32_t, kNumTopClasses> base_bp{}, next_bp{};  ///< top-down shares, basis points
  bool diverges = false;                                     ///< |cycles.change| > tolerance
};

/// Where the profiles part, and why.
struct CompareDivergence {
  enum class Kind : uint8_t {
    Layer,        ///< one layer beyond the tolerance, and the run stays diverged after it
    Accumulated,  ///< no layer beyond it alone; the run's clock stays diverged from this layer
    Tail,         ///< only after the last layer (drain, END, read-back)
  };
  Kind kind = Kind::Layer;
  int layer = -1;            ///< index into the layers (-1: the tail)
  std::string scope;         ///< the layer's name, or "tail"
  double cycles_change = 0;  ///< of the layer (Layer, Accumulated) or of the run (Tail)
  TopClass mechanism = TopClass::Unattributed;  ///< the class whose share moved most
  SubClass mechanism_sub = SubClass::Unattributed;
  int32_t share_change_bp = 0;      ///< that class's share, new - base, basis points
  int64_t class_cycles_change = 0;  ///< its slots / array_macs, new - base
  std::string rule, advice;         ///< the triage rule of docs/profiling.md for the class
  /// A memory mechanism's sub-class follows the roofline's split when both profiles have it:
  /// load_transfer when the layer's bandwidth-bound time moved more than its latency-bound time,
  /// dram_wait otherwise (the counters alone cannot tell a narrower channel from a longer wait).
  int64_t latency_cycles_change = 0, bandwidth_cycles_change = 0;
  bool memory_split = false;  ///< the two changes above are known
  /// The recorded run condition that differs and explains the change before any mechanism (the
  /// first of Comparison::conditions in the order of docs/profiling.md), and what it does.
  std::optional<ConditionChange> cause;
  std::string cause_effect;
  struct Evidence {
    std::string counter;
    uint64_t base = 0, next = 0;
  };
  std::vector<Evidence> evidence;
};
const char* divergence_kind_name(CompareDivergence::Kind k);  ///< "layer", "accumulated", "tail"

/// The comparison of two profiles of one workload.
struct Comparison {
  double tolerance = 0;  ///< fraction (0.05 = 5%)
  Delta cycles;          ///< the whole run (relative change)
  std::vector<LayerDelta> layers;
  std::optional<CompareDivergence> divergence;  ///< none: the run is within the tolerance
  /// Recorded run conditions that differ (seeds apart); `conditions_known` is false when a
  /// profile does not record them (then nothing was tested).
  std::vector<ConditionChange> conditions;
  bool conditions_known = false;
};

/// The profiles must be of the same workload with the same layers (names and kinds, in order):
/// an error names both files and the first difference.
std::string check_comparable(const ProfileInput& base, const ProfileInput& next);
/// Compares two comparable profiles; `tolerance` is a fraction (0.05 = 5%).
Comparison compare(const Profile& base, const Profile& next, double tolerance);
/// The same, and first tests the recorded run conditions: a change beyond the tolerance with a
/// condition that differs names that condition as its cause; a memory mechanism is sub-classed by
/// the roofline's latency/bandwidth split.
Comparison compare(const ProfileInput& base, const ProfileInput& next, double tolerance);

/// {"base": {...}, "new": {...}, "tolerance", "cycles", "layers", "divergence", "ranking":
///  {"before", "after"}}
json::Json comparison_json(const Comparison& c, const ProfileInput& base, const ProfileInput& next);
std::string comparison_text(const Comparison& c, const ProfileInput& base,
                            const ProfileInput& next);

}  // namespace bud::profile
