#include "design/LoadedModel.h"

#include <dlfcn.h>

#include "design/ModelBuild.h"

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
  m.library_ = library;
  m.eval_ = reinterpret_cast<void (*)(void*)>(sym("bud_model_eval"));
  m.delete_ = reinterpret_cast<void (*)(void*)>(sym("bud_model_delete"));
  m.save_ = reinterpret_cast<const uint8_t* (*)(void*, size_t*)>(sym("bud_model_save"));
  m.restore_ = reinterpret_cast<void (*)(void*, const uint8_t*, size_t)>(sym("bud_model_restore"));
  m.trace_open_ = reinterpret_cast<int (*)(void*, const char*)>(sym("bud_model_trace_open"));
  m.trace_dump_ = reinterpret_cast<void (*)(void*, uint64_t)>(sym("bud_model_trace_dump"));
  m.trace_close_ = reinterpret_cast<void (*)(void*)>(sym("bud_model_trace_close"));
  if (!abi || !make || !ports || !m.eval_ || !m.delete_ || abi() != kModelAbi || !m.save_ ||
      !m.restore_ || !m.trace_open_ || !m.trace_dump_ || !m.trace_close_) {
    error = "'" + library + "' is not a bud design model (ABI " + std::to_string(kModelAbi) +
            "); rebuild it with bud design build";
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
    : lib_(o.lib_), handle_(o.handle_), eval_(o.eval_), delete_(o.delete_), save_(o.save_),
      restore_(o.restore_), trace_open_(o.trace_open_), trace_dump_(o.trace_dump_),
      trace_close_(o.trace_close_), tracing_(o.tracing_), ports_(std::move(o.ports_)),
      library_(std::move(o.library_)) {
  o.lib_ = o.handle_ = nullptr;
  o.tracing_ = false;
}

LoadedModel::~LoadedModel() {
  trace_close();
  if (handle_ && delete_) delete_(handle_);
  if (lib_) dlclose(lib_);
}

std::optional<size_t> LoadedModel::find(const std::string& name) const {
  for (size_t i = 0; i < ports_.size(); ++i)
    if (ports_[i].name == name) return i;
  return std::nullopt;
}

}  // namespace bud::design

namespace bud::design {

std::span<const uint8_t> LoadedModel::save() {
  size_t n = 0;
  const uint8_t* d = save_(handle_, &n);
  return {d, n};
}

void LoadedModel::restore(std::span<const uint8_t> bytes) { restore_(handle_, bytes.data(), bytes.size()); }

std::string LoadedModel::trace_open(const std::string& path) {
  if (tracing_) return "a waveform is already being written";
  if (trace_open_(handle_, path.c_str()) != 0) return "cannot open " + path + " for writing";
  tracing_ = true;
  return {};
}

void LoadedModel::trace_close() {
  if (!tracing_) return;
  trace_close_(handle_);
  tracing_ = false;
}

}  // namespace bud::design
