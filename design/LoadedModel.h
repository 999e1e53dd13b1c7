// A model built by build_model(), loaded with dlopen: one instance of the Verilated top per
// LoadedModel, its ports and internal signals by name, and eval(). Reading and writing a port is a fixed-size copy
// (no allocation), so the per-cycle harness can use it.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bud::design {

/// One port of the loaded top, as the binding describes it.
struct ModelPort {
  std::string name;
  uint32_t width = 0;
  bool input = false;
  bool internal = false;  ///< a signal below the top's ports ("u_core.busy", "mul_valid")
  void* data = nullptr;   ///< the Verilated member (CData/SData/IData/QData or VlWide words)
  uint32_t bytes = 0;     ///< per element
  uint32_t elements = 1;  ///< > 1: an unpacked array (element i at data + i * bytes)
};

/// A port's storage, for code that reads or writes it every cycle: get() and set() as
/// LoadedModel's, without the port table's lookup. Valid while the model lives.
struct PortRef {
  void* data = nullptr;
  uint32_t bytes = 1;
  /// The low 64 bits (wider ports: the first 8 bytes).
  uint64_t get() const {
    // Fixed-size copies (Verilator's CData/SData/IData/QData), so none is a call to memcpy.
    switch (bytes) {
      case 1: return *static_cast<const uint8_t*>(data);
      case 2: return load<uint16_t>();
      case 4: return load<uint32_t>();
      default: return load<uint64_t>();  // QData, or the first words of a VlWide
    }
  }
  /// Sets the low 64 bits (wider ports: the first 8 bytes).
  void set(uint64_t v) const {
    switch (bytes) {
      case 1: *static_cast<uint8_t*>(data) = static_cast<uint8_t>(v); break;
      case 2: store(static_cast<uint16_t>(v)); break;
      case 4: store(static_cast<uint32_t>(v)); break;
      default: store(v); break;
    }
  }

 private:
  template <class T>
  uint64_t load() const {
    T v;
    std::memcpy(&v, data, sizeof v);
    return v;
  }
  template <class T>
  void store(T v) const {
    std::memcpy(data, &v, sizeof v);
  }
};

class LoadedModel {
 public:
  /// Loads `library` and makes one instance. nullopt and `error` when it cannot.
  static std::optional<LoadedModel> load(const std::string& library, std::string& error);
  LoadedModel(LoadedModel&& o) noexcept;
  LoadedModel& operator=(LoadedModel&&) = delete;
  LoadedModel(const LoadedModel&) = delete;
  ~LoadedModel();

  const std::vector<ModelPort>& ports() const { return ports_; }
  /// Index of a port by name.
  std::optional<size_t> find(const std::string& name) const;
  /// The low 64 bits of port `i`.
  uint64_t get(size_t i) const { return ref(i).get(); }
  /// Sets the low 64 bits of input port `i` (wider ports: the first 8 bytes).
  void set(size_t i, uint64_t v) { ref(i).set(v); }
  /// Port `i`'s storage, for reading or writing it every cycle.
  PortRef ref(size_t i) const { return PortRef{ports_[i].data, ports_[i].bytes}; }
  /// The library the model was loaded from (its cache entry's model.so).
  const std::string& library() const { return library_; }
  /// Evaluates the model (combinational settle, and the edge if the clock rose).
  void eval() { eval_(handle_); }

  /// The model's whole Verilated state (Verilator's --savable serialisation), valid until the
  /// next save(); restore() of the same bytes, into a model of the same library, puts it back.
  std::span<const uint8_t> save();
  void restore(std::span<const uint8_t> bytes);
  /// Starts writing every signal to an FST waveform (error message or empty); dump(t) writes the
  /// values at time t; close() ends the file.
  std::string trace_open(const std::string& path);
  void trace_dump(uint64_t time) {
    if (tracing_) trace_dump_(handle_, time);
  }
  void trace_close();
  bool tracing() const { return tracing_; }

 private:
  LoadedModel() = default;
  void* lib_ = nullptr;
  void* handle_ = nullptr;
  void (*eval_)(void*) = nullptr;
  void (*delete_)(void*) = nullptr;
  const uint8_t* (*save_)(void*, size_t*) = nullptr;
  void (*restore_)(void*, const uint8_t*, size_t) = nullptr;
  int (*trace_open_)(void*, const char*) = nullptr;
  void (*trace_dump_)(void*, uint64_t) = nullptr;
  void (*trace_close_)(void*) = nullptr;
  bool tracing_ = false;
  std::vector<ModelPort> ports_;
  std::string library_;
};

}  // namespace bud::design
