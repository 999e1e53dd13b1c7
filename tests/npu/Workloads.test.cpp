// RTL vs golden model, bit-exact: every built-in workload runs on the Verilated NPU over several
// data seeds and memory-timing configurations, and every stage digest, output tensor and the
// saturation count must match (run::finish checks them; these tests require that it found
// nothing and that the checks really ran).
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/npu/NpuTestSupport.h"
#include "tests/workload/EdgeWorkloads.h"

namespace {

using bud::emu::RunState;
using bud::test::TimingCase;

/// The data seeds of the quick sweep: the workload's own plus two others.
const std::optional<uint64_t> kSeeds[] = {std::nullopt, 7, 123456789};

void check_run(const std::string& name, std::optional<uint64_t> seed, const TimingCase& tc) {
  const auto& p = bud::test::prepared(name, seed);
  auto o = bud::test::options_for(name, seed, tc.npu);
  o.emulator.dram.seed = 1 + (seed ? *seed : 0);
  const auto r = bud::run::execute(p, o);
  INFO(name << " seed " << (seed ? std::to_string(*seed) : "default") << " timing " << tc.name
            << ": " << bud::test::failures_text(r));
  CHECK(r.state == RunState::Finished);
  CHECK(r.failures.empty());
  CHECK(r.passed);
  // The checks must have had something to compare: every stage saw the golden model's
  // transactions, and the run retired every command of the program.
  for (int s = 0; s < bud::emu::kNumStages; ++s) {
    CHECK(r.rtl_digests[s] == r.golden_digests[s]);
    CHECK(r.golden_digests[s].count > 0);
  }
  CHECK(r.commands == p.program.commands.size());
  CHECK(bud::test::counter(r, bud::isa::Counter::RetiredEnd) == 1);
}

void sweep(const std::string& name) {
  for (const auto& seed : kSeeds) {
    for (const auto& tc : bud::test::timing_cases()) {
      DYNAMIC_SECTION(name << " seed " << (seed ? std::to_string(*seed) : "default") << " "
                           << tc.name) {
        check_run(name, seed, tc);
      }
    }
  }
}

}  // namespace

TEST_CASE("the quick sweep covers exactly the built-in workloads", "[npu][workloads]") {
  const auto names = bud::test::builtin_names();
  const std::set<std::string> got(names.begin(), names.end());
  const std::set<std::string> covered = {"compute_bound", "conv", "gemm_small", "mem_bound", "mlp"};
  // A new built-in needs its own TEST_CASE below.
  CHECK(got == covered);
}

TEST_CASE("gemm_small matches the golden model bit-exactly", "[npu][workloads]") {
  sweep("gemm_small");
}
TEST_CASE("mlp matches the golden model bit-exactly", "[npu][workloads]") { sweep("mlp"); }
TEST_CASE("conv matches the golden model bit-exactly", "[npu][workloads]") { sweep("conv"); }
TEST_CASE("mem_bound matches the golden model bit-exactly", "[npu][workloads]") {
  sweep("mem_bound");
}
TEST_CASE("compute_bound matches the golden model bit-exactly", "[npu][workloads]") {
  sweep("compute_bound");
}

TEST_CASE("every built-in matches the golden model over a wide timing sweep",
          "[npu][workloads][slow]") {
  std::vector<TimingCase> cases = bud::test::timing_cases();
  {
    TimingCase c{"latency1_nojitter", {}};
    c.npu.dram.base_latency = 1;
    c.npu.dram.jitter = 0;
    c.npu.dram.bytes_per_cycle = 64;
    cases.push_back(c);
  }
  {
    TimingCase c{"outstanding1_in_order_bursty", {}};
    c.npu.dram.max_outstanding = 1;
    c.npu.dram.reorder = false;
    c.npu.dram.bursty = true;
    cases.push_back(c);
  }
  {
    TimingCase c{"jitter300_bursty90_throttle2of5", {}};
    c.npu.dram.base_latency = 10;
    c.npu.dram.jitter = 300;
    c.npu.dram.bursty = true;
    c.npu.dram.burst_duty_pct = 90;
    c.npu.throttle.period = 5;
    c.npu.throttle.on_cycles = 2;
    cases.push_back(c);
  }
  {
    TimingCase c{"outstanding64_bw1", {}};
    c.npu.dram.max_outstanding = 64;
    c.npu.dram.bytes_per_cycle = 1;
    cases.push_back(c);
  }
  for (const auto& name : bud::test::builtin_names()) {
    for (uint64_t seed : {1ull, 2ull, 3ull, 99ull, 0xdeadbeefull}) {
      for (const auto& tc : cases) {
        DYNAMIC_SECTION(name << " seed " << seed << " " << tc.name) { check_run(name, seed, tc); }
      }
    }
  }
}

TEST_CASE("reductions longer than half the WGT scratchpad run in chunks, bit-exact on the RTL",
          "[npu][workloads][chunks]") {
  for (const char* name : {"long_k", "long_k_conv"}) {
    for (const bool single : {false, true}) {
      DYNAMIC_SECTION(name << (single ? " single_buffer" : "")) {
        std::string text;
        for (const auto& [n, t] : bud::test::edge_workloads())
          if (std::string(n) == name) text = t;
        REQUIRE_FALSE(text.empty());
        if (single) text += "\nsingle_buffer: true\n";
        auto w = bud::workload::parse_workload(text, name);
        REQUIRE(w);
        const auto plan = bud::workload::plan_tiles(w->layers[0]);
        REQUIRE(plan);
        CHECK(plan->k_chunks == 2);
        bud::run::RunOptions o;
        auto p = bud::run::prepare_workload(std::move(w).value(), o);
        REQUIRE(p);
        const auto r = bud::run::execute(*p, o);
        INFO(bud::test::failures_text(r));
        CHECK(r.state == RunState::Finished);
        CHECK(r.passed);
        CHECK(r.commands == p->program.commands.size());
      }
    }
  }
}

TEST_CASE("smaller tiles change the cycles and stay bit-exact on the RTL",
          "[npu][workloads][tiles]") {
  // Default tiles: the run of the workload as loaded. Capped (`--tile-rows 8 --tile-blocks 1`):
  // more, smaller tiles, checked against the golden model as always, in other cycles.
  for (const auto& name : bud::test::builtin_names()) {
    if (name == "compute_bound") continue;  // the largest: its 2,000+ extra commands are slow
    DYNAMIC_SECTION(name) {
      bud::run::RunOptions o = bud::test::options_for(name);
      auto base = bud::run::prepare(o);
      REQUIRE(base);
      const auto before = bud::run::execute(*base, o);
      REQUIRE(before.passed);
      o.tiles = {8, 1};
      auto capped = bud::run::prepare(o);
      REQUIRE(capped);
      CHECK(capped->workload.tiles == bud::workload::TileLimits{8, 1});
      CHECK(capped->program.commands.size() > base->program.commands.size());
      const auto after = bud::run::execute(*capped, o);
      INFO(bud::test::failures_text(after));
      CHECK(after.state == RunState::Finished);
      CHECK(after.passed);
      CHECK(after.failures.empty());
      for (int s = 0; s < bud::emu::kNumStages; ++s)
        CHECK(after.rtl_digests[s] == after.golden_digests[s]);
      CHECK(after.commands == capped->program.commands.size());
      CHECK(after.counter("macs_useful") == before.counter("macs_useful"));
      CHECK(after.cycles != before.cycles);
    }
  }
}

TEST_CASE("per-channel requantisation and attention are bit-exact on the RTL at int8 and BF16",
          "[npu][workloads][per_channel][attention]") {
  // Per channel, each lane's factor comes from a scale entry in ACC (docs/isa.md, "Per-channel
  // POST"): the int path's mult/shift, the float path's bf16 scale. Attention: matmuls read
  // activations as weights through block copies their producers store (docs/workloads.md,
  // "Attention"). Under every timing case of the sweeps.
  for (const char* name : {"per_channel", "per_channel_n_tiles", "per_channel_long_k",
                           "attention", "attention_odd", "attention_wide"}) {
    const bool attention = std::string(name).rfind("attention", 0) == 0;
    for (const char* precision : {"int8", "bf16"}) {
      for (const TimingCase& tc : bud::test::timing_cases()) {
        DYNAMIC_SECTION(name << " " << precision << " " << tc.name) {
          std::string text;
          for (const auto& [n, t] : bud::test::edge_workloads())
            if (std::string(n) == name) text = t;
          REQUIRE_FALSE(text.empty());
          auto w = bud::workload::parse_workload(text, name);
          REQUIRE(w);
          REQUIRE_FALSE(bud::workload::assign_precision(w.value(), precision, "test"));
          bud::run::RunOptions o;
          o.emulator = tc.npu;
          auto p = bud::run::prepare_workload(std::move(w).value(), o);
          REQUIRE(p);
          size_t per_channel_posts = 0, block_copies = 0;
          for (const auto& c : p->program.commands)
            per_channel_posts += c.opcode == bud::isa::Opcode::Post && c.per_channel;
          for (const auto& t : p->program.tensors)
            block_copies += t.role == bud::workload::TensorRole::Blocks;
          CHECK((attention ? block_copies : per_channel_posts) > 0);
          bud::test::check_bit_exact(bud::run::execute(*p, o));
        }
      }
    }
  }
}
