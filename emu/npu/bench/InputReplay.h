// Replays recorded NPU input ports on a bare Verilated model (no memory model, host driver or
// checks): the physical speed limit of the model. Shared by bud-bench-npu and the
// bud-bench-replay-* variants (which differ only in the model class).
#pragma once

#include <chrono>
#include <cstring>
#include <vector>

#include "emu/npu/NpuEmulator.h"
#include "verilated.h"

namespace bud::bench {

/// Resets a fresh `Model` like the emulator does, replays `inputs` one cycle each and returns
/// the seconds the replay loop took (construction and reset excluded). `finished`, if given, is
/// set to whether the program ended (STATUS.done) as in the recorded run.
template <class Model>
double replay_inputs(const std::vector<emu::NpuInputs>& inputs, bool* finished = nullptr) {
  VerilatedContext ctx;
  ctx.randReset(0);
  ctx.fatalOnError(false);
  Model top(&ctx, "TOP");
  top.rst_n = 0;
  top.clk = 0;
  top.eval();
  for (int i = 0; i < 2; ++i) {
    top.clk = 1;
    top.eval();
    top.clk = 0;
    top.eval();
  }
  top.rst_n = 1;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& in : inputs) {
    top.dram_req_ready = in.req_ready;
    top.dram_resp_valid = in.resp_valid;
    top.dram_resp_write = in.resp_write;
    top.dram_resp_tag = in.resp_tag;
    if (in.resp_valid) std::memcpy(top.dram_resp_rdata.data(), in.resp_rdata.data(), 64);
    top.csr_valid = in.csr_valid;
    top.csr_write = in.csr_write;
    top.csr_addr = in.csr_addr;
    top.csr_wdata = in.csr_wdata;
    top.throttle = in.throttle;
    top.clk = 0;
    top.eval();
    top.clk = 1;
    top.eval();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (finished) {
    top.csr_valid = 0;
    top.csr_addr = 0x0C;  // STATUS
    top.eval();
    *finished = (top.csr_rdata & 2) != 0;
  }
  top.final();
  return s;
}

}  // namespace bud::bench
