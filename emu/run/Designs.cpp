#include "emu/run/Designs.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "emu/npu/NpuEmulator.h"

namespace bud::emu {

namespace {

/// The designs by name; the NPU is built in.
struct Registry {
  Registry() {
    designs["npu"] = [](const EmulatorConfig& c) -> std::unique_ptr<Emulator> {
      return std::make_unique<NpuEmulator>(c);
    };
  }
  std::mutex mutex;
  std::map<std::string, DesignFactory> designs;  // ordered: design_names() is deterministic
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

}  // namespace bud::emu
