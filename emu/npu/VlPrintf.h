// Verilator's runtime and the generated model print $display/$error text and "$stop" notices
// with VL_PRINTF (printf by default). bud builds the model with VL_PRINTF=bud_vl_printf so that
// this text goes to the emulator whose model printed it (DesignOutput.h: the scope each entry
// point opens) instead of interleaving with bud's own output (e.g. --json); Emulator::
// take_messages() hands it out.
#pragma once

extern "C" int bud_vl_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
