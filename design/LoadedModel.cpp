#include "design/LoadedModel.h"

#include <dlfcn.h>

namespace bud::design {

namespace {
// The binding's port record (binding_source() in ModelBuild.cpp writes the same layout).
struct AbiPort {
  const char* name;
  uint32_t width;
  uint32_t dir;  // 0 output, 1 input, 2 internal
  void* data;
  uint32_t bytes;
  uint32_t elements;
};
}  // namespace

std::optional<LoadedModel> LoadedModel::load(const std::string& library, std::string& error) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = "cannot load the model '" + library + "': " + dlerror();
    return std::nullopt;
  }
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  auto abi = reinterpret_cast<unsigned (*)()>(sym("bud_model_abi"));
  auto make = reinterpret_cast<void* (*)()>(sym("bud_model_new"));
  auto ports = reinterpret_cast<uint32_t (*)(void*, const AbiPort**)>(sym("bud_model_ports"));
  LoadedModel m;
  m.lib_ = lib;
  m.eval_ = reinterpret_cast<void (*)(void*)>(sym("bud_model_eval"));
  m.delete_ = reinterpret_cast<void (*)(void*)>(sym("bud_model_delete"));
  if (!abi || !make || !ports || !m.eval_ || !m.delete_ || abi() != 2) {
    error = "'" + library + "' is not a bud design model (ABI 2); rebuild it with bud design build";
    return std::nullopt;  // m's destructor closes the library
  }
  m.handle_ = make();
  const AbiPort* p = nullptr;
  const uint32_t n = ports(m.handle_, &p);
  for (uint32_t i = 0; i < n; ++i)
    m.ports_.push_back(ModelPort{p[i].name, p[i].width, p[i].dir == 1, p[i].dir == 2, p[i].data,
                                 p[i].bytes, p[i].elements});
  return m;
}

LoadedModel::LoadedModel(LoadedModel&& o) noexcept
    : lib_(o.lib_), handle_(o.handle_), eval_(o.eval_), delete_(o.delete_),
      ports_(std::move(o.ports_)) {
  o.lib_ = o.handle_ = nullptr;
}

LoadedModel::~LoadedModel() {
  if (handle_ && delete_) delete_(handle_);
  if (lib_) dlclose(lib_);
}

std::optional<size_t> LoadedModel::find(const std::string& name) const {
  for (size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i].name == name) return i;
  return std::nullopt;
}

}  // namespace bud::design
