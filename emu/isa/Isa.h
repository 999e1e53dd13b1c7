// The NPU's architectural contract in C++: command encoding, CSR addresses, scratchpad geometry
// and the PMU counter list. docs/isa.md and docs/counters.md describe the same facts; the RTL
// (rtl/npu_pkg.sv) mirrors them. Change all of them together.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bud::isa {

/// Bytes in one command (four little-endian 64-bit words).
inline constexpr uint32_t kCommandBytes = 32;
/// MAC array geometry: one 8-element input row times an 8x8 weight block per cycle.
inline constexpr uint32_t kBlock = 8;
inline constexpr uint32_t kArrayMacs = kBlock * kBlock;
/// Largest DRAM request in bytes.
inline constexpr uint32_t kMaxRequestBytes = 64;

enum class Opcode : uint8_t { Load = 1, Gemm = 2, Post = 3, Store = 4, Sync = 5, End = 6 };
/// Name of an opcode ("LOAD"...), or "ILLEGAL(n)".
std::string opcode_name(uint8_t opcode);
/// Parses "LOAD", "load", "gemm"... into an opcode.
std::optional<Opcode> parse_opcode(std::string_view name);

enum class Buffer : uint8_t { Inp = 0, Wgt = 1, Acc = 2, Out = 3 };
inline constexpr int kNumBuffers = 4;
const char* buffer_name(Buffer b);  // "inp", "wgt", "acc", "out"

/// Geometry of one scratchpad.
struct BufferGeometry {
  uint32_t entry_bytes;  ///< bytes per entry
  uint32_t entries;      ///< number of entries
  uint32_t banks;        ///< banks, interleaved on the low entry-address bits
};
inline constexpr std::array<BufferGeometry, kNumBuffers> kBuffers = {{
    {8, 2048, 4},   // INP: 8 x int8
    {64, 512, 4},   // WGT: 8x8 int8 block, byte o*8+i = W[k=i][n=o]
    {32, 2048, 2},  // ACC: 8 x int32
    {8, 2048, 4},   // OUT: 8 x int8
}};
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
  uint16_t m = 0, k = 0, n = 0;
  // POST
  uint16_t out_base = 0, count = 0;  // acc_base shared with GEMM
  int16_t mult = 1;
  uint8_t shift = 0;
  int8_t clamp_lo = -128, clamp_hi = 127;
  // END
  uint32_t end_code = 0;

  std::array<uint64_t, 4> encode() const;
  static Command decode(const std::array<uint64_t, 4>& words);
  /// One-line human form, e.g. "#12 L1 GEMM inp=0 wgt=0 acc=0 M=8 K=64 N=16 reset pop_prev".
  std::string to_string() const;
};

/// Whether an opcode field value is one of the six legal opcodes.
inline bool is_legal_opcode(uint8_t op) { return op >= 1 && op <= 6; }

/// CSR byte addresses (docs/isa.md, "CSR map").
namespace csr {
inline constexpr uint32_t kId = 0x00, kConfig = 0x04, kCtrl = 0x08, kStatus = 0x0C, kIrq = 0x10,
                          kRingBase = 0x14, kRingSize = 0x18, kRingHead = 0x1C, kRingTail = 0x20,
                          kDoorbell = 0x24, kEndCode = 0x28, kErrInfo = 0x2C, kHeadReset = 0x30,
                          kPmuCtrl = 0x40, kPmuSel = 0x44, kPmuLo = 0x48, kPmuHi = 0x4C,
                          kPmuCount = 0x50;
inline constexpr uint32_t kIdValue = 0x4E505531;
inline constexpr uint32_t kStatusRunning = 1, kStatusDone = 2, kStatusError = 4;
inline constexpr uint32_t kPmuEnable = 1, kPmuClear = 2, kPmuSnapshot = 4;
}  // namespace csr

/// Engines whose every cycle the PMU classifies.
enum class Engine : uint8_t { Fetch = 0, Load = 1, Gemm = 2, Post = 3, Store = 4 };
inline constexpr int kNumEngines = 5;
/// Cycle classes; exactly one per engine per cycle, so they sum to `cycles`.
enum class CycleClass : uint8_t {
  Active = 0, StallMem = 1, StallDep = 2, Starve = 3, StallOut = 4, Throttled = 5, Idle = 6
};
inline constexpr int kNumClasses = 7;
const char* engine_name(Engine e);        // "fetch", "load", "gemm", "post", "store"
const char* class_name(CycleClass c);     // "active", "stall_mem", ...

/// PMU counter indices. Engine classes first (engine*7 + class), then the global counters.
enum class Counter : uint16_t {
  // 0..34: engine classes
  Cycles = 35,
  MacsIssued,
  MacsUseful,
  DramRdBytes,
  DramWrBytes,
  DramRdReqs,
  DramWrReqs,
  DramRdLatencySum,
  SpadInpRd,
  SpadInpWr,
  SpadWgtRd,
  SpadWgtWr,
  SpadAccRd,
  SpadAccWr,
  SpadOutRd,
  SpadOutWr,
  BankConflictsInp,
  BankConflictsWgt,
  BankConflictsAcc,
  BankConflictsOut,
  RetiredLoad,
  RetiredGemm,
  RetiredPost,
  RetiredStore,
  RetiredSync,
  RetiredEnd,
  Saturations,
};
inline constexpr int kNumCounters = 62;
inline constexpr uint16_t class_counter(Engine e, CycleClass c) {
  return static_cast<uint16_t>(static_cast<int>(e) * kNumClasses + static_cast<int>(c));
}
/// Counter name: "load.stall_mem", "cycles", "macs_useful", "dram_rd_bytes", ...
const std::string& counter_name(int index);
/// Index of a counter name, if it is one.
std::optional<int> find_counter(std::string_view name);

}  // namespace bud::isa
