// What exactly differs in a divergence, in the terms of the data that differs: the SRAM entry and
// lane, the DRAM byte and the tensor element [y,x,c] it belongs to, and both values in the element
// type the hardware gives them there (int8 or bf16 activations and weights, int32 or fp32
// accumulators, by the command and tensor that made them).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "debugger/bisect/BisectReport.h"
#include "debugger/bisect/GoldenTrace.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

/// The type of one element of data the NPU moves.
enum class ElementType : uint8_t {
  Int8,   ///< int8 activations and weights, int8 POST outputs
  Int32,  ///< int32 accumulators and biases
  Bf16,   ///< bf16 activations, weights and POST outputs
  Fp32,   ///< fp32 accumulators and biases of a BF16 layer
  Raw32,  ///< 32-bit lanes shown as bits (per-channel scale entries)
};
/// Bytes of one element of `t` (1, 2 or 4).
uint32_t element_bytes(ElementType t);
/// One element at `bytes` (little endian) as text: "-3", "66.5 (bf16 0x4285)",
/// "402 (fp32 0x43c90000)", "0x00070123".
std::string format_element(ElementType t, const uint8_t* bytes);

/// The element type of a stage transaction's data, from the command that produced it and the
/// tensor that command reads or writes.
ElementType element_type_of(const emu::StageTxn& t, const run::PreparedRun& p);

/// Where a DRAM byte lies: the first byte and type of the element holding it and, for an
/// activation, "tensor NAME [y,x,c]" with c in elements (empty outside every activation).
struct DramElement {
  uint32_t addr = 0;  ///< first byte of the element
  ElementType type = ElementType::Int8;
  std::string tensor;
};
DramElement dram_element(const workload::Program& p, uint32_t addr);

/// Fills `r.element`, `r.expected` and `r.actual`: what exactly differs in a divergence (the
/// entry, lane or tensor element, and both values). Shared with the debugger's stage check.
void describe_element(const Divergence& d, const run::PreparedRun& p, BisectReport& r);
/// "stage gemm diverged at cycle C: command #N, element E, expected X, actual Y": a divergence
/// as the debugger's stop reasons and prefix packets' symptoms say it.
std::string render_divergence(const Divergence& d, const run::PreparedRun& prepared);
/// The command, layer and element of the first divergence, for every verdict that has one.
void describe_first(const Divergence& first, const run::PreparedRun& p, BisectReport& r);

/// Completes a result-only verdict (every stage matched, the results did not): the element,
/// golden and actual values of the first wrong output byte `addr`, the layer and STORE command
/// that wrote it, and the cycle it went wrong. `read` reads the final DRAM; `date` positions the
/// emulator and dates the byte.
void complete_result_verdict(
    BisectReport& r, const run::PreparedRun& p, const GoldenTrace& trace, uint32_t addr,
    const std::function<bool(uint32_t, uint8_t*, uint32_t)>& read,
    const std::function<std::optional<uint64_t>(uint32_t, uint8_t)>& date);

}  // namespace bud::debugger
