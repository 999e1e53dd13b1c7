// Stage-boundary transactions: what each stage of the dataflow hands to the next. The RTL exposes
// them on its observation ports, the golden model produces them untimed; comparing the two per
// stage is how bud checks and localizes failures.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace bud::emu {

/// Stages in dataflow order (the bisect walks them in this order).
enum class Stage : uint8_t { Fetch = 0, Load = 1, Gemm = 2, Post = 3, Store = 4 };
inline constexpr int kNumStages = 5;
const char* stage_name(Stage s);  // "fetch", "load", "gemm", "post", "store"

/// One transaction at a stage boundary.
/// - Fetch: a command dispatched/retired; `data` = its 32 bytes, addr = 0, size = 32.
/// - Load:  a scratchpad entry written; `buffer`, `addr` = entry index, size = entry bytes. An
///   entry wider than a DRAM request (64 bytes: WGT from npu16 up, ACC on npu32) is written in
///   64-byte segments, one transaction each, `segment` = its index.
/// - Gemm:  an ACC entry written; addr = entry index, size = ACC entry bytes (32 on npu8; on
///   npu32 two 64-byte segments, as for Load).
/// - Post:  an OUT entry written; addr = entry index, size = OUT entry bytes (8 on npu8).
/// - Store: a DRAM write request; buffer = OUT (its source), addr = byte address, size = bytes
///   (8..64).
/// Bytes of `data` beyond `size` are zero.
struct StageTxn {
  Stage stage = Stage::Fetch;
  uint8_t buffer = 0;
  uint8_t segment = 0;  ///< 64-byte segment of a wider entry (0 for entries of at most 64 bytes)
  uint16_t size = 0;
  uint32_t cmd_id = 0;
  uint32_t addr = 0;
  uint64_t cycle = 0;  ///< cycle of the rising edge it took effect at (0 from the golden model)
  std::array<uint8_t, 64> data{};

  /// Hash of everything but `cycle`: equal transactions hash equal in RTL and golden model.
  uint64_t hash() const;
  /// Human form: "gemm #12 acc[40] = [1, -3, ...]".
  std::string to_string() const;
  bool same_content(const StageTxn& o) const;
};

/// Order-independent summary of a stream of transactions of one stage: count and the sum (mod
/// 2^64) of their hashes. Equal multisets give equal digests whatever the order, so memory-timing
/// reordering does not matter while a changed, missing or extra transaction does.
///
/// A stage produces its commands' transactions grouped by command, in program order, but in any
/// order inside a command (DRAM responses return out of order). A digest taken while a command is
/// still producing therefore covers an unknown subset of that command's transactions: the `open_*`
/// fields split it into a closed part (every command before `open_cmd`, which must equal a prefix
/// of the golden model's stream) and the open part (the transactions of `open_cmd` so far, whose
/// identity only the sum witnesses). Equality compares the whole multiset (count and sum) only.
struct StageDigest {
  uint64_t count = 0;
  uint64_t sum = 0;
  uint32_t open_cmd = 0;     ///< command of the latest transaction (highest command id seen)
  uint64_t open_count = 0;   ///< how many of `count` belong to `open_cmd`
  uint64_t open_sum = 0;     ///< their part of `sum`
  void add(const StageTxn& t) {
    const uint64_t h = t.hash();
    if (count == 0 || t.cmd_id > open_cmd) {
      open_cmd = t.cmd_id;
      open_count = 0;
      open_sum = 0;
    }
    // A transaction of an earlier command (never seen in a correct run) joins the closed part,
    // which then matches no golden prefix: conservative, never a false match.
    if (t.cmd_id == open_cmd) {
      ++open_count;
      open_sum += h;
    }
    ++count;
    sum += h;
  }
  /// The part of the digest that covers whole commands (everything before `open_cmd`).
  StageDigest closed() const {
    StageDigest c;
    c.count = count - open_count;
    c.sum = sum - open_sum;
    return c;
  }
  bool operator==(const StageDigest& o) const { return count == o.count && sum == o.sum; }
  bool operator!=(const StageDigest& o) const { return !(*this == o); }
};

}  // namespace bud::emu
