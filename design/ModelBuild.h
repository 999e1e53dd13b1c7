// `bud design build`: Verilates a design file's sources (every signal public, savable for
// checkpoints) with a generated binding that exposes the top's ports through a small C ABI, and
// links them into a loadable model (a shared object), cached by revision: a hash of the source
// texts, the Verilator flags, the Verilator version and the binding's ABI. A second build of the
// same revision is a cache hit. See docs/designs.md, "Building the model".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/RtlSignals.h"

namespace bud::design {

/// Exit status when the generated model does not compile or link (the log is kept).
inline constexpr int kExitModelBuild = 8;

/// The ABI version of the generated binding (bud_model_abi()); part of the revision.
inline constexpr unsigned kModelAbi = 4;

struct BuildOptions {
  /// Where models are cached; empty: $BUD_DESIGN_CACHE, else $XDG_CACHE_HOME/bud/designs, else
  /// $HOME/.cache/bud/designs.
  std::string cache_dir;
  int jobs = 2;  ///< parallel compile jobs
};

struct BuiltModel {
  std::string revision;  ///< 16 hex digits
  std::string dir;       ///< the cache entry: model.so, binding.cpp, build.log
  std::string library;   ///< dir + "/model.so"
  bool cached = false;   ///< found in the cache (nothing was built)
};

/// The revision of `spec`'s model (no build). Empty and `error` if a source cannot be read.
/// Paths count relative to the design file's directory: a copy of the design's directory tree
/// elsewhere has the same revision.
std::string model_revision(const DesignSpec& spec, DesignError& error);
/// Every regular file below the design's include directories, each directory's sorted by path.
std::vector<std::string> include_files(const DesignSpec& spec);
/// What `verilator --version` prints ("unknown" when it does not run); part of the revision:
/// another Verilator is another model.
std::string verilator_version();
/// The model cache directory `cache_dir` names (BuildOptions::cache_dir; empty: the default).
std::string cache_root(const std::string& cache_dir);
/// The C++ binding for the top's ports (exposed for tests and docs).
std::string binding_source(const DesignSpec& spec, const RtlSignals& rtl);
/// Builds (or finds) the model. On failure: nullopt and an error (kExitElaboration when
/// Verilator fails, kExitModelBuild when compiling or linking fails, naming the log).
std::optional<BuiltModel> build_model(const DesignSpec& spec, const RtlSignals& rtl,
                                      const BuildOptions& options, DesignError& error);

}  // namespace bud::design
