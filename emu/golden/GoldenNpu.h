// The golden model: an untimed, independent C++ model of the NPU command set (docs/isa.md). It
// executes commands in program order on its own DRAM and scratchpads and emits every stage
// transaction at the granularity of the RTL's observation ports, so per-stage digests of an RTL
// run can be compared with it. It shares nothing with the lowering beyond emu/isa/Isa.h.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emu/core/StageTxn.h"
#include "emu/isa/Isa.h"

namespace bud::golden {

/// Outcome of GoldenNpu::run.
struct RunResult {
  bool ok = false;               ///< reached END without an error
  std::string error;             ///< "command #N (OPCODE): ..." when !ok
  uint32_t executed = 0;         ///< commands executed (END included)
  uint32_t end_code = 0;         ///< code of the END that finished the program
  uint64_t gemm_iterations = 0;  ///< (m, nb, kb) iterations = MAC-array cycles
  uint64_t macs_useful = 0;
  uint64_t macs_useful_bf16 = 0;  ///< the part of macs_useful in BF16 GEMMs
  uint64_t saturations = 0;  ///< POST lanes clamped to int8 (the PMU's `saturations`)
  /// Tokens left in the L->C, C->L, C->S, S->C FIFOs at END (a balanced program leaves 0).
  std::array<uint32_t, 4> tokens_left{};
  std::array<uint64_t, 4> retired{};  ///< LOAD, GEMM, POST, STORE commands (SYNC/END not counted)
};

/// Untimed NPU model.
class GoldenNpu {
 public:
  using Observer = std::function<void(const emu::StageTxn&)>;
  static constexpr int kLoadToCompute = 0, kComputeToLoad = 1, kComputeToStore = 2,
                       kStoreToCompute = 3;

  /// A model of the `array` variant with `dram_bytes` bytes of zeroed DRAM and zeroed
  /// scratchpads.
  explicit GoldenNpu(uint64_t dram_bytes = 16ull << 20,
                     const isa::ArrayConfig& array = isa::default_array());
  /// The array variant it models.
  const isa::ArrayConfig& array() const { return array_; }

  /// Copies bytes into DRAM; false (nothing written) if the range is out of bounds.
  bool write_dram(uint32_t addr, std::span<const uint8_t> bytes);
  /// Copies bytes out of DRAM; false if the range is out of bounds.
  bool read_dram(uint32_t addr, std::span<uint8_t> out) const;
  /// The whole DRAM.
  std::span<const uint8_t> dram() const { return dram_; }

  /// Called for every stage transaction, in program order (also accumulated in digests()).
  void set_observer(Observer obs) { observer_ = std::move(obs); }

  /// Executes commands in program order until END. Stops at the first illegal command,
  /// out-of-range access or token error (a pop with no token pushed earlier in program order,
  /// which would deadlock the RTL, or a push beyond 255). Never throws.
  RunResult run(std::span<const std::array<uint64_t, 4>> commands);
  /// Convenience: encodes and runs.
  RunResult run(const std::vector<isa::Command>& commands);

  /// Stepped execution, for a caller that runs the model alongside something else (the
  /// debugger's streaming golden check): begin(), then step() per command in program order
  /// (`index` is its position, for error messages) while it returns Next. `r` accumulates what
  /// run() would return. A legal command's step never allocates.
  enum class Step : uint8_t { Next, End, Error };
  void begin();
  Step step(const std::array<uint64_t, 4>& word, size_t index, RunResult& r);
  /// Runs `count` commands read from the ring at `ring_base` in DRAM.
  RunResult run_ring(uint32_t ring_base, uint32_t count);
  /// Runs commands encoded as they sit in the ring (32 bytes each, little-endian words), read
  /// from `bytes` rather than from the model's DRAM (a program longer than the ring).
  RunResult run_encoded(std::span<const uint8_t> bytes);

  /// Per-stage digests of every transaction emitted so far.
  const std::array<emu::StageDigest, emu::kNumStages>& digests() const { return digests_; }
  /// Clears digests (DRAM and scratchpads keep their contents).
  void reset_digests() { digests_ = {}; }

  /// Everything a later run depends on, to continue from here in another model of the same
  /// program (GoldenNpu::restore): DRAM up to the highest byte ever written (the rest is still
  /// zero), scratchpads, tokens and digests.
  struct State {
    std::vector<uint8_t> dram;  ///< bytes [0, dram.size()) of DRAM
    std::array<std::vector<uint8_t>, isa::kNumBuffers> spad;
    std::array<uint32_t, 4> tokens{};
    std::array<emu::StageDigest, emu::kNumStages> digests{};
    uint64_t bytes() const;
  };
  void save(State& out) const;
  /// Continues from `s` (saved from a model with the same DRAM size and array), which must not
  /// be behind this model's own DRAM writes (true for a fresh model of the same program).
  void restore(const State& s);

  /// Raw scratchpad bytes (entry i of buffer b is at i * entry_bytes).
  std::span<const uint8_t> scratchpad(isa::Buffer b) const { return spad_[static_cast<int>(b)]; }

 private:
  // Each returns "" or an error detail.
  uint32_t entry_bytes(isa::Buffer b) const { return array_.entry_bytes(b); }
  uint32_t entries(isa::Buffer b) const { return array_.entries[static_cast<size_t>(b)]; }
  std::string exec_load(const isa::Command& c);
  std::string exec_gemm(const isa::Command& c, RunResult& r);
  std::string exec_post(const isa::Command& c, RunResult& r);
  void post_entry(const isa::Command& c, uint32_t j, const uint8_t* scale, RunResult& r);
  void emit_out_entry(const isa::Command& c, uint32_t j, const uint8_t* o);
  std::string exec_store(const isa::Command& c);
  std::string check_tokens(const isa::Command& c);
  void push_tokens(const isa::Command& c);
  void emit(const emu::StageTxn& t);

  isa::ArrayConfig array_;
  std::vector<uint8_t> dram_;
  std::array<std::vector<uint8_t>, isa::kNumBuffers> spad_;
  std::array<uint32_t, 4> tokens_{};
  std::array<emu::StageDigest, emu::kNumStages> digests_{};
  uint64_t dram_high_ = 0;  ///< one past the highest DRAM byte written
  Observer observer_;
};

}  // namespace bud::golden
