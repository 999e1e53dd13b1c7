// The Verilated model against the facts table (rtl/npu_facts.toml, generated into bud/NpuFacts.h):
// the counter count and layout, the CSR map and the engine state encodings are read from the model
// itself, not from the tables, and compared with them.
#include <catch2/catch.hpp>
#include <cctype>
#include <set>
#include <string>

#include "tests/npu/NpuTestSupport.h"

namespace {

using namespace bud;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

TEST_CASE("The model's PMU has the table's counter count", "[npu][facts]") {
  const auto& p = test::prepared("mlp");
  emu::NpuEmulator emu(test::options_for("mlp", std::nullopt).emulator);
  REQUIRE(emu.load(p.job).empty());
  // Two readings from the model: the size of the RTL's counter array and its PMU_COUNT CSR.
  CHECK(emu.model_counter_count() == static_cast<uint32_t>(isa::kNumCounters));
  CHECK(emu.read_csr(isa::csr::kPmuCount) == static_cast<uint32_t>(isa::kNumCounters));
  CHECK(emu.read_csr(isa::csr::kId) == isa::csr::kIdValue);
  // Every table counter is a signal of the model by its name.
  for (int i = 0; i < isa::kNumCounters; ++i)
    CHECK(emu.find_signal("pmu." + std::string(isa::kCounterNames[i])).has_value());
}

TEST_CASE("The model's counters sit where the table says", "[npu][facts]") {
  const auto& p = test::prepared("mlp");
  const auto o = test::options_for("mlp", std::nullopt);
  const auto live = test::run_live(p, o);
  REQUIRE(live.report.passed);
  const auto& emu = *live.emu;
  auto at = [&](const std::string& name) {
    const auto i = isa::find_counter(name);
    INFO(name);
    REQUIRE(i.has_value());
    return emu.counter(*i);
  };
  // The class block: per engine, the table's classes at engine * classes + class sum to cycles.
  const uint64_t cycles = at("cycles");
  CHECK(cycles == emu.cycle() - 1);
  for (const auto engine : isa::kEngineNames) {
    uint64_t sum = 0;
    for (const auto cls : isa::kClassNames) sum += at(std::string(engine) + "." + std::string(cls));
    INFO(engine);
    CHECK(sum == cycles);
  }
  // The retired block: one counter per opcode, in table order, each equal to the program's count.
  for (int k = 0; k < isa::kNumOpcodes; ++k) {
    uint64_t n = 0;
    for (const auto& c : p.program.commands) n += c.raw_opcode == isa::kOpcodeValues[k] ? 1 : 0;
    INFO(isa::kOpcodeNames[k]);
    CHECK(at("retired_" + lower(isa::kOpcodeNames[k])) == n);
  }
  // Scratchpad writes by buffer name: GEMM writes ACC entries, POST writes OUT entries.
  const auto g = test::golden_run(p);
  CHECK(at("macs_useful") == g.macs_useful);
  CHECK(at("spad_out_wr") > 0);
  CHECK(at("spad_wgt_wr") > 0);
}

TEST_CASE("The model's engine states use the table's encodings", "[npu][facts]") {
  const auto& p = test::prepared("mlp");
  emu::NpuEmulator emu(test::options_for("mlp", std::nullopt).emulator);
  REQUIRE(emu.load(p.job).empty());
  struct Fsm {
    const char* signal;
    size_t states;
    std::set<uint64_t> seen;
  };
  Fsm fsms[] = {{"load.state", isa::kLoadStateNames.size(), {}},
                {"compute.state", isa::kComputeStateNames.size(), {}},
                {"store.state", isa::kStoreStateNames.size(), {}}};
  while (emu.state() == emu::RunState::Ready && emu.cycle() < 200'000) {
    emu.step(1);
    for (auto& f : fsms) f.seen.insert(emu.read_signal(*emu.find_signal(f.signal)).low());
  }
  for (const auto& f : fsms) {
    INFO(f.signal);
    // Every encoding the model takes has a name in the table, and a run moves through most of
    // them (mlp's loads never wait for a token), starting idle (encoding 0, the table's first).
    CHECK(*f.seen.rbegin() < f.states);
    CHECK(f.seen.count(0) == 1);
    CHECK(f.seen.size() + 1 >= f.states);
  }
  // `info stages` names them through the same table.
  for (const auto& e : emu.engines()) CHECK(e.state != "?");
}

TEST_CASE("The model's CSR list is the table's", "[npu][facts]") {
  emu::NpuEmulator emu(emu::NpuConfig{});
  const auto csrs = emu.csrs();
  REQUIRE(csrs.size() == isa::kCsrs.size());
  for (size_t i = 0; i < csrs.size(); ++i) {
    CHECK(csrs[i].name == isa::kCsrs[i].name);
    CHECK(csrs[i].addr == isa::kCsrs[i].addr);
  }
}
