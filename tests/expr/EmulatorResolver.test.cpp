// EmulatorResolver and EmulatorSampler over a small fake Emulator (no Verilator).
#include "debugger/expr/EmulatorResolver.h"

#include <catch2/catch.hpp>

#include "debugger/expr/Compiler.h"
#include "emu/isa/Isa.h"

using namespace bud::debugger;
namespace emu = bud::emu;

namespace {

// Three signals (a scalar, an array of 4 and the `pmu.` alias of a counter), live counters.
class FakeEmulator : public emu::Emulator {
 public:
  FakeEmulator() {
    sigs_.push_back({"load.state", 3, 1, emu::SignalKind::State, true, ""});
    sigs_.push_back({"tokens", 4, 4, emu::SignalKind::State, true, ""});
    sigs_.push_back({"pmu.gemm.stall_mem", 64, 1, emu::SignalKind::Counter, true, ""});
    sigs_.push_back({"wide", 128, 1, emu::SignalKind::State, true, ""});
    info_.name = "fake";
    for (int i = 0; i < bud::isa::kNumCounters; ++i)  // the NPU's counters, same indices
      info_.counters.push_back(bud::isa::counter_name(i));
  }
  const emu::DesignInfo& describe() const override { return info_; }
  std::string load(const emu::HostJob&) override { return {}; }
  uint64_t cycle() const override { return cycle_; }
  emu::RunState state() const override { return emu::RunState::Ready; }
  emu::StepResult step(uint64_t n) override {
    cycle_ += n;
    return {n, emu::RunState::Ready, true, false, ""};
  }
  void save(std::vector<uint8_t>&) const override {}
  bool restore(std::span<const uint8_t>, std::string&) override { return false; }
  uint64_t digest() override { return 0; }
  const std::vector<emu::SignalInfo>& signals() const override { return sigs_; }
  std::optional<emu::SignalId> find_signal(std::string_view name) const override {
    for (size_t i = 0; i < sigs_.size(); ++i)
      if (sigs_[i].name == name) return static_cast<emu::SignalId>(i);
    return std::nullopt;
  }
  emu::SignalValue read_signal(emu::SignalId id, uint32_t element) const override {
    emu::SignalValue v;
    v.width = sigs_[id].width;
    v.words[0] = id == 3 ? 0x1234 : 100 * id + element;
    v.words[1] = 0xdead;  // high bits of the wide signal are ignored
    return v;
  }
  bool deposit_signal(emu::SignalId, uint32_t, const emu::SignalValue&) override { return false; }
  bool force_signal(emu::SignalId, uint32_t, const emu::SignalValue&) override { return false; }
  void release_signal(emu::SignalId, uint32_t) override {}
  const std::vector<emu::MemoryInfo>& memories() const override { return mems_; }
  bool read_memory(std::string_view, uint64_t, std::span<uint8_t>) const override { return false; }
  bool write_memory(std::string_view, uint64_t, std::span<const uint8_t>) override { return false; }
  uint64_t counter(int index) const override { return 1000 + static_cast<uint64_t>(index); }
  emu::StageDigest stage_digest(emu::Stage) const override { return {}; }
  void set_cycle_hook(emu::CycleHook*) override {}
  void set_txn_observer(emu::TxnObserver*) override {}

  uint64_t cycle_ = 0;

 private:
  std::vector<emu::SignalInfo> sigs_;
  std::vector<emu::MemoryInfo> mems_;
  emu::DesignInfo info_;
};

}  // namespace

TEST_CASE("EmulatorResolver resolves cycle, counters with and without pmu., signals",
          "[expr][emulator]") {
  FakeEmulator fake;
  EmulatorResolver res(fake);
  const int stall_mem = *bud::isa::find_counter("gemm.stall_mem");

  auto c1 = res.resolve("gemm.stall_mem", std::nullopt);
  auto c2 = res.resolve("pmu.gemm.stall_mem", std::nullopt);
  REQUIRE(c1);
  REQUIRE(c2);
  CHECK(c1->kind == RefKind::Counter);
  CHECK(c1->id == static_cast<uint32_t>(stall_mem));
  CHECK(*c1 == *c2);
  CHECK(res.resolve("cycle", std::nullopt)->kind == RefKind::Cycle);
  CHECK(res.resolve("load.state", std::nullopt)->kind == RefKind::Signal);
  CHECK(res.resolve("tokens", std::nullopt)->elements == 4);
  CHECK(res.resolve("tokens", 3)->element == 3);
  CHECK_FALSE(res.resolve("tokens", 4));
  CHECK_FALSE(res.resolve("load.state", 0));
  CHECK_FALSE(res.resolve("nope", std::nullopt));
  CHECK_FALSE(res.resolve("pmu.nope", std::nullopt));

  const auto names = res.names();
  CHECK(std::find(names.begin(), names.end(), "cycle") != names.end());
  CHECK(std::find(names.begin(), names.end(), "gemm.stall_mem") != names.end());
  CHECK(std::find(names.begin(), names.end(), "tokens") != names.end());
  // The pmu. alias is not listed twice.
  CHECK(std::find(names.begin(), names.end(), "pmu.gemm.stall_mem") == names.end());
}

TEST_CASE("expressions compile and evaluate against an Emulator", "[expr][emulator]") {
  FakeEmulator fake;
  EmulatorResolver res(fake);
  EmulatorSampler smp(fake);
  const int stall_mem = *bud::isa::find_counter("gemm.stall_mem");

  CompileResult r =
      compile("pmu.gemm.stall_mem - gemm.stall_mem + tokens[2] + load.state + cycle + wide", res);
  REQUIRE(r.ok());
  CHECK(r.expr->refs().size() == 5);  // both counter spellings are one Ref
  fake.cycle_ = 77;
  r.expr->arm(smp);
  CHECK(r.expr->eval(smp).integer == 0 + 102 + 0 + 77 + 0x1234);

  CompileResult d = compile(
      "delta(cycle, 10) == 5 && gemm.stall_mem == " + std::to_string(1000 + stall_mem), res);
  REQUIRE(d.ok());
  fake.cycle_ = 0;
  d.expr->arm(smp);
  fake.cycle_ = 5;
  CHECK(d.expr->eval(smp).truthy());

  CompileResult bad = compile("gemm.stal_mem > 3", res);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error.column == 1);
  REQUIRE_FALSE(bad.error.suggestions.empty());
  CHECK(bad.error.suggestions.front() == "gemm.stall_mem");
  CompileResult scalar = compile("cycle[1]", res);
  REQUIRE_FALSE(scalar.ok());
  CHECK(scalar.error.message == "'cycle' is not an array and cannot be indexed");
}
