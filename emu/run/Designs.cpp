#include "emu/run/Designs.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "bud/ModelRevision.h"
#include "bud/NpuVariants.h"
#include "emu/npu/NpuEmulator.h"

namespace bud::emu {

namespace {

/// The designs by name; the NPU is built in.
struct Registry {
  Registry() {
    designs["npu"] = [](const EmulatorConfig& c) -> std::unique_ptr<Emulator> {
      return std::make_unique<NpuEmulator>(c);
    };
    for (const BuiltNpuVariant& v : kBuiltNpuVariants) designs[v.name] = v.make;
  }
  std::mutex mutex;
  std::map<std::string, DesignFactory> designs;  // ordered: design_names() is deterministic
  /// What design_array() and design_revision() read from each design, once.
  struct Described {
    isa::ArrayConfig array;
    std::string revision;
  };
  std::map<std::string, Described> described;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::unique_ptr<Emulator> make_emulator(const EmulatorConfig& config, std::string& error) {
  DesignFactory factory;
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    if (auto it = r.designs.find(config.design); it != r.designs.end()) factory = it->second;
  }
  if (!factory) {
    error = "unknown design '" + config.design + "' (known:";
    for (const auto& n : design_names()) error += " " + n;
    error += ")";
    return nullptr;
  }
  return factory(config);
}

std::unique_ptr<Emulator> make_emulator(const EmulatorConfig& config) {
  std::string error;
  auto e = make_emulator(config, error);
  if (!e) {
    std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, error.c_str());
    std::abort();
  }
  return e;
}

void register_design(const std::string& name, DesignFactory factory) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.designs[name] = std::move(factory);
}

std::vector<std::string> design_names() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, f] : r.designs) names.push_back(name);
  return names;
}

namespace {

std::optional<Registry::Described> describe_design(const std::string& design, std::string& error) {
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    if (auto it = r.described.find(design); it != r.described.end()) return it->second;
  }
  EmulatorConfig config;
  config.design = design;
  auto emu = make_emulator(config, error);
  if (!emu) return std::nullopt;
  // A design without a model revision of its own (the mock) goes by this build's.
  const std::string& own = emu->describe().revision;
  Registry::Described d{isa::default_array(), own.empty() ? build::kModelRevision : own};
  const auto cfg = emu->read_csr(isa::csr::kConfig);
  const auto spad = emu->read_csr(isa::csr::kSpadCfg);
  if (cfg && spad && emu->describe().isa == "npu") d.array = isa::array_from_csrs(*cfg, *spad);
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.described[design] = d;
  return d;
}

}  // namespace

std::optional<isa::ArrayConfig> design_array(const std::string& design, std::string& error) {
  auto d = describe_design(design, error);
  if (!d) return std::nullopt;
  return d->array;
}

std::string design_revision(const std::string& design) {
  std::string error;
  auto d = describe_design(design, error);
  return d ? d->revision : std::string();
}

std::string packet_design_revision(const std::string& design, std::string& error) {
  const std::string name = design.empty() ? "npu" : design;
  bool known = false;
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    known = r.designs.count(name) > 0;
  }
  if (!known) {
    ConfigError kind;
    if (!design_for_config(name, error, kind))
      error = "recorded on design '" + name + "': " + error;
    else
      error = "recorded on design '" + name + "', which this bud does not have";
    return {};
  }
  return design_revision(name);
}

std::optional<std::string> design_for_config(std::string_view config, std::string& error,
                                             ConfigError& kind) {
  kind = ConfigError::None;
  const isa::ArrayConfig* v = isa::find_array_variant(config);
  if (config == "npu" || (v && v->name == isa::default_array().name)) return std::string("npu");
  if (!v) {
    kind = ConfigError::Unknown;
    error = "unknown array configuration '" + std::string(config) +
            "' (variants: " + isa::array_variant_names() + ")";
    return std::nullopt;
  }
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    if (r.designs.count(std::string(config))) return std::string(config);
  }
  kind = ConfigError::NotBuilt;
  std::string built = std::string(isa::default_array().name);
  for (const BuiltNpuVariant& b : kBuiltNpuVariants) built += std::string(";") + b.name;
  error = "array configuration '" + std::string(config) +
          "' is not built into this bud (built: " + built +
          "); configure with -DBUD_NPU_VARIANTS=\"" + built + ";" + std::string(config) +
          "\" and rebuild (README, \"Array sizes\")";
  return std::nullopt;
}

}  // namespace bud::emu
