#include "design/CompiledProbe.h"

#include <dlfcn.h>

#include "emu/core/Hash.h"

namespace bud::design {

namespace {
uint64_t probe_hash(const void* p, uint64_t n) {
  return hash64({static_cast<const uint8_t*>(p), static_cast<size_t>(n)});
}
}  // namespace

std::optional<CompiledProbe> CompiledProbe::load(const std::string& library, std::string& error) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = std::string("cannot load the probe: ") + dlerror();
    return std::nullopt;
  }
  CompiledProbe p;
  p.lib_ = std::shared_ptr<void>(lib, [](void* h) { dlclose(h); });
  auto abi = reinterpret_cast<unsigned (*)()>(dlsym(lib, "bud_probe_abi"));
  p.run_ = reinterpret_cast<void (*)(Io*)>(dlsym(lib, "bud_probe_run"));
  if (!abi || !p.run_ || abi() != kProbeAbi) {
    error = "'" + library + "' is not a bud probe of ABI " + std::to_string(kProbeAbi);
    return std::nullopt;
  }
  return p;
}

void CompiledProbe::bind(const ProbePlan& plan, const LoadedModel& model,
                         std::vector<uint64_t*> counts, std::vector<uint64_t*> stages,
                         uint64_t* valid, uint64_t* ready) {
  sig_.clear();
  for (const ProbePlan::Signal& s : plan.signals) {
    const ModelPort& p = model.ports()[s.port];
    sig_.push_back(static_cast<const uint8_t*>(p.data) + size_t{s.element} * p.bytes);
  }
  counts_ = std::move(counts);
  stages_ = std::move(stages);
  io_.sig = sig_.data();
  io_.count = counts_.data();
  io_.stage = stages_.data();
  io_.hash = probe_hash;
  io_.valid = valid;
  io_.ready = ready;
}

}  // namespace bud::design
