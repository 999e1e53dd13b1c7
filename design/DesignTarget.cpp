#include "design/DesignTarget.h"

#include "design/DesignCheck.h"
#include "design/DesignEmulator.h"
#include "design/ModelBuild.h"
#include "design/RtlSignals.h"
#include "emu/run/Designs.h"

namespace bud::design {

std::optional<DesignError> apply_overrides(DesignSpec& spec, const TargetOptions& options) {
  for (auto [list, map, flag] : {std::tuple{&options.defines, &spec.defines, "--define"},
                                 std::tuple{&options.params, &spec.parameters, "--param"}})
    for (const std::string& kv : *list) {
      const size_t eq = kv.find('=');
      if (eq == 0 || kv.empty())
        return DesignError{Where{}, std::string(flag) + " '" + kv + "' must be NAME=VALUE",
                           kExitBadDesignFile};
      (*map)[kv.substr(0, eq)] = eq == std::string::npos ? "1" : kv.substr(eq + 1);
    }
  return std::nullopt;
}

TargetOptions target_options(const std::vector<std::string>& defines,
                             const std::vector<std::string>& params, const std::string& cache_dir,
                             std::optional<uint64_t> seed) {
  TargetOptions o;
  o.defines = defines;
  o.params = params;
  o.cache_dir = cache_dir;
  o.seed = seed.value_or(1);
  return o;
}

std::optional<DesignTarget> prepare_design(const std::string& path, const TargetOptions& options,
                                           DesignError& error) {
  auto parsed = parse_design_file(path);
  if (!parsed.ok()) {
    error = parsed.error;
    return std::nullopt;
  }
  if (auto e = apply_overrides(*parsed.spec, options)) {
    error = *e;
    return std::nullopt;
  }
  return prepare_spec(std::move(*parsed.spec), options, error);
}

std::optional<DesignTarget> prepare_spec(DesignSpec spec, const TargetOptions& options,
                                         DesignError& error) {
  DesignTarget t;
  t.spec = std::move(spec);
  const auto rtl = read_rtl_signals(t.spec, error);
  if (!rtl) return std::nullopt;
  if (const auto checked = check_design(t.spec, *rtl); !checked.ok()) {
    error = *checked.error;
    return std::nullopt;
  }
  BuildOptions bo;
  bo.cache_dir = options.cache_dir;
  const auto built = build_model(t.spec, *rtl, bo, error);
  if (!built) return std::nullopt;
  t.library = built->library;
  t.revision = built->revision;
  t.cached = built->cached;
  t.emulator = "design:" + t.spec.name;
  // Every emulator of the design (the session's, a replay's, a bisect probe's) is a new instance
  // of the same model and harness, with the same seed.
  emu::register_design(t.emulator, [t, options](const emu::EmulatorConfig& c)
                                       -> std::unique_ptr<emu::Emulator> {
    std::string why;
    auto e = DesignEmulator::make(t.spec, t.library, t.revision, c, options.seed,
                                  options.quiet_cycles, why);
    if (!e) return nullptr;
    if (!e->load({}).empty()) return nullptr;
    return e;
  });
  // The first instance tells whether the model binds (make_emulator has no error channel).
  std::string why;
  emu::EmulatorConfig c;
  if (!DesignEmulator::make(t.spec, t.library, t.revision, c, options.seed, options.quiet_cycles,
                            why)) {
    error = DesignError{t.spec.top_where, why, kExitRtlMismatch};
    return std::nullopt;
  }
  return t;
}

}  // namespace bud::design
