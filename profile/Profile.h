// The figures of a profiled run, computed from the exact attribution (profile/Attribution): per
// layer and per layer type (cycles, MACs, % of peak, DRAM traffic, bandwidth, arithmetic
// intensity, memory-stall fraction), the top-down attribution of MAC slots, and the bottleneck
// ranking with the triage rule that fired. Formulas and rules: docs/profiling.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emu/run/RunJob.h"
#include "profile/Attribution.h"

namespace bud::profile {

/// Top-down classes of MAC slots (array_macs per cycle): every slot is in exactly one.
enum class TopClass : uint8_t {
  Useful,         ///< a MAC on real data
  ComputeHazard,  ///< the compute engine was busy but not with useful MACs
  Memory,         ///< GEMM waited for operands while the load engine worked on DRAM
  Scheduling,     ///< GEMM waited on tokens/commands for reasons other than DRAM
  Host,           ///< no program running (host orchestration: start, doorbell, read-back)
  Throttled,      ///< clock-enable clamp (DVFS/thermal)
  Precision,      ///< slots a lower-precision mode cannot issue (BF16: half of each iteration)
  Unattributed,   ///< a slot no rule explains
  Count,
};
inline constexpr int kNumTopClasses = static_cast<int>(TopClass::Count);

/// Sub-classes (the drill-down level), each under one TopClass.
enum class SubClass : uint8_t {
  Useful,
  Padding,         ///< issued - useful: lanes of a partial 8x8 block
  Pipeline,        ///< GEMM held, active, no MAC issued: token pop, pipeline drain, push
  BankConflict,    ///< gemm.stall_mem
  PostOccupancy,   ///< the compute engine ran a POST (gemm.starve while POST held)
  DramWait,        ///< memory: share of GEMM's waits for loads while load waited on DRAM
  LoadTransfer,    ///< memory: share while load was transferring (bandwidth/entry rate)
  UnderBuffering,  ///< scheduling: share while load waited on compute's release tokens
  LoadStarved,     ///< scheduling: share while load had no command or could not hand off
  SyncDrain,       ///< scheduling: compute queue empty while fetch held a SYNC/END (drain)
  CommandFetch,    ///< scheduling: compute queue empty while fetch waited for ring reads
  Starvation,      ///< scheduling: compute queue empty otherwise (gemm.starve, nothing held)
  Drain,           ///< scheduling: after the compute engine's last command (the tail)
  BackPressure,    ///< scheduling: gemm.stall_out (token FIFO full)
  TokenWait,       ///< scheduling: waited for a dependency token no load activity explains
                   ///< (per engine: every `stall_dep` of load, gemm, post, store)
  Idle,            ///< host: gemm.idle
  Throttled,       ///< gemm.throttled
  Precision,       ///< macs_issued_bf16: the M/2 slots of each BF16 iteration
  Unattributed,
  Count,
};
inline constexpr int kNumSubClasses = static_cast<int>(SubClass::Count);

const char* top_class_name(TopClass c);  ///< "useful", "compute_hazard", "memory", ...
const char* sub_class_name(SubClass c);  ///< "padding", "dram_wait", ...
TopClass parent_of(SubClass c);

/// Integer MAC-slot counts of one scope (layer, type, whole model).
struct TopDown {
  uint64_t slots = 0;  ///< array_macs x gemm engine-cycles of the scope
  std::array<uint64_t, kNumSubClasses> sub{};
  uint64_t top(TopClass c) const;
  /// Each top class in basis points of `slots`, rounded by largest remainder so that they sum
  /// to exactly 10000 (when slots > 0).
  std::array<uint32_t, kNumTopClasses> basis_points() const;
  TopDown& operator+=(const TopDown& o);
};

/// Counter growth of one scope, by engine and class (attributed engine-cycles).
using EngineClasses = std::array<std::array<uint64_t, isa::kNumClasses>, isa::kNumEngines>;

/// Figures of one layer (or one layer type, or the whole model).
struct ScopeMetrics {
  std::string name;  ///< layer name, type name ("dense", ...) or "model"
  std::string kind;  ///< layer type
  /// Layer: "int8" or "bf16" (its peak is the array's MACs per cycle, half for BF16); else empty.
  std::string precision;
  int layers = 0;    ///< layers in the scope
  /// Layer: edge cycles from its first command's dispatch to its last command's retirement
  /// (inclusive); type/model: the sum over its layers.
  uint64_t first_dispatch = 0, last_retire = 0, cycles = 0;
  EngineClasses engine{};  ///< attributed engine-cycles per engine and class
  uint64_t macs_useful = 0, macs_issued = 0;
  uint64_t macs_issued_bf16 = 0;  ///< the part of macs_issued in BF16 GEMMs
  uint64_t dram_rd_bytes = 0, dram_wr_bytes = 0;
  double peak_fraction = 0;          ///< macs_useful / (cycles x array_macs)
  double model_mac_fraction = 0;     ///< macs_useful / the model's useful MACs
  double bandwidth = 0;              ///< (read + written bytes) / cycles
  double intensity = 0;              ///< macs_useful / (read + written bytes)
  double memory_stall_fraction = 0;  ///< top-down memory slots / slots
  TopDown topdown;
  /// Bank conflicts the scope's commands lost: load's writes (INP, WGT, ACC), store's OUT reads.
  uint64_t bank_conflicts_load = 0, bank_conflicts_store = 0;
  /// Scratchpad entry accesses, in the PMU's order (inp rd, inp wr, wgt rd, wgt wr, acc rd,
  /// acc wr, out rd, out wr), and commands retired (load, gemm, post, store, sync, end).
  std::array<uint64_t, 8> spad{};
  std::array<uint64_t, 6> retired{};
  /// Top-down per engine: every engine-cycle of the scope in exactly one sub-class
  /// (`slots` = the engine's attributed cycles; docs/profiling.md "Per-engine top-down").
  std::array<TopDown, isa::kNumEngines> engine_topdown{};
  uint64_t engine_cycles(isa::Engine e) const;
};

/// A layer in the bottleneck ranking.
struct Bottleneck {
  int layer = 0;
  uint64_t lost_cycles = 0;  ///< (slots - useful slots) / array_macs: cycles the array could use
  TopClass dominant = TopClass::Useful;  ///< the largest non-useful class
  SubClass dominant_sub = SubClass::Useful;
  std::string rule;  ///< the triage rule that fired (docs/profiling.md)
  std::string advice;
  std::vector<std::pair<std::string, uint64_t>> evidence;  ///< counter name -> layer's value
  /// A memory loss: what the roofline's projection says binds the layer's memory time,
  /// "latency" or "bandwidth" (annotate_bounds); empty otherwise.
  std::string bound;
};

/// Everything `bud profile` reports but the roofline.
struct Profile {
  uint32_t array_macs = 0;
  uint64_t cycles = 0;
  std::vector<ScopeMetrics> layers;  ///< program order
  std::vector<ScopeMetrics> types;   ///< by layer type, in order of first appearance
  ScopeMetrics model;                ///< all layers plus the tail
  ScopeMetrics tail;                 ///< cycles after each engine's last command
  std::vector<Bottleneck> ranking;   ///< by lost cycles, largest first (ties: program order)
};

/// DRAM bytes a command reads: a LOAD's entries x entry size (of `array`, the variant the program
/// was lowered for), plus the 32 bytes fetch reads it with (every command).
uint64_t command_read_bytes(const isa::Command& c,
                            const isa::ArrayConfig& array = isa::default_array());

/// The triage rules' names, in the order they are tried (docs/profiling.md lists each).
std::vector<std::string> triage_rule_names();

/// A triage rule of docs/profiling.md: its name, advice and the counters it shows as evidence.
struct TriageRuleInfo {
  std::string rule;
  std::string advice;
  std::vector<std::string> evidence;  ///< "<engine>.<class>", "dram_rd_bytes", "macs_*"
};
/// The first rule of the triage flow that fires for a loss in `top` whose largest sub-class is
/// `sub` ("T0 at peak" for TopClass::Useful).
TriageRuleInfo triage_rule(TopClass top, SubClass sub);
/// A scope's value of an evidence counter named as in TriageRuleInfo::evidence (0 if unknown).
uint64_t evidence_value(const ScopeMetrics& m, std::string_view name);

/// The bottleneck ranking of `layers` (program order): each layer's lost cycles, dominant
/// class and sub-class and the triage rule that fires, largest loss first (ties: program order).
std::vector<Bottleneck> rank_layers(const std::vector<ScopeMetrics>& layers, uint32_t array_macs);

/// Computes the profile of a finished attributed run of `program`.
Profile build_profile(const Attribution& a, const workload::Program& program,
                      const run::RunReport& report);

/// Top classes whose share is at least this (basis points) are drilled into (TMA's threshold).
inline constexpr uint32_t kDrillThresholdBp = 1000;

}  // namespace bud::profile
