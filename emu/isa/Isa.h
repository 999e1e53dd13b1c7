// The NPU's architectural contract in C++: command encoding and lookups over the shared facts.
// The facts themselves (opcodes, buffers, engines, cycle classes, counters, CSRs, engine states,
// assertion codes) are generated at build time from rtl/npu_facts.toml into bud/NpuFacts.h, as
// are the RTL package and the tables of docs/isa.md and docs/counters.md: edit the table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bud/NpuFacts.h"

namespace bud::isa {

/// Bytes in one command (four little-endian 64-bit words).
inline constexpr uint32_t kCommandBytes = 32;
/// MACs per cycle of the default array variant (npu8: 64). Code that runs on any variant takes
/// an ArrayConfig (the design's, emu/run/Designs.h design_array()) instead.
inline constexpr uint32_t kArrayMacs = kArrayVariants[0].macs();
/// Largest DRAM request in bytes.
inline constexpr uint32_t kMaxRequestBytes = kDramRequestBytes;

/// The default array variant (rtl/npu_facts.toml `array.default`, npu8).
inline constexpr const ArrayConfig& default_array() { return kArrayVariants[0]; }
/// The variant of that name ("npu16"), or nullptr.
const ArrayConfig* find_array_variant(std::string_view name);
/// "npu8, npu16, npu32": every variant of the table, default first.
std::string array_variant_names();
/// The array a design describes in its CONFIG ([7:0] rows, [15:8] cols) and SPAD_CFG (log2
/// depths, 4 bits per buffer) CSRs; named after the table variant of that geometry, "custom" if
/// none has it.
ArrayConfig array_from_csrs(uint32_t config, uint32_t spad_cfg);

/// Name of an opcode ("LOAD"...), or "ILLEGAL(n)".
std::string opcode_name(uint8_t opcode);
/// Parses "LOAD", "load", "gemm"... into an opcode.
std::optional<Opcode> parse_opcode(std::string_view name);

const char* buffer_name(Buffer b);  // "inp", "wgt", "acc", "out"

inline const BufferGeometry& geometry(Buffer b) { return kBuffers[static_cast<int>(b)]; }

/// A decoded command. Fields not used by an opcode are zero. encode(decode(x)) == x for every
/// command whose reserved bits are zero.
struct Command {
  Opcode opcode = Opcode::Sync;
  uint8_t raw_opcode = 0;  ///< the 4-bit field as fetched (may be illegal)
  bool pop_prev = false, pop_next = false, push_prev = false, push_next = false;
  uint16_t layer = 0;
  uint32_t cmd_id = 0;
  // LOAD / STORE
  uint32_t dram_addr = 0;
  uint16_t sram_base = 0;
  Buffer buffer = Buffer::Inp;
  uint16_t y_size = 0, x_size = 0;
  uint32_t x_stride = 0;
  // GEMM
  uint16_t inp_base = 0, wgt_base = 0, acc_base = 0;
  bool reset = false;
  bool bf16 = false;  ///< BF16 operands (R/2 lanes per INP entry), fp32 accumulators
  uint16_t m = 0, k = 0, n = 0;
  // POST
  uint16_t out_base = 0, count = 0;  // acc_base shared with GEMM
  int16_t mult = 1;  ///< int32 -> int8: the multiplier; float path: the bf16 scale's bits
  uint8_t shift = 0;
  int8_t clamp_lo = -128, clamp_hi = 127;
  /// The float path (either flag): ACC lanes are fp32 (src_fp32) or int32 converted to fp32,
  /// multiplied by the bf16 scale in `mult`, then converted to int8 (clamp applies) or to bf16
  /// (dst_bf16: two OUT entries per ACC entry; `relu` zeroes negatives).
  bool src_fp32 = false, dst_bf16 = false, relu = false;
  bool float_post() const { return src_fp32 || dst_bf16; }
  /// Per-channel requantisation (docs/isa.md, "Per-channel POST"): lane l of ACC entry j takes
  /// its multiplier and shift (float path: its bf16 scale) from lane l of the scale entry
  /// `scale_base + j mod period` instead of `mult`/`shift`.
  bool per_channel = false;
  uint16_t scale_base = 0;
  uint16_t period = 0;  ///< scale entries; 0 reads as 1
  /// The scale entries a per-channel POST reads: min(max(period, 1), count); 0 otherwise.
  uint32_t scale_entries() const {
    if (!per_channel) return 0;
    const uint32_t p = period == 0 ? 1u : period;
    return p < count ? p : count;
  }
  uint16_t scale_bits() const { return static_cast<uint16_t>(mult); }
  /// OUT entries a POST writes: count, or 2 x count for a BF16 output.
  uint32_t out_entries() const { return dst_bf16 ? 2u * count : count; }
  // END
  uint32_t end_code = 0;

  std::array<uint64_t, 4> encode() const;
  static Command decode(const std::array<uint64_t, 4>& words);
  /// One-line human form, e.g. "#12 L1 GEMM inp=0 wgt=0 acc=0 M=8 K=64 N=16 reset pop_prev".
  std::string to_string() const;
};

/// Whether an opcode field value is a legal opcode.
inline bool is_legal_opcode(uint8_t op) {
  for (const uint8_t v : kOpcodeValues)
    if (v == op) return true;
  return false;
}

const char* engine_name(Engine e);        // "fetch", "load", "gemm", "post", "store"
const char* class_name(CycleClass c);     // "active", "stall_mem", ...

inline constexpr uint16_t class_counter(Engine e, CycleClass c) {
  return static_cast<uint16_t>(static_cast<int>(e) * kNumClasses + static_cast<int>(c));
}
/// Counter name: "load.stall_mem", "cycles", "macs_useful", "dram_rd_bytes", ...
const std::string& counter_name(int index);
/// Index of a counter name, if it is one.
std::optional<int> find_counter(std::string_view name);

}  // namespace bud::isa
