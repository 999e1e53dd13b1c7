// `bud profile --calibrate`: built-in microbenchmarks, generated as workloads and run profiled on
// the configured machine, that measure the real peaks (MACs per cycle from resident scratchpads,
// DRAM read and write bytes per cycle, read latency, bank conflicts per scratchpad write) and
// check every PMU counter's documented semantics against values computed independently: the
// DRAM model's own statistics, the lowering's counts, the golden model, the throttle pattern.
// docs/profiling.md ("Calibration and counter fidelity").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/core/EmulatorConfig.h"
#include "profile/Profile.h"
#include "profile/Roofline.h"

namespace bud::profile {

/// One row of the fidelity table: a counter of one microbenchmark against its oracle.
struct FidelityRow {
  std::string benchmark;  ///< "compute", "read_stream", ...
  std::string counter;    ///< PMU counter name ("load.*": the engine's seven classes summed)
  std::string oracle;     ///< where `expected` comes from ("DRAM model", "lowering", ...)
  uint64_t expected = 0, measured = 0;
  double error = 0;      ///< (measured - expected) / max(expected, 1)
  double tolerance = 0;  ///< |error| allowed (docs/counters.md "Fidelity")
  bool ok = false;
};

/// A ceiling of the machine: what the datasheet (the configuration) says and what a
/// microbenchmark reached.
struct Peak {
  std::string name;       ///< "MACs/cycle", "DRAM read bytes/cycle", ...
  std::string benchmark;  ///< the microbenchmark that measures it
  double datasheet = 0, measured = 0;
  std::string how;  ///< the formula of `measured`
};

/// The calibration of one machine configuration.
struct Calibration {
  std::vector<Peak> peaks;
  std::vector<FidelityRow> rows;
  std::vector<std::string> benchmarks;  ///< in the order run
  bool ok = false;                      ///< every row within its tolerance
  std::string error;                    ///< a benchmark could not run (then `ok` is false)
};

/// Runs every microbenchmark on `config` (its memory model and throttle; the throttle
/// microbenchmark uses its own pattern) and checks the counters.
Calibration calibrate(const emu::EmulatorConfig& config);

/// A roofline ceiling: peak MACs per cycle and DRAM read bytes per cycle.
struct Ceilings {
  double macs_per_cycle = 0;
  double bytes_per_cycle = 0;
};
/// The datasheet's (array size, configured DRAM bandwidth) and, from a calibration, the
/// measured ones.
Ceilings datasheet_ceilings(const emu::EmulatorConfig& config, uint32_t array_macs);
Ceilings empirical_ceilings(const Calibration& c);
/// The empirical ceilings alone: runs only the `compute` and `read_stream` microbenchmarks on
/// `config` (a few thousand cycles each), as every profile does. nullopt and `error` if one
/// cannot run.
std::optional<Ceilings> measure_ceilings(const emu::EmulatorConfig& config, std::string& error);

/// The ceilings a roofline is drawn under (docs/profiling.md "Roofline ceilings"): the
/// datasheet's; the effective one of Little's law (the peak MACs, and the read bandwidth the
/// outstanding requests sustain at the DRAM latency, MachineModel::effective_bytes_per_cycle);
/// and the microbenchmarks' measured one.
struct RooflineCeilings {
  Ceilings datasheet, effective;
  std::string effective_how;  ///< "8 requests x 64 B / 132 cycles = 3.88 B/cycle"
  std::optional<Ceilings> empirical;
  std::string empirical_how;  ///< what measured it, or why it is missing
};
RooflineCeilings roofline_ceilings(const emu::EmulatorConfig& config, const MachineModel& machine,
                                   std::optional<Ceilings> empirical, std::string empirical_how);

/// {"ok", "benchmarks", "peaks": [{name, benchmark, datasheet, measured, how}], "fidelity":
///  [{benchmark, counter, oracle, expected, measured, error, tolerance, ok}]}.
json::Json calibration_json(const Calibration& c);
/// The peaks and the fidelity table as text.
std::string calibration_text(const Calibration& c);

/// Per layer: measured MACs/cycle, arithmetic intensity and the attainable MACs/cycle
/// min(peak, intensity x bandwidth) under each ceiling, and under Little's law for the layer's
/// own access pattern (`attainable_latency`, LayerProjection::effective_bytes_per_cycle of
/// `roofline`'s layer).
json::Json ceilings_json(const Profile& p, const RooflineCeilings& c, const Roofline& roofline);
/// The same as a table.
std::string ceilings_text(const Profile& p, const RooflineCeilings& c, const Roofline& roofline);

}  // namespace bud::profile
