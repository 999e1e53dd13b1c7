// Output checking: compares the layer outputs a run left in DRAM (golden model or RTL) with the
// direct reference, and runs lowered programs on the golden model.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "emu/golden/GoldenNpu.h"
#include "emu/workload/Lowering.h"
#include "emu/workload/Reference.h"

namespace bud::golden {

/// Reads DRAM bytes [addr, addr + out.size()) into `out`; false if they cannot be read.
using DramReader = std::function<bool(uint32_t addr, std::span<uint8_t> out)>;

/// Result of comparing every checked tensor of a program.
struct CheckReport {
  uint64_t compared = 0;    ///< int8 elements compared
  uint64_t mismatches = 0;  ///< elements that differ
  /// First mismatch in layer order: "tensor fc1 index [3, 5] expected 12 actual -4".
  std::string first_mismatch;
  /// Mismatch count of every checked tensor, in layer order.
  std::vector<std::pair<std::string, uint64_t>> per_tensor;
  std::string error;  ///< set when DRAM could not be read or the reference does not match
  bool ok() const { return error.empty() && mismatches == 0; }
  /// One line: "all 4608 output elements match" or the first mismatch and the count.
  std::string summary() const;
};

/// Compares every TensorInfo with check = true against the reference output of its layer.
CheckReport check_outputs(const workload::Program& program, const workload::ReferenceResult& ref,
                          const DramReader& read);
/// Same, over a DRAM image (index = byte address).
CheckReport check_outputs(const workload::Program& program, const workload::ReferenceResult& ref,
                          std::span<const uint8_t> dram);

/// Writes a program's DRAM image and command ring into `npu` and runs it from the ring (a
/// program longer than the ring runs from its encoded commands, as the host streams them).
RunResult run_program(GoldenNpu& npu, const workload::Program& program);

}  // namespace bud::golden
