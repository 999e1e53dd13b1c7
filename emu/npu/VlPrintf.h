// Verilator's runtime and the generated model print $display/$error text and "$stop" notices
// with VL_PRINTF (printf by default). bud builds the model with VL_PRINTF=bud_vl_printf so that
// this text is captured per thread instead of interleaving with bud's own output (e.g. --json);
// the emulator attaches it to assertion reports.
#pragma once

#include <string>

extern "C" int bud_vl_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));

namespace bud::emu {
/// Text the design printed on this thread since the last call, then forgotten (at most 64 KiB
/// is kept).
std::string take_design_output();
}  // namespace bud::emu
