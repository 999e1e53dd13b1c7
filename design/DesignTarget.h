// A design file made ready to run under any bud command that takes `--design FILE` (debug, run):
// read, overridden (--define/--param), checked against its RTL, its model built or found in the
// cache, and registered as an emulator design (emu/run/Designs.h) under "design:NAME", so the
// session, triggers and checkpoints make it exactly as they make the NPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"

namespace bud::design {

struct TargetOptions {
  std::vector<std::string> defines, params;  ///< NAME=VALUE (a define alone is NAME=1)
  std::string cache_dir;                      ///< model cache (ModelBuild.h); empty: the default
  uint64_t seed = 1;                          ///< back-pressure and DRAM timing
  uint64_t quiet_cycles = 1000;               ///< finished once drained and idle for this long
};

/// The options as the commands take them: `--define`, `--param`, `--design-cache` and `--seed`
/// (unset: 1).
TargetOptions target_options(const std::vector<std::string>& defines,
                             const std::vector<std::string>& params, const std::string& cache_dir,
                             std::optional<uint64_t> seed);

struct DesignTarget {
  DesignSpec spec;
  std::string library, revision;
  bool cached = false;
  std::string emulator;  ///< the registered design name, "design:NAME"
};

/// Applies `--define`/`--param` texts to `spec`; the error names the bad flag (exit 2).
std::optional<DesignError> apply_overrides(DesignSpec& spec, const TargetOptions& options);
/// Parses, overrides, checks and builds `path`, and registers it. nullopt and `error` (with the
/// exit status of `bud design`, docs/designs.md) when any step fails.
std::optional<DesignTarget> prepare_design(const std::string& path, const TargetOptions& options,
                                           DesignError& error);
/// The same for a spec already read and overridden (a design packet's, design/OpenedPacket.h):
/// checks, builds and registers it; `options`' defines and params are not applied again.
std::optional<DesignTarget> prepare_spec(DesignSpec spec, const TargetOptions& options,
                                         DesignError& error);

}  // namespace bud::design
