#include "emu/npu/NpuEmulator.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <type_traits>

// This file is compiled once per built array variant (emu/npu/CMakeLists.txt): the default
// (npu8) as NpuEmulator over Vnpu_top, every other variant with BUD_NPU_VARIANT (its name),
// BUD_NPU_MODEL_H / BUD_NPU_SYMS_H (its Verilated headers) and the compile definitions
// NpuEmulator=NpuEmulator_<variant>, Vnpu_top=V<variant>, so the classes do not clash.
#ifdef BUD_NPU_VARIANT
#include BUD_NPU_MODEL_H
#include BUD_NPU_SYMS_H
#include BUD_NPU_REVISION_H
#define BUD_STR2(x) #x
#define BUD_STR(x) BUD_STR2(x)
#else
#include "Vnpu_top.h"
#include "Vnpu_top__Syms.h"
#include "bud/ModelRevision.h"
#endif
#include "emu/core/Hash.h"
#include "emu/isa/Isa.h"
#include "emu/npu/DesignOutput.h"
#include "verilated.h"
#include "verilated_fst_c.h"
#include "verilated_save.h"
#include "verilated_syms.h"

namespace bud::emu {

namespace {

#ifdef BUD_NPU_VARIANT
namespace revision = build::BUD_NPU_VARIANT;
constexpr std::string_view kVariant = BUD_STR(BUD_NPU_VARIANT);
#else
namespace revision = build;
constexpr std::string_view kVariant = isa::default_array().name;
#endif

constexpr const isa::ArrayConfig& variant_array() {
  for (const isa::ArrayConfig& a : isa::kArrayVariants)
    if (a.name == kVariant) return a;
  return isa::kArrayVariants[0];
}
/// The array this model was Verilated with (its package; the CSRs report the same).
constexpr const isa::ArrayConfig& kArray = variant_array();
static_assert(kArray.name == kVariant, "BUD_NPU_VARIANT names no variant of rtl/npu_facts.toml");

/// The bytes of a Verilated port: a VlWide's words or an integer's own bytes (little endian).
template <typename T>
const void* port_bytes(const T& v) {
  if constexpr (std::is_integral_v<T>)
    return &v;
  else
    return v.data();
}

// Bump the digits whenever the layout or the checksum of a saved state changes.
// 05: XXH3; 06: the thermal model's state after the faults' progress.
constexpr char kSaveMagic[8] = {'B', 'U', 'D', 'N', 'P', 'U', '0', '6'};

// Segment keys of save_segments(): the head (header, scalars, model, DRAM model without its page
// contents), one per stored DRAM page (kKeyPage + page index), and the tail (host, checksum).
constexpr uint64_t kKeyHead = 1;
constexpr uint64_t kKeyTail = 2;
constexpr uint64_t kKeyPage = uint64_t{1} << 32;

template <typename T>
void put(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

template <typename T>
bool get(std::span<const uint8_t> in, size_t& off, T& v) {
  if (off + sizeof(T) > in.size()) return false;
  std::memcpy(&v, in.data() + off, sizeof(T));
  off += sizeof(T);
  return true;
}

/// Verilator serialisation into a byte vector. Reusable (begin/end) so that a digest does not
/// allocate Verilator's 256 KiB buffer, or a vector, each time.
class MemSave final : public VerilatedSerialize {
 public:
  MemSave() = default;
  explicit MemSave(std::vector<uint8_t>& out) { begin(out); }
  ~MemSave() override {
    if (out_) end();
  }
  void begin(std::vector<uint8_t>& out) {
    out_ = &out;
    m_isOpen = true;
    m_cp = m_bufp;
    header();
  }
  void end() {
    trailer();
    flush();
    out_ = nullptr;
  }
  void flush() override {
    out_->insert(out_->end(), m_bufp, m_cp);
    m_cp = m_bufp;
  }

 private:
  std::vector<uint8_t>* out_ = nullptr;
};

/// Verilator deserialisation from a byte span (already integrity-checked by the caller).
class MemRestore final : public VerilatedDeserialize {
 public:
  explicit MemRestore(std::span<const uint8_t> in) : in_(in) {
    m_isOpen = true;
    m_endp = m_bufp;
    m_cp = m_bufp;
    fill();
    header();
  }
  ~MemRestore() override { trailer(); }
  void fill() override {
    uint8_t* rp = m_bufp;
    for (uint8_t* sp = m_cp; sp < m_endp; *rp++ = *sp++) {
    }
    m_endp = m_bufp + (m_endp - m_cp);
    m_cp = m_bufp;
    const size_t room = static_cast<size_t>(m_bufp + bufferSize() - m_endp);
    const size_t n = std::min(room, in_.size() - pos_);
    std::memcpy(m_endp, in_.data() + pos_, n);
    pos_ += n;
    m_endp += n;
  }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

/// Layout mirror of VerilatedContext::Serialized (Verilator 5.006), used only to find its padding
/// bytes: they are serialised with the model but never initialised, so they would make two equal
/// states hash differently. The static_assert catches a Verilator whose layout differs.
struct ContextSerializedMirror {
  bool assert_on, calc_unused, fatal_on_error, fatal_on_vpi_error, got_error, got_finish;
  uint64_t time;
  int8_t timeunit, timeprecision;
  int error_count, error_limit, rand_reset, rand_seed, tf_units, tf_precision, tf_width;
};
static_assert(sizeof(ContextSerializedMirror) == VerilatedContext::serialized1Size(),
              "VerilatedContext::Serialized changed layout: update ContextSerializedMirror");

/// Zeroes the padding bytes of the context's serialised block (see ContextSerializedMirror).
void zero_context_padding(VerilatedContext& ctx) {
  auto* p = static_cast<uint8_t*>(ctx.serialized1Ptr());
  using M = ContextSerializedMirror;
  const size_t after_bools = offsetof(M, got_finish) + sizeof(bool);
  for (size_t i = after_bools; i < offsetof(M, time); ++i) p[i] = 0;
  const size_t after_tp = offsetof(M, timeprecision) + sizeof(int8_t);
  for (size_t i = after_tp; i < offsetof(M, error_count); ++i) p[i] = 0;
  for (size_t i = offsetof(M, tf_width) + sizeof(int); i < sizeof(M); ++i) p[i] = 0;
}

/// Where a signal's bits live in the model.
struct SignalAccess {
  uint8_t* data = nullptr;
  uint32_t ent_bytes = 0;  ///< bytes per element in the model's storage
};

struct Force {
  SignalId id = 0;
  uint32_t element = 0;
  SignalValue value;
};
constexpr size_t kMaxForces = 32;


}  // namespace

struct NpuEmulator::Impl {
  NpuConfig config;
  std::unique_ptr<VerilatedContext> ctx;
  std::unique_ptr<Vnpu_top> top;
  DramModel dram;
  HostDriver host;
  HostJob job;
  uint64_t cycle = 0;
  RunState state = RunState::Ready;
  std::string message;
  std::string output;      ///< what the model printed and nobody took yet (DesignOutputScope)
  DesignInfo design_info;  ///< describe()
  uint64_t last_progress = 0;
  std::array<StageDigest, kNumStages> digests{};
  StageTxn txn;
  CycleHook* hook = nullptr;
  InputRecorder* recorder = nullptr;
  bool loaded = false;  ///< a job was loaded (the DRAM model must be fresh for the next)
  TxnObserver* observer = nullptr;
  std::vector<SignalInfo> signals;
  std::vector<SignalAccess> access;
  std::map<std::string, SignalId, std::less<>> by_name;
  std::vector<MemoryInfo> memories;
  std::array<SignalAccess, isa::kNumBuffers> spads{};
  const uint64_t* pmu = nullptr;
  uint32_t pmu_elements = 0;  ///< unpacked size of the RTL's pmu.cnt array
  std::array<Force, kMaxForces> forces{};
  size_t num_forces = 0;
  /// The thermal model (config.thermal): its state, and the next window boundary (UINT64_MAX
  /// when it is off).
  ThermalState thermal;
  uint64_t thermal_next = UINT64_MAX;
  std::unique_ptr<VerilatedFstC> fst;
  /// The model as the first load() left it (constructed, then reset). Later loads restore it:
  /// the reset pin does not reach registers without a reset (datapath registers, scratchpads),
  /// which would otherwise keep the previous run's values into the next one (stale waveforms,
  /// digests that depend on what ran before).
  std::vector<uint8_t> after_reset;
  /// digest()'s scratch: the serialiser (with Verilator's buffer) and the model image.
  MemSave digest_saver;
  std::vector<uint8_t> digest_model;

  /// Verilator's trace-activity flags as a never-traced model has them (all set).
  void normalize_trace_activity() {
    top->rootp->vlSymsp->__Vm_activity = true;
    auto& act = top->rootp->__Vm_traceActivity;
    for (size_t i = 0; i < sizeof(act) / sizeof(act[0]); ++i) act[i] = 1;
  }

  /// An injected fault, resolved against the design, with its progress.
  struct ActiveFault {
    FaultSpec spec;
    SignalId id = 0;      ///< Flip / Stuck
    bool done = false;    ///< acted (Flip, MemFlip, DRAM faults) or expired (Stuck)
    uint64_t left = 0;    ///< DramDelay: cycles still held back; DramDup: 1 = skip next pop
  };
  std::vector<ActiveFault> faults;
  uint64_t next_fault_cycle = UINT64_MAX;  ///< no fault acts before this cycle
  bool dram_armed = false;                 ///< a DRAM fault waits for the next response

  explicit Impl(const NpuConfig& c) : config(c), dram(c.dram) {
    ctx = std::make_unique<VerilatedContext>();
    ctx->randReset(0);
    ctx->randSeed(static_cast<int>(config.verilator_seed));
    ctx->fatalOnError(false);  // assertions are reported through assert_code, not abort()
    ctx->traceEverOn(true);
    zero_context_padding(*ctx);
    top = std::make_unique<Vnpu_top>(ctx.get(), "TOP");
    build_signal_table();
  }

  void add_signal(std::string name, uint32_t width, uint32_t elements, SignalKind kind,
                  bool writable, std::string desc, uint8_t* data, uint32_t ent_bytes) {
    by_name.emplace(name, static_cast<SignalId>(signals.size()));
    signals.push_back({std::move(name), width, elements, kind, writable, std::move(desc)});
    access.push_back({data, ent_bytes});
  }

  static uint32_t ent_bytes_of(const VerilatedVar& v) {
    switch (v.vltype()) {
      case VLVT_UINT8: return 1;
      case VLVT_UINT16: return 2;
      case VLVT_UINT32: return 4;
      case VLVT_UINT64: return 8;
      case VLVT_WDATA: return static_cast<uint32_t>(VL_WORDS_I(v.packed().elements()) * 4);
      default: return 0;
    }
  }

  void build_signal_table() {
    // Debug-visible internals: every variable the RTL marks public_flat_rw, named by instance
    // ("u_load.state" -> "load.state"). Scratchpad arrays become memories, the PMU array becomes
    // one signal per counter.
    std::vector<std::pair<std::string, const VerilatedVar*>> vars;
    for (const auto& [scope_name, scope] : *ctx->scopeNameMap()) {
      if (!scope->varsp()) continue;
      std::string prefix = scope_name;
      const std::string root = "TOP.npu_top";
      if (prefix.rfind(root, 0) != 0) continue;
      prefix = prefix.substr(root.size());
      if (!prefix.empty() && prefix[0] == '.') prefix = prefix.substr(1);
      if (prefix.rfind("u_", 0) == 0) prefix = prefix.substr(2);
      for (const auto& [var_name, var] : *scope->varsp()) {
        vars.emplace_back(prefix.empty() ? var_name : prefix + "." + var_name, &var);
      }
    }
    std::sort(vars.begin(), vars.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::map<std::string, isa::Buffer> spad_names = {{"inp.mem", isa::Buffer::Inp},
                                                           {"wgt.mem", isa::Buffer::Wgt},
                                                           {"acc.mem", isa::Buffer::Acc},
                                                           {"out.mem", isa::Buffer::Out}};
    for (const auto& [name, var] : vars) {
      auto* data = static_cast<uint8_t*>(var->datap());
      const uint32_t eb = ent_bytes_of(*var);
      const uint32_t width = static_cast<uint32_t>(var->packed().elements());
      const uint32_t elements =
          var->udims() > 0 ? static_cast<uint32_t>(var->unpacked().elements()) : 1;
      if (auto it = spad_names.find(name); it != spad_names.end()) {
        spads[static_cast<int>(it->second)] = {data, eb};
        continue;
      }
      if (name == "pmu.cnt") {
        pmu = reinterpret_cast<const uint64_t*>(data);
        pmu_elements = elements;
        // Both come from rtl/npu_facts.toml (the package and bud/NpuFacts.h): a mismatch means
        // a stale build. Counters beyond the table are not named; tests/npu/Facts.test.cpp.
        if (elements != static_cast<uint32_t>(isa::kNumCounters)) {
          std::fprintf(stderr, "%s:%d: the Verilated PMU has %u counters, the table %d\n",
                       __FILE__, __LINE__, elements, isa::kNumCounters);
          std::abort();
        }
        for (int i = 0; i < isa::kNumCounters; ++i) {
          design_info.counters.push_back(isa::counter_name(i));
          add_signal("pmu." + isa::counter_name(i), 64, 1, SignalKind::Counter, true,
                     "PMU counter " + std::to_string(i), data + 8 * i, 8);
        }
        continue;
      }
      add_signal(name, width, elements, SignalKind::State, true, "RTL register", data, eb);
    }
    // Top-level ports: inputs are driven by the harness every cycle, so only outputs are listed,
    // and the host CSR port (read-only, appended last so earlier ids do not move): what the host
    // driver accessed in the cycle that ended at the last edge (observers build the host's
    // timeline from it: profile/HostTrack).
    auto port = [&](const char* name, auto& member, uint32_t width, const char* desc) {
      add_signal(name, width, 1, SignalKind::Port, false, desc,
                 reinterpret_cast<uint8_t*>(&member), static_cast<uint32_t>(sizeof(member)));
    };
    port("running", top->running, 1, "program running");
    port("irq", top->irq, 1, "interrupt line");
    port("assert_code", top->assert_code, 8, "first assertion that fired (0 none)");
    port("assert_engine", top->assert_engine, 3, "its engine (0 fetch .. 4 store)");
    port("assert_cmd", top->assert_cmd, 32, "the command that engine held (fetch: ring index)");
    port("assert_value0", top->assert_value0, 32, "the assertion's first value");
    port("assert_value1", top->assert_value1, 32, "the assertion's second value");
    port("assert_cycle", top->assert_cycle, 64, "the cycle it fired at");
    port("dram_req_valid", top->dram_req_valid, 1, "DRAM request valid");
    port("dram_req_addr", top->dram_req_addr, 32, "DRAM request address");
    port("obs_dec_valid", top->obs_dec_valid, 1, "fetch: command dispatched");
    port("obs_ld_valid", top->obs_ld_valid, 1, "load: scratchpad entry written");
    port("obs_ld_addr", top->obs_ld_addr, 16, "load: entry index");
    port("obs_acc_valid", top->obs_acc_valid, 1, "gemm: ACC entry written");
    port("obs_acc_addr", top->obs_acc_addr, 16, "gemm: ACC entry index");
    port("obs_out_valid", top->obs_out_valid, 1, "post: OUT entry written");
    port("obs_out_addr", top->obs_out_addr, 16, "post: OUT entry index");
    port("obs_st_valid", top->obs_st_valid, 1, "store: DRAM write issued");
    port("obs_st_addr", top->obs_st_addr, 32, "store: DRAM byte address");
    port("csr_valid", top->csr_valid, 1, "host: CSR access this cycle (input, read-only)");
    port("csr_write", top->csr_write, 1, "host: 1 write, 0 read (input, read-only)");
    port("csr_addr", top->csr_addr, 8, "host: CSR address (input, read-only)");
    port("csr_wdata", top->csr_wdata, 32, "host: CSR write data (input, read-only)");
    // The harness's thermal model (docs/power.md "Thermal"; all 0 while it is off), appended
    // after the ports so earlier ids do not move.
    add_signal("thermal.temp_mc", 64, 1, SignalKind::State, false,
               "die temperature, milli-degrees C (thermal model)",
               reinterpret_cast<uint8_t*>(&thermal.temp_mc), 8);
    add_signal("thermal.peak_mc", 64, 1, SignalKind::State, false,
               "the highest die temperature so far, milli-degrees C",
               reinterpret_cast<uint8_t*>(&thermal.peak_mc), 8);
    add_signal("thermal.clamped", 1, 1, SignalKind::State, false,
               "the thermal clamp holds the throttle input high",
               reinterpret_cast<uint8_t*>(&thermal.clamped), 1);
    add_signal("thermal.clamp_events", 64, 1, SignalKind::Counter, false,
               "times the thermal clamp engaged", reinterpret_cast<uint8_t*>(&thermal.clamp_events),
               8);
    add_signal("thermal.clamped_cycles", 64, 1, SignalKind::Counter, false,
               "cycles run with the thermal clamp held (counted at each window's end)",
               reinterpret_cast<uint8_t*>(&thermal.clamped_cycles), 8);
    add_signal("thermal.power_uw", 64, 1, SignalKind::State, false,
               "the last thermal window's average power, microwatts",
               reinterpret_cast<uint8_t*>(&thermal.power_uw), 8);
    design_info.name = std::string(kVariant == isa::default_array().name ? "npu" : kVariant);
    design_info.isa = "npu";
    design_info.revision = revision::kModelRevision;
    for (int st = 0; st < kNumStages; ++st)
      design_info.stages.push_back(stage_name(static_cast<Stage>(st)));
    memories = {{"dram", dram.size(), 8}};
    for (int b = 0; b < isa::kNumBuffers; ++b) {
      const auto g = kArray.geometry(static_cast<isa::Buffer>(b));
      memories.push_back({isa::buffer_name(static_cast<isa::Buffer>(b)),
                          uint64_t{g.entry_bytes} * g.entries, g.entry_bytes});
    }
  }

  void reset_model() {
    top->rst_n = 0;
    top->clk = 0;
    top->throttle = 0;
    top->csr_valid = 0;
    top->dram_req_ready = 0;
    top->dram_resp_valid = 0;
    top->eval();
    for (int i = 0; i < 2; ++i) {
      top->clk = 1;
      top->eval();
      top->clk = 0;
      top->eval();
    }
    top->rst_n = 1;
    top->eval();
    // The model's own cycle counter restarts with the harness's.
    if (auto id = by_name.find("cycle"); id != by_name.end()) {
      std::memset(access[id->second].data, 0, access[id->second].ent_bytes);
    }
  }

  void emit(Stage stage) {
    txn.stage = stage;
    txn.cycle = cycle;
    digests[static_cast<int>(stage)].add(txn);
    if (observer) observer->on_txn(txn);
    last_progress = cycle;
  }

  void sample_observation() {
    // Only wide Load/Gemm entries have segments; every other transaction is segment 0.
    txn.segment = 0;
    if (top->obs_dec_valid) {
      txn.data.fill(0);
      std::memcpy(txn.data.data(), top->obs_dec_cmd.data(), 32);
      txn.buffer = 0;
      txn.size = 32;
      txn.addr = 0;
      txn.cmd_id = static_cast<uint32_t>(top->obs_dec_cmd[1]);
      emit(Stage::Fetch);
    }
    if (top->obs_ld_valid) {
      const auto buf = static_cast<isa::Buffer>(top->obs_ld_buf);
      txn.data.fill(0);
      // One unit: an entry, or a 64-byte segment of an entry wider than a DRAM request.
      txn.size = static_cast<uint16_t>(std::min(kArray.entry_bytes(buf), isa::kDramRequestBytes));
      std::memcpy(txn.data.data(), top->obs_ld_data.data(), txn.size);
      txn.buffer = top->obs_ld_buf;
      txn.segment = static_cast<uint8_t>(top->obs_ld_seg);
      txn.addr = top->obs_ld_addr;
      txn.cmd_id = top->obs_ld_id;
      emit(Stage::Load);
      txn.segment = 0;
    }
    if (top->obs_acc_valid) {
      // ACC entries wider than 64 bytes (npu32) are reported as 64-byte segments.
      constexpr uint32_t bytes = kArray.entry_bytes(isa::Buffer::Acc);
      constexpr uint32_t seg = std::min(bytes, isa::kDramRequestBytes);
      const auto* data = static_cast<const uint8_t*>(port_bytes(top->obs_acc_data));
      for (uint32_t s = 0; s < bytes / seg; ++s) {
        txn.data.fill(0);
        std::memcpy(txn.data.data(), data + s * seg, seg);
        txn.buffer = static_cast<uint8_t>(isa::Buffer::Acc);
        txn.segment = static_cast<uint8_t>(s);
        txn.size = static_cast<uint16_t>(seg);
        txn.addr = top->obs_acc_addr;
        txn.cmd_id = top->obs_acc_id;
        emit(Stage::Gemm);
      }
      txn.segment = 0;
    }
    if (top->obs_out_valid) {
      txn.data.fill(0);
      constexpr uint32_t bytes = kArray.entry_bytes(isa::Buffer::Out);
      std::memcpy(txn.data.data(), port_bytes(top->obs_out_data), bytes);
      txn.buffer = static_cast<uint8_t>(isa::Buffer::Out);
      txn.size = static_cast<uint16_t>(bytes);
      txn.addr = top->obs_out_addr;
      txn.cmd_id = top->obs_out_id;
      emit(Stage::Post);
    }
    if (top->obs_st_valid) {
      txn.data.fill(0);
      txn.size = top->obs_st_size;
      std::memcpy(txn.data.data(), top->obs_st_data.data(), std::min<size_t>(txn.size, 64));
      txn.buffer = static_cast<uint8_t>(isa::Buffer::Out);  // the source of the data
      txn.addr = top->obs_st_addr;
      txn.cmd_id = top->obs_st_id;
      emit(Stage::Store);
    }
  }

  void apply_forces() {
    for (size_t i = 0; i < num_forces; ++i) write_signal(forces[i].id, forces[i].element,
                                                         forces[i].value);
  }

  void write_signal(SignalId id, uint32_t element, const SignalValue& v) {
    const auto& a = access[id];
    const auto& info = signals[id];
    uint8_t* p = a.data + size_t{element} * a.ent_bytes;
    std::array<uint64_t, 8> w = v.words;
    // Keep only the signal's bits (Verilator requires unused upper bits to stay zero).
    const uint32_t width = info.width;
    for (uint32_t i = 0; i < 8; ++i) {
      const uint32_t lo = i * 64;
      if (lo >= width) w[i] = 0;
      else if (width - lo < 64) w[i] &= (uint64_t{1} << (width - lo)) - 1;
    }
    std::memcpy(p, w.data(), a.ent_bytes);
  }

  void record_inputs() {
    NpuInputs in;
    in.req_ready = top->dram_req_ready;
    in.resp_valid = top->dram_resp_valid;
    in.resp_write = top->dram_resp_write;
    in.resp_tag = top->dram_resp_tag;
    in.csr_valid = top->csr_valid;
    in.csr_write = top->csr_write;
    in.csr_addr = top->csr_addr;
    in.csr_wdata = top->csr_wdata;
    in.throttle = top->throttle;
    std::memcpy(in.resp_rdata.data(), top->dram_resp_rdata.data(), 64);
    recorder->on_inputs(in);
  }

  bool thr_on() const {
    const auto& t = config.throttle;
    return thermal.clamped || (t.period != 0 && (cycle % t.period) < t.on_cycles);
  }

  /// A thermal window ended at this edge: price the counters, step the model.
  void thermal_step() {
    uint64_t fj = 0;
    for (const auto& [index, price] : config.thermal.prices) fj += pmu[index] * price;
    thermal_window(config.thermal, thermal, fj);
    thermal_next += config.thermal.window_cycles;
  }

  void thermal_reset() {
    thermal = config.thermal.enabled ? thermal_start(config.thermal) : ThermalState{};
    thermal_next = config.thermal.enabled ? config.thermal.window_cycles : UINT64_MAX;
  }

  static bool is_dram_fault(FaultKind k) {
    return k == FaultKind::DramDrop || k == FaultKind::DramDup || k == FaultKind::DramDelay;
  }

  /// Next cycle apply_faults() has work, and whether a DRAM fault is armed now.
  void recompute_next_fault() {
    next_fault_cycle = UINT64_MAX;
    dram_armed = false;
    for (const auto& f : faults) {
      if (f.done) continue;
      if (is_dram_fault(f.spec.kind) && f.spec.cycle <= cycle) {
        dram_armed = true;
        continue;
      }
      next_fault_cycle = std::min(next_fault_cycle, std::max(f.spec.cycle, cycle));
    }
  }

  /// Signal and memory faults act at the start of their cycle, before inputs settle, so the
  /// coming edge sees them. DRAM faults arm here and act on the next presented response.
  void apply_faults() {
    for (auto& f : faults) {
      if (f.done || cycle < f.spec.cycle) continue;
      switch (f.spec.kind) {
        case FaultKind::Flip:
        case FaultKind::Stuck: {
          const auto& a = access[f.id];
          uint8_t* p = a.data + size_t{f.spec.element} * a.ent_bytes + f.spec.bit / 8;
          const uint8_t mask = static_cast<uint8_t>(1u << (f.spec.bit % 8));
          if (f.spec.kind == FaultKind::Flip) {
            *p ^= mask;
            f.done = true;
          } else {
            *p = f.spec.value ? (*p | mask) : (*p & ~mask);
            if (f.spec.duration && cycle + 1 >= f.spec.cycle + f.spec.duration) f.done = true;
          }
          break;
        }
        case FaultKind::MemFlip: {
          uint8_t b = 0;
          if (read_memory_impl(f.spec.target, f.spec.addr, std::span<uint8_t>(&b, 1))) {
            b ^= static_cast<uint8_t>(1u << f.spec.bit);
            write_memory_impl(f.spec.target, f.spec.addr, std::span<const uint8_t>(&b, 1));
          }
          f.done = true;
          break;
        }
        default:
          break;  // DRAM faults act in the response path below
      }
    }
    recompute_next_fault();
  }

  /// The first armed, unfinished DRAM fault, or null.
  ActiveFault* dram_fault() {
    for (auto& f : faults)
      if (!f.done && cycle >= f.spec.cycle && is_dram_fault(f.spec.kind)) return &f;
    return nullptr;
  }

  bool read_memory_impl(std::string_view memory, uint64_t offset, std::span<uint8_t> out) const;
  bool write_memory_impl(std::string_view memory, uint64_t offset, std::span<const uint8_t> in);

  /// One clock cycle. Hot path: no allocation, no exceptions, no I/O.
  void tick() {
    if (cycle >= next_fault_cycle) apply_faults();
    // Inputs for this cycle.
    top->dram_req_ready = dram.req_ready();
    const DramResponse* resp = dram.resp();
    bool skip_pop = false;
    if (resp && dram_armed) {
      if (ActiveFault* f = dram_fault()) {
        switch (f->spec.kind) {
          case FaultKind::DramDrop:  // the response is lost on the way
            dram.pop_resp();
            resp = nullptr;
            f->done = true;
            break;
          case FaultKind::DramDelay:  // held back, blocking the channel
            if (f->left == 0) f->left = f->spec.duration;
            resp = nullptr;
            if (--f->left == 0) f->done = true;
            break;
          case FaultKind::DramDup:  // delivered now and again next cycle
            skip_pop = true;
            f->done = true;
            break;
          default:
            break;
        }
        recompute_next_fault();
      }
    }
    top->dram_resp_valid = resp != nullptr;
    if (resp) {
      top->dram_resp_write = resp->write;
      top->dram_resp_tag = resp->tag;
      std::memcpy(top->dram_resp_rdata.data(), resp->rdata.data(), 64);
    }
    const CsrAccess csr = host.drive();
    top->csr_valid = csr.valid;
    top->csr_write = csr.write;
    top->csr_addr = csr.addr;
    top->csr_wdata = csr.wdata;
    top->throttle = thr_on();
    if (recorder) record_inputs();
    top->clk = 0;
    top->eval();

    // Handshakes and observations of this cycle (effective at the coming edge).
    if (top->dram_req_valid && top->dram_req_ready) {
      DramRequest req;
      req.write = top->dram_req_write;
      req.addr = top->dram_req_addr;
      req.size = top->dram_req_size;
      req.tag = top->dram_req_tag;
      if (req.write) std::memcpy(req.wdata.data(), top->dram_req_wdata.data(), 64);
      dram.accept(req);
      last_progress = cycle;
    }
    if (resp && top->dram_resp_ready) {
      if (!skip_pop) dram.pop_resp();
      last_progress = cycle;
    }
    sample_observation();
    host.sample(top->csr_rdata, top->irq, dram);

    // Rising edge.
    top->clk = 1;
    top->eval();
    ++cycle;
    dram.tick();
    if (cycle == thermal_next) [[unlikely]]
      thermal_step();
    if (num_forces) apply_forces();
    if (fst) fst->dump(cycle);
  }

  /// The assertion port (first failure, latched by the RTL), with its message rendered from
  /// the facts table (rtl/npu_facts.toml [[assertion]]).
  AssertionReport assertion_report() const {
    AssertionReport a;
    a.code = top->assert_code;
    a.stage = static_cast<Stage>(std::min<unsigned>(top->assert_engine, kNumStages - 1));
    a.cmd = top->assert_cmd;
    a.values = {top->assert_value0, top->assert_value1};
    a.cycle = top->assert_cycle;
    const isa::AssertionFact* fact = nullptr;
    for (const auto& f : isa::kAssertions)
      if (f.code == a.code) fact = &f;
    a.name = fact ? std::string(fact->name) : "unknown_" + std::to_string(a.code);
    a.message = "NPU ASSERT " + a.name + " at cycle " + std::to_string(a.cycle) + ": by " +
                stage_name(a.stage) + " (" +
                (a.stage == Stage::Fetch ? "ring index " : "command #") + std::to_string(a.cmd);
    for (size_t i = 0; fact && i < fact->values.size(); ++i) {
      const auto& v = fact->values[i];
      if (v.name.empty()) continue;
      std::string text;
      if (v.binary) {
        for (uint64_t x = a.values[i]; x; x >>= 1) text.insert(text.begin(), char('0' + (x & 1)));
        text = "0b" + (text.empty() ? std::string("0") : text);
      } else {
        text = std::to_string(a.values[i]);
      }
      a.message += std::string(i ? ", " : "; ") + std::string(v.name) + " = " + text;
    }
    a.message += ")";
    return a;
  }

  void check_state() {
    if (top->assert_code != 0) {
      state = RunState::Assertion;
      message = assertion_report().message;
      return;
    }
    if (dram.error()) {
      state = RunState::Error;
      message = "memory model: " + dram.error()->to_string();
      return;
    }
    if (host.finished()) {
      if (host.final_status() & isa::csr::kStatusError) {
        state = RunState::Error;
        message = "NPU stopped with an error at cycle " + std::to_string(cycle);
      } else {
        state = RunState::Finished;
      }
      return;
    }
    if (cycle - last_progress > config.hang_cycles) {
      state = RunState::Hang;
      message = "no progress for " + std::to_string(cycle - last_progress) +
                " cycles (watchdog) at cycle " + std::to_string(cycle);
    }
  }
};

NpuEmulator::NpuEmulator(const NpuConfig& config) : impl_(std::make_unique<Impl>(config)) {}
// Verilator keeps a per-thread "current context" that every new VerilatedContext overwrites and
// that $error reporting and model destruction use; each entry point re-binds ours.
// The same entry points direct what the model prints to this emulator (DesignOutput.h).
#define BUD_BIND_CONTEXT()                     \
  Verilated::threadContextp(impl_->ctx.get()); \
  const DesignOutputScope bud_output_scope_(impl_->output)

NpuEmulator::~NpuEmulator() {
  if (!impl_) return;
  BUD_BIND_CONTEXT();
  if (impl_->fst) impl_->fst->close();
  if (impl_->top) impl_->top->final();
}

std::string NpuEmulator::load(const HostJob& job) {
  BUD_BIND_CONTEXT();
  auto& m = *impl_;
  if (auto e = m.config.dram.validate(); !e.empty()) return e;
  if (auto e = m.config.throttle.validate(); !e.empty()) return e;
  if (auto e = m.config.thermal.validate(); !e.empty()) return e;
  for (const auto& [index, price] : m.config.thermal.prices)
    if (index >= isa::kNumCounters || !m.pmu)
      return "thermal: counter index " + std::to_string(index) + " is not a PMU counter";
  if (m.dram.cycle() != 0 || m.loaded) m.dram = DramModel(m.config.dram);
  m.loaded = true;
  // A waveform being written cannot go back in time: it ends where it was (still valid).
  if (m.fst && m.cycle > 0) {
    m.fst->close();
    m.fst.reset();
  }
  m.job = job;
  m.cycle = 0;
  m.last_progress = 0;
  m.digests = {};
  m.state = RunState::Ready;
  m.message.clear();
  m.num_forces = 0;
  m.faults.clear();
  m.recompute_next_fault();
  m.thermal_reset();
  if (m.after_reset.empty()) {
    m.reset_model();
    MemSave ms(m.after_reset);
    ms << *m.top;
  } else {
    {
      MemRestore mr(m.after_reset);
      mr >> *m.top;
    }
    zero_context_padding(*m.ctx);
  }
  return m.host.start(m.job, m.dram);
}

uint64_t NpuEmulator::cycle() const { return impl_->cycle; }
RunState NpuEmulator::state() const { return impl_->state; }

StepResult NpuEmulator::step(uint64_t max_cycles) {
  BUD_BIND_CONTEXT();
  auto& m = *impl_;
  StepResult r;
  const uint64_t start = m.cycle;
  if (m.state != RunState::Ready) {
    r.state = m.state;
    r.message = m.message;
    return r;
  }
  while (m.cycle - start < max_cycles) {
    m.tick();
    m.check_state();
    // The hook sees every cycle, including the one on which the run finishes, hangs or asserts.
    if (m.hook && m.hook->after_cycle(m.cycle)) r.hook_stop = true;
    if (r.hook_stop || m.state != RunState::Ready) break;
  }
  r.cycles = m.cycle - start;
  r.state = m.state;
  r.message = m.message;
  if (m.state == RunState::Hang) r.message += "\n" + engine_report();
  r.reached_limit = m.state == RunState::Ready && !r.hook_stop;
  return r;
}

namespace {

// Layout (docs/architecture.md, "State save/restore"): magic[8] rev_len:u32 rev
// payload_len:u64 pages_at:u64 page_count:u32, then the payload (scalars, model, DRAM model, host)
// and checksum:u64. The DRAM model's state ends with its page contents, back to back, from byte
// pages_at of the state. The checksum chains the hash of the bytes
// before the pages, the DRAM page hash of each page and the hash of the bytes after them, so a
// save re-hashes only the pages written since the previous one (DramModel caches page hashes).
uint64_t state_checksum(uint64_t head_hash, std::span<const uint64_t> page_hashes,
                        uint64_t tail_hash) {
  const uint64_t parts[] = {head_hash, hash_words(page_hashes), tail_hash};
  return hash_words(parts, 0x4255444E50553035ull);  // "BUDNPU05"
}

/// Checks that `got`, the Verilated model image of a saved state, has the layout of `own`, this
/// model's image: the same length and the same bytes wherever Verilator's deserialiser reads a
/// signature, a module check value or a string length (the header, the root check value, both
/// copies of the context's strings, the package's check value, the trailer). Verilator trusts
/// those blindly: a string length is allocated and read without a bound, and a signature or
/// check value that differs aborts the process. Layout of Verilator 5.006 for this model:
/// header, didInit (1 byte), root check value, context, root variables, package check value,
/// context, trailer; a context is its serialised block then two length-prefixed strings.
/// Empty when it fits, else why not.
std::string check_model_layout(std::span<const uint8_t> got, std::span<const uint8_t> own) {
  constexpr size_t kSignature = 16;  // "verilatorsave02\n" and the trailer signature
  const size_t block = VerilatedContext::serialized1Size();
  if (got.size() != own.size())
    return "the Verilated model image is " + std::to_string(got.size()) + " bytes, this model's " +
           std::to_string(own.size());
  // `own` comes from this process; should Verilator's layout ever differ, refuse every state
  // rather than guess (the round-trip tests then fail loudly).
  const std::string unknown = "this model's image has a layout this bud does not know";
  const size_t strings_at = kSignature + 1 + 8 + block;
  size_t strings_end = strings_at;
  for (int s = 0; s < 2; ++s) {
    uint32_t len = 0;
    if (strings_end + 4 > own.size()) return unknown;
    std::memcpy(&len, own.data() + strings_end, 4);
    strings_end += 4 + size_t{len};
  }
  const size_t strings = strings_end - strings_at;
  if (own.size() < strings_end + 8 + block + strings + kSignature) return unknown;
  const size_t tail_context = own.size() - kSignature - strings - block;
  // The 8 bytes before the 8-byte trailer ("vltsaved") are model data that a waveform being
  // written changes (a state saved with `wave on` differs there): not compared.
  const std::pair<size_t, size_t> fixed[] = {{0, kSignature},
                                             {kSignature + 1, kSignature + 9},
                                             {strings_at, strings_end},
                                             {tail_context - 8, tail_context},
                                             {tail_context + block, own.size() - kSignature},
                                             {own.size() - 8, own.size()}};
  for (const auto& [from, to] : fixed) {
    for (size_t i = from; i < to; ++i)
      if (got[i] != own[i])
        return "the Verilated model image differs from this model's layout at its byte " +
               std::to_string(i) + " (a signature, check value or length)";
  }
  return {};
}

}  // namespace

void NpuEmulator::save(std::vector<uint8_t>& out) const {
  StateSegments segments;
  save_segments(segments);
  segments.append_to(out);
}

void NpuEmulator::save_segments(StateSegments& out) const {
  BUD_BIND_CONTEXT();
  const auto& m = *impl_;
  out.clear();
  auto& buf = out.buffer();
  buf.insert(buf.end(), kSaveMagic, kSaveMagic + 8);
  const std::string rev = revision::kModelRevision;
  put(buf, static_cast<uint32_t>(rev.size()));
  buf.insert(buf.end(), rev.begin(), rev.end());
  const size_t len_at = buf.size();
  put(buf, uint64_t{0});  // payload length, patched below
  put(buf, uint64_t{0});  // pages_at, patched below
  put(buf, uint32_t{0});  // page count, patched below
  const size_t payload = buf.size();
  put(buf, m.cycle);
  put(buf, static_cast<uint8_t>(m.state));
  put(buf, m.last_progress);
  for (const auto& d : m.digests) {
    put(buf, d.count);
    put(buf, d.sum);
    put(buf, d.open_cmd);
    put(buf, d.open_count);
    put(buf, d.open_sum);
  }
  put(buf, static_cast<uint32_t>(m.num_forces));
  for (size_t i = 0; i < m.num_forces; ++i) {
    put(buf, m.forces[i].id);
    put(buf, m.forces[i].element);
    put(buf, m.forces[i].value.width);
    put(buf, m.forces[i].value.words);
  }
  put(buf, static_cast<uint32_t>(m.faults.size()));
  for (const auto& f : m.faults) {
    put(buf, static_cast<uint8_t>(f.done));
    put(buf, f.left);
  }
  const auto& t = m.thermal;
  put(buf, t.temp_mc);
  put(buf, t.peak_mc);
  put(buf, static_cast<uint8_t>(t.clamped));
  put(buf, t.energy_fj);
  put(buf, t.power_uw);
  put(buf, t.windows);
  put(buf, t.clamp_events);
  put(buf, t.clamped_cycles);
  // Verilated model, serialised straight into the buffer behind its length.
  const size_t model_len_at = buf.size();
  put(buf, uint64_t{0});
  {
    MemSave ms(buf);
    ms << *m.top;
  }
  const uint64_t model_len = buf.size() - model_len_at - 8;
  std::memcpy(buf.data() + model_len_at, &model_len, 8);
  m.dram.save_meta(buf);
  const size_t pages_at = buf.size();
  out.end_owned(kKeyHead, 0);

  // DRAM pages, in place: only pages written since the previous save get a new version and hash.
  std::vector<uint32_t> pages;
  m.dram.saved_pages(pages);
  std::vector<uint64_t> page_hashes(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    const uint32_t p = pages[i];
    out.add_borrowed(kKeyPage + p, m.dram.page_version(p), m.dram.page_bytes(p));
    page_hashes[i] = m.dram.page_hash(p);
  }

  const size_t tail_at = buf.size();
  m.host.save(buf);
  const uint64_t page_count = pages.size();
  const uint64_t len = (pages_at - payload) + page_count * kDramPageBytes + (buf.size() - tail_at);
  const uint64_t pages_at64 = pages_at;
  const uint32_t count32 = static_cast<uint32_t>(page_count);
  std::memcpy(buf.data() + len_at, &len, 8);
  std::memcpy(buf.data() + len_at + 8, &pages_at64, 8);
  std::memcpy(buf.data() + len_at + 16, &count32, 4);
  const uint64_t sum = state_checksum(
      hash64(std::span<const uint8_t>(buf.data(), pages_at)), page_hashes,
      hash64(std::span<const uint8_t>(buf.data() + tail_at, buf.size() - tail_at)));
  put(buf, sum);
  out.end_owned(kKeyTail, 0);
}

bool NpuEmulator::restore(std::span<const uint8_t> in, std::string& error) {
  BUD_BIND_CONTEXT();
  auto& m = *impl_;
  size_t off = 0;
  if (in.size() >= 8 && std::memcmp(in.data(), kSaveMagic, 6) == 0 &&
      std::memcmp(in.data(), kSaveMagic, 8) != 0) {
    error = "NPU state format " + std::string(reinterpret_cast<const char*>(in.data()), 8) +
            " (byte 0) is not readable by this bud, which reads " +
            std::string(kSaveMagic, 8) + ": save it again with this bud";
    return false;
  }
  if (in.size() < 8 || std::memcmp(in.data(), kSaveMagic, 8) != 0) {
    error = "not an NPU state (bad magic at byte 0)";
    return false;
  }
  off = 8;
  uint32_t rev_len = 0;
  if (!get(in, off, rev_len) || off + rev_len > in.size()) {
    error = "NPU state truncated at byte " + std::to_string(off);
    return false;
  }
  const std::string rev(reinterpret_cast<const char*>(in.data() + off), rev_len);
  off += rev_len;
  if (rev != revision::kModelRevision) {
    error = "NPU state (model revision at byte 12) is from model revision " + rev + ", this is " +
            revision::kModelRevision;
    return false;
  }
  const size_t header_at = off;
  uint64_t len = 0, pages_at = 0;
  uint32_t page_count = 0;
  if (!get(in, off, len) || !get(in, off, pages_at) || !get(in, off, page_count) ||
      len > in.size() - off || in.size() - off - len < 8) {
    error = "NPU state truncated at byte " + std::to_string(off);
    return false;
  }
  const size_t payload = off;
  const size_t payload_end = payload + len;
  if (pages_at < payload || pages_at > payload_end ||
      page_count > (payload_end - pages_at) / kDramPageBytes) {
    error = "NPU state malformed at byte " + std::to_string(header_at + 8) + ": " +
            std::to_string(page_count) + " DRAM pages at byte " + std::to_string(pages_at) +
            " do not fit in the payload (bytes " + std::to_string(payload) + ".." +
            std::to_string(payload_end) + ")";
    return false;
  }
  const size_t pages_end = pages_at + size_t{page_count} * kDramPageBytes;
  {
    std::vector<uint64_t> page_hashes(page_count);
    for (size_t i = 0; i < page_count; ++i)
      page_hashes[i] = DramModel::hash_page(in.data() + pages_at + i * kDramPageBytes);
    uint64_t sum = 0;
    std::memcpy(&sum, in.data() + payload_end, 8);
    if (sum != state_checksum(hash64(in.subspan(0, pages_at)), page_hashes,
                              hash64(in.subspan(pages_end, payload_end - pages_end)))) {
      error = "NPU state checksum mismatch (bytes 0.." + std::to_string(payload_end) + ")";
      return false;
    }
  }
  // Parse everything into temporaries first so a failure leaves the emulator unchanged.
  uint64_t cycle = 0, last_progress = 0, model_len = 0;
  uint8_t state = 0;
  std::array<StageDigest, kNumStages> digests{};
  uint32_t nf = 0;
  std::array<Force, kMaxForces> forces{};
  bool ok = get(in, off, cycle) && get(in, off, state) && get(in, off, last_progress);
  for (auto& d : digests)
    ok = ok && get(in, off, d.count) && get(in, off, d.sum) && get(in, off, d.open_cmd) &&
         get(in, off, d.open_count) && get(in, off, d.open_sum) && d.open_count <= d.count;
  ok = ok && get(in, off, nf) && nf <= kMaxForces;
  for (uint32_t i = 0; ok && i < nf; ++i) {
    const size_t force_at = off;
    ok = get(in, off, forces[i].id) && get(in, off, forces[i].element) &&
         get(in, off, forces[i].value.width) && get(in, off, forces[i].value.words);
    // A force is applied by writing the element's bytes every cycle: the signal, the element and
    // writability are checked here, as force_signal() checks them for the debugger.
    if (ok && (forces[i].id >= m.signals.size() ||
               forces[i].element >= m.signals[forces[i].id].elements ||
               !m.signals[forces[i].id].writable)) {
      error = "NPU state malformed at byte " + std::to_string(force_at) + ": force #" +
              std::to_string(i) + " names signal " + std::to_string(forces[i].id) + " element " +
              std::to_string(forces[i].element) + ", which this model cannot force";
      return false;
    }
  }
  uint32_t n_faults = 0;
  ok = ok && get(in, off, n_faults);
  if (ok && n_faults != m.faults.size()) {
    error = "NPU state was saved with " + std::to_string(n_faults) + " injected faults, this run has " +
            std::to_string(m.faults.size());
    return false;
  }
  std::vector<std::pair<uint8_t, uint64_t>> fault_progress(n_faults);
  for (auto& [done, left] : fault_progress)
    ok = ok && get(in, off, done) && get(in, off, left) && done <= 1;
  ThermalState thermal;
  uint8_t clamped = 0;
  ok = ok && get(in, off, thermal.temp_mc) && get(in, off, thermal.peak_mc) &&
       get(in, off, clamped) && clamped <= 1 && get(in, off, thermal.energy_fj) &&
       get(in, off, thermal.power_uw) && get(in, off, thermal.windows) &&
       get(in, off, thermal.clamp_events) && get(in, off, thermal.clamped_cycles);
  thermal.clamped = clamped != 0;
  ok = ok && get(in, off, model_len) && model_len <= payload_end - std::min(off, payload_end);
  if (!ok || state > static_cast<uint8_t>(RunState::Error) || last_progress > cycle) {
    error = "NPU state malformed at byte " + std::to_string(off);
    return false;
  }
  const auto model_bytes = in.subspan(off, model_len);
  {
    std::vector<uint8_t> own;
    {
      MemSave ms(own);
      ms << *m.top;
    }
    if (auto e = check_model_layout(model_bytes, own); !e.empty()) {
      error = "NPU state malformed at byte " + std::to_string(off) + ": " + e;
      return false;
    }
  }
  off += model_len;
  DramModel dram(m.config.dram);
  // The DRAM size is part of the run's configuration: a state of another size is another run
  // (and must not make restore allocate what a crafted state asks for).
  if (!dram.restore(in.subspan(0, payload_end), off, error, m.config.dram.size_bytes)) return false;
  if (off != pages_end) {
    error = "NPU state malformed at byte " + std::to_string(off) +
            ": the DRAM pages end here, the header says at byte " + std::to_string(pages_end);
    return false;
  }
  HostDriver host = m.host;
  if (!host.restore(in.subspan(0, payload_end), off, error)) return false;
  {
    MemRestore mr(model_bytes);
    mr >> *m.top;
  }
  zero_context_padding(*m.ctx);
  // A waveform being written cannot go back in time: it ends where it was (still valid).
  if (m.fst && cycle < m.cycle) {
    m.fst->close();
    m.fst.reset();
  }
  m.dram = std::move(dram);
  m.host = host;
  m.cycle = cycle;
  m.state = static_cast<RunState>(state);
  m.last_progress = last_progress;
  m.digests = digests;
  m.num_forces = nf;
  m.forces = forces;
  for (size_t i = 0; i < m.faults.size(); ++i) {
    m.faults[i].done = fault_progress[i].first != 0;
    m.faults[i].left = fault_progress[i].second;
  }
  m.recompute_next_fault();
  m.thermal = thermal;
  m.thermal_next = m.config.thermal.enabled ? (cycle / m.config.thermal.window_cycles + 1) *
                                                  m.config.thermal.window_cycles
                                            : UINT64_MAX;
  m.message.clear();
  if (m.state != RunState::Ready) m.check_state();
  return true;
}

bool NpuEmulator::seal_state(std::span<uint8_t> in) {
  size_t off = 8;
  uint32_t rev_len = 0;
  uint64_t len = 0, pages_at = 0;
  uint32_t page_count = 0;
  if (!get(in, off, rev_len) || rev_len > in.size() - off) return false;
  off += rev_len;
  if (!get(in, off, len) || !get(in, off, pages_at) || !get(in, off, page_count) ||
      len > in.size() - off || in.size() - off - len < 8)
    return false;
  const size_t payload_end = off + len;
  if (pages_at < off || pages_at > payload_end ||
      page_count > (payload_end - pages_at) / kDramPageBytes)
    return false;
  const size_t pages_end = pages_at + size_t{page_count} * kDramPageBytes;
  std::vector<uint64_t> page_hashes(page_count);
  for (size_t i = 0; i < page_count; ++i)
    page_hashes[i] = DramModel::hash_page(in.data() + pages_at + i * kDramPageBytes);
  const uint64_t sum = state_checksum(hash64(in.subspan(0, pages_at)), page_hashes,
                                      hash64(in.subspan(pages_end, payload_end - pages_end)));
  std::memcpy(in.data() + payload_end, &sum, 8);
  return true;
}

uint64_t NpuEmulator::digest() {
  BUD_BIND_CONTEXT();
  auto& m = *impl_;
  // Hash the state as if no waveform were open: tracing only changes bookkeeping flags.
  const bool activity = m.top->rootp->vlSymsp->__Vm_activity;
  const auto trace_activity = m.top->rootp->__Vm_traceActivity;
  m.normalize_trace_activity();
  // Scratch kept by the emulator: a digest (every digest interval while recording or
  // replaying) allocates nothing once the buffer has its size.
  m.digest_model.clear();
  m.digest_saver.begin(m.digest_model);
  m.digest_saver << *m.top;
  m.digest_saver.end();
  m.top->rootp->vlSymsp->__Vm_activity = activity;
  m.top->rootp->__Vm_traceActivity = trace_activity;
  const uint64_t parts[] = {hash64(m.digest_model), m.dram.digest(), m.cycle};
  if (!m.config.thermal.enabled) return hash_words(parts);
  // The thermal model's state is part of the architectural state it decides the clock from (a
  // run without the model digests as before).
  const auto& t = m.thermal;
  const uint64_t with_thermal[] = {hash_words(parts),
                                   static_cast<uint64_t>(t.temp_mc),
                                   static_cast<uint64_t>(t.peak_mc),
                                   t.clamped,
                                   t.energy_fj,
                                   t.power_uw,
                                   t.windows,
                                   t.clamp_events,
                                   t.clamped_cycles};
  return hash_words(with_thermal);
}

const std::vector<SignalInfo>& NpuEmulator::signals() const { return impl_->signals; }

std::optional<SignalId> NpuEmulator::find_signal(std::string_view name) const {
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) return std::nullopt;
  return it->second;
}

SignalValue NpuEmulator::read_signal(SignalId id, uint32_t element) const {
  const auto& m = *impl_;
  SignalValue v;
  if (id >= m.signals.size() || element >= m.signals[id].elements) return v;
  const auto& a = m.access[id];
  v.width = m.signals[id].width;
  std::memcpy(v.words.data(), a.data + size_t{element} * a.ent_bytes,
              std::min<size_t>(a.ent_bytes, sizeof(v.words)));
  return v;
}

bool NpuEmulator::deposit_signal(SignalId id, uint32_t element, const SignalValue& v) {
  auto& m = *impl_;
  if (id >= m.signals.size() || element >= m.signals[id].elements || !m.signals[id].writable)
    return false;
  m.write_signal(id, element, v);
  return true;
}

bool NpuEmulator::force_signal(SignalId id, uint32_t element, const SignalValue& v) {
  auto& m = *impl_;
  if (!deposit_signal(id, element, v)) return false;
  for (size_t i = 0; i < m.num_forces; ++i) {
    if (m.forces[i].id == id && m.forces[i].element == element) {
      m.forces[i].value = v;
      return true;
    }
  }
  if (m.num_forces == kMaxForces) return false;
  m.forces[m.num_forces++] = {id, element, v};
  return true;
}

void NpuEmulator::release_signal(SignalId id, uint32_t element) {
  auto& m = *impl_;
  for (size_t i = 0; i < m.num_forces; ++i) {
    if (m.forces[i].id == id && m.forces[i].element == element) {
      m.forces[i] = m.forces[--m.num_forces];
      return;
    }
  }
}

const std::vector<MemoryInfo>& NpuEmulator::memories() const { return impl_->memories; }

bool NpuEmulator::read_memory(std::string_view memory, uint64_t offset,
                              std::span<uint8_t> out) const {
  return impl_->read_memory_impl(memory, offset, out);
}

bool NpuEmulator::Impl::read_memory_impl(std::string_view memory, uint64_t offset,
                                         std::span<uint8_t> out) const {
  const auto& m = *this;
  if (memory == "dram") {
    if (offset > UINT32_MAX) return false;
    return m.dram.read(static_cast<uint32_t>(offset), out);
  }
  for (int b = 0; b < isa::kNumBuffers; ++b) {
    if (memory != isa::buffer_name(static_cast<isa::Buffer>(b))) continue;
    const auto g = kArray.geometry(static_cast<isa::Buffer>(b));
    const auto& a = m.spads[b];
    if (offset + out.size() > uint64_t{g.entry_bytes} * g.entries || !a.data) return false;
    // Scratchpad storage pads each entry to ent_bytes (whole 32-bit words for wide entries).
    for (size_t i = 0; i < out.size(); ++i) {
      const uint64_t byte = offset + i;
      out[i] = a.data[(byte / g.entry_bytes) * a.ent_bytes + byte % g.entry_bytes];
    }
    return true;
  }
  return false;
}

bool NpuEmulator::write_memory(std::string_view memory, uint64_t offset,
                               std::span<const uint8_t> in) {
  return impl_->write_memory_impl(memory, offset, in);
}

bool NpuEmulator::Impl::write_memory_impl(std::string_view memory, uint64_t offset,
                                          std::span<const uint8_t> in) {
  auto& m = *this;
  if (memory == "dram") {
    if (offset > UINT32_MAX) return false;
    return m.dram.write(static_cast<uint32_t>(offset), in);
  }
  for (int b = 0; b < isa::kNumBuffers; ++b) {
    if (memory != isa::buffer_name(static_cast<isa::Buffer>(b))) continue;
    const auto g = kArray.geometry(static_cast<isa::Buffer>(b));
    const auto& a = m.spads[b];
    if (offset + in.size() > uint64_t{g.entry_bytes} * g.entries || !a.data) return false;
    for (size_t i = 0; i < in.size(); ++i) {
      const uint64_t byte = offset + i;
      a.data[(byte / g.entry_bytes) * a.ent_bytes + byte % g.entry_bytes] = in[i];
    }
    return true;
  }
  return false;
}

uint64_t NpuEmulator::counter(int index) const {
  if (index < 0 || index >= isa::kNumCounters || !impl_->pmu) return 0;
  return impl_->pmu[index];
}

StageDigest NpuEmulator::stage_digest(Stage s) const {
  return impl_->digests[static_cast<int>(s)];
}
void NpuEmulator::set_cycle_hook(CycleHook* hook) { impl_->hook = hook; }
void NpuEmulator::set_input_recorder(InputRecorder* recorder) { impl_->recorder = recorder; }
void NpuEmulator::set_txn_observer(TxnObserver* observer) { impl_->observer = observer; }
const DramModel& NpuEmulator::dram() const { return impl_->dram; }
const HostDriver& NpuEmulator::host() const { return impl_->host; }
const NpuConfig& NpuEmulator::config() const { return impl_->config; }

uint32_t NpuEmulator::end_code() const {
  auto id = find_signal("fetch.end_code");
  return id ? static_cast<uint32_t>(read_signal(*id).low()) : 0;
}

std::string NpuEmulator::engine_report() const {
  auto val = [&](const char* name, uint32_t el = 0) -> std::string {
    auto id = find_signal(name);
    return id ? std::to_string(read_signal(*id, el).low()) : "?";
  };
  std::string r;
  r += "  fetch:   running=" + val("fetch.running_q") + " head=" + val("fetch.head_q") +
       " fptr=" + val("fetch.fptr") + " inflight=" + val("fetch.inflight") + "\n";
  r += "  load:    state=" + val("load.state") + " cmd=#" + val("load.id_q") +
       " queue=" + val("ldq_level") + "\n";
  r += "  compute: state=" + val("compute.state") + " cmd=#" + val("compute.id_q") +
       " queue=" + val("cmpq_level") + "\n";
  r += "  store:   state=" + val("store.state") + " cmd=#" + val("store.id_q") +
       " queue=" + val("stq_level") + "\n";
  r += "  tokens:  L->C=" + val("tokens", 0) + " C->L=" + val("tokens", 1) +
       " C->S=" + val("tokens", 2) + " S->C=" + val("tokens", 3);
  return r;
}

const DesignInfo& NpuEmulator::describe() const { return impl_->design_info; }

std::string NpuEmulator::take_messages() {
  std::string out;
  out.swap(impl_->output);
  return out;
}

uint64_t NpuEmulator::memory_digest(std::string_view memory) const {
  if (memory == "dram") return impl_->dram.memory_digest();
  return Emulator::memory_digest(memory);
}

uint32_t NpuEmulator::model_counter_count() const { return impl_->pmu_elements; }

const void* NpuEmulator::counter_address(int index) const {
  if (index < 0 || index >= isa::kNumCounters || !impl_->pmu) return nullptr;
  return impl_->pmu + index;
}

const void* NpuEmulator::signal_address(SignalId id, uint32_t element, uint32_t& bytes) const {
  const auto& m = *impl_;
  if (id >= m.signals.size() || element >= m.signals[id].elements) return nullptr;
  const auto& a = m.access[id];
  if (a.ent_bytes == 0 || a.ent_bytes > 8) return nullptr;  // wide values: no direct read
  bytes = a.ent_bytes;
  return a.data + size_t{element} * a.ent_bytes;
}

const uint64_t* NpuEmulator::cycle_address() const { return &impl_->cycle; }

std::string NpuEmulator::add_fault(const FaultSpec& f) {
  auto& m = *impl_;
  Impl::ActiveFault a;
  a.spec = f;
  if (f.cycle < m.cycle)
    return "fault " + f.to_string() + ": cycle " + std::to_string(f.cycle) +
           " is in the past (now " + std::to_string(m.cycle) + ")";
  switch (f.kind) {
    case FaultKind::Flip:
    case FaultKind::Stuck: {
      auto id = find_signal(f.target);
      if (!id) {
        std::string near;
        for (const auto& s : m.signals)
          if (s.name.find(f.target) != std::string::npos || f.target.find(s.name) != std::string::npos)
            near += (near.empty() ? "" : ", ") + s.name;
        return "fault " + f.to_string() + ": unknown signal '" + f.target + "'" +
               (near.empty() ? " (see `info signals` in bud debug)" : " (did you mean " + near + "?)");
      }
      const auto& info = m.signals[*id];
      if (!info.writable) return "fault " + f.to_string() + ": " + f.target + " is an output port";
      if (f.element >= info.elements)
        return "fault " + f.to_string() + ": element " + std::to_string(f.element) +
               " out of range (" + f.target + " has " + std::to_string(info.elements) + ")";
      if (info.elements > 1 && !f.has_element)
        return "fault " + f.to_string() + ": " + f.target + " is an array; say " + f.target +
               "[ELEMENT][BIT]";
      if (f.bit >= info.width)
        return "fault " + f.to_string() + ": bit " + std::to_string(f.bit) + " out of range (" +
               f.target + " has " + std::to_string(info.width) + " bits)";
      a.id = *id;
      break;
    }
    case FaultKind::MemFlip: {
      const MemoryInfo* mem = nullptr;
      for (const auto& x : m.memories)
        if (x.name == f.target) mem = &x;
      if (!mem) return "fault " + f.to_string() + ": unknown memory '" + f.target + "' (dram, inp, wgt, acc, out)";
      if (f.addr >= mem->size_bytes)
        return "fault " + f.to_string() + ": address beyond " + f.target + " (" +
               std::to_string(mem->size_bytes) + " bytes)";
      break;
    }
    default:
      break;
  }
  // Keep faults in cycle order (stable) so equal runs apply them identically.
  auto pos = std::upper_bound(m.faults.begin(), m.faults.end(), f.cycle,
                              [](uint64_t c, const Impl::ActiveFault& x) { return c < x.spec.cycle; });
  m.faults.insert(pos, a);
  m.recompute_next_fault();
  return {};
}

std::vector<FaultSpec> NpuEmulator::faults() const {
  std::vector<FaultSpec> out;
  for (const auto& f : impl_->faults) out.push_back(f.spec);
  return out;
}

// The assertion port names engines by their index in rtl/npu_facts.toml `engines`, which is
// also the order of the dataflow stages.
static_assert(static_cast<int>(isa::Engine::Fetch) == static_cast<int>(Stage::Fetch) &&
              static_cast<int>(isa::Engine::Load) == static_cast<int>(Stage::Load) &&
              static_cast<int>(isa::Engine::Gemm) == static_cast<int>(Stage::Gemm) &&
              static_cast<int>(isa::Engine::Post) == static_cast<int>(Stage::Post) &&
              static_cast<int>(isa::Engine::Store) == static_cast<int>(Stage::Store) &&
              isa::kNumEngines == kNumStages);

std::optional<AssertionReport> NpuEmulator::assertion() const {
  if (impl_->top->assert_code == 0) return std::nullopt;
  return impl_->assertion_report();
}

std::vector<EngineStatus> NpuEmulator::engines() const {
  auto val = [&](const char* name, uint32_t el = 0) -> uint64_t {
    auto id = find_signal(name);
    return id ? read_signal(*id, el).low() : 0;
  };
  // Bit masks read as hex; std::to_string after "0x" printed 0xff as "0x255".
  auto hex = [](uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return std::string(buf);
  };
  std::vector<EngineStatus> out;
  EngineStatus f;
  f.name = "fetch";
  const bool running = val("fetch.running_q") != 0;
  f.state = running ? "running" : "stopped";
  f.detail = "head=" + std::to_string(val("fetch.head_q")) +
             " fptr=" + std::to_string(val("fetch.fptr")) +
             " inflight=" + std::to_string(val("fetch.inflight"));
  out.push_back(f);
  auto engine = [&](const char* name, const char* prefix,
                    std::span<const std::string_view> states, const char* queue,
                    const std::string& detail) {
    EngineStatus e;
    e.name = name;
    const uint64_t st = val((std::string(prefix) + ".state").c_str());
    e.state = st < states.size() ? std::string(states[st]) : "?";
    if (st != 0) e.cmd_id = static_cast<uint32_t>(val((std::string(prefix) + ".id_q").c_str()));
    e.queue_level = static_cast<uint32_t>(val(queue));
    e.queue_depth = 8;
    e.detail = detail;
    out.push_back(e);
  };
  const std::string tokens = "tokens L->C=" + std::to_string(val("tokens", 0)) +
                             " C->L=" + std::to_string(val("tokens", 1)) +
                             " C->S=" + std::to_string(val("tokens", 2)) +
                             " S->C=" + std::to_string(val("tokens", 3));
  engine("load", "load", isa::kLoadStateNames, "ldq_level",
         "rows_left=" + std::to_string(val("load.y_left")) + " tags_busy=" +
             hex(val("load.tag_busy")));
  engine("compute", "compute", isa::kComputeStateNames, "cmpq_level",
         "m_left=" + std::to_string(val("compute.m_left")) + " " + tokens);
  engine("store", "store", isa::kStoreStateNames, "stq_level",
         "tags_busy=" + hex(val("store.tag_busy")));
  return out;
}

std::vector<CsrInfo> NpuEmulator::csrs() const {
  std::vector<CsrInfo> out;
  for (const auto& c : isa::kCsrs) out.push_back({std::string(c.name), c.addr});
  return out;
}

std::optional<uint32_t> NpuEmulator::read_csr(uint32_t addr) {
  if (addr > 0xFF || addr % 4 != 0) return std::nullopt;
  BUD_BIND_CONTEXT();
  auto& m = *impl_;
  // CSR reads are combinational and have no side effects: present the address with valid low,
  // settle, read, and put the inputs back. No clock edge happens.
  const auto saved_valid = m.top->csr_valid;
  const auto saved_addr = m.top->csr_addr;
  m.top->csr_valid = 0;
  m.top->csr_addr = static_cast<uint8_t>(addr);
  m.top->eval();
  const uint32_t v = m.top->csr_rdata;
  m.top->csr_valid = saved_valid;
  m.top->csr_addr = saved_addr;
  m.top->eval();
  return v;
}

std::string NpuEmulator::trace_open(const std::string& path) {
  BUD_BIND_CONTEXT();
  auto& m = *impl_;
  if (m.fst) return "a waveform is already being written";
  auto fst = std::make_unique<VerilatedFstC>();
  m.top->trace(fst.get(), 99);
  fst->open(path.c_str());
  if (!fst->isOpen()) return "cannot open " + path + " for writing";
  m.fst = std::move(fst);
  m.fst->dump(m.cycle);
  return {};
}

void NpuEmulator::trace_close() {
  auto& m = *impl_;
  if (!m.fst) return;
  m.fst->close();
  m.fst.reset();
  // Tracing clears Verilator's activity flags at each dump; without a trace they stay set. Put
  // them back so a traced stretch leaves no mark on the state (digests, checkpoints).
  m.normalize_trace_activity();
}

bool NpuEmulator::tracing() const { return impl_->fst != nullptr; }

#ifdef BUD_NPU_VARIANT
#define BUD_CAT2(a, b) a##b
#define BUD_CAT(a, b) BUD_CAT2(a, b)
std::unique_ptr<Emulator> BUD_CAT(make_npu_emulator_, BUD_NPU_VARIANT)(const EmulatorConfig& c) {
  return std::make_unique<NpuEmulator>(c);
}
#endif

}  // namespace bud::emu
