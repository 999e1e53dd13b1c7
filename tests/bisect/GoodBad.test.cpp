// `bud bisect --good G --bad B`: fault-free vs faulty runs diverge at the cycle after the fault
// and name the faulted signal or memory byte; two memory-timing configurations with the same data
// are a performance difference with the mechanism that explains it.
#include "BisectTestSupport.h"
#include "debugger/bisect/DiffBisector.h"

using namespace bud;

namespace {

/// Records gemm_small with `mutate` applied to its options into DIR/NAME.bpk.
std::string record_variant(const std::filesystem::path& dir, const std::string& name,
                           const std::vector<std::string>& faults,
                           void (*mutate)(run::RunOptions&) = nullptr,
                           const std::string& workload = "gemm_small") {
  auto o = test::options_with(workload, faults);
  if (mutate) mutate(o);
  const std::string path = (dir / (name + ".bpk")).string();
  test::record(path, o);
  return path;
}

}  // namespace

// Cycle relation: a fault @C acts during cycle C, before the rising edge that ends it. The
// digest stream samples the state after N rising edges ("cycle N"), so the state sampled at C is
// still the good one and the first state that differs is the one after the next edge: C + 1.
TEST_CASE("fault-free vs faulty: diverged at the fault cycle + 1, naming the faulted element",
          "[bisect][goodbad]") {
  const auto dir = test::temp_dir("goodbad");
  const std::string good = record_variant(dir, "good", {});
  struct Case {
    const char* fault;
    uint64_t cycle;
    const char* element;
  };
  for (const Case& c : {Case{"flip:compute.accum[3][5]@700", 700, "compute.accum[3]"},
                        Case{"flip:compute.m_left[0]@600", 600, "compute.m_left"},
                        Case{"flip:store.row_addr[9]@850", 850, "store.row_addr"},
                        Case{"memflip:dram:0x10000[3]@10", 10, "dram 0x10000"}}) {
    DYNAMIC_SECTION(c.fault) {
      const std::string bad = record_variant(dir, "bad", {c.fault});
      const auto r = debugger::bisect_pair(good, bad, {});
      INFO(r.text());
      REQUIRE(r.verdict == debugger::DiffVerdict::Diverged);
      CHECK(r.persistent);
      REQUIRE(r.first_divergence_cycle);
      CHECK(*r.first_divergence_cycle == c.cycle + 1);
      REQUIRE_FALSE(r.differences.empty());
      CHECK(r.differences.front().element == c.element);
      CHECK(r.differences.front().good != r.differences.front().bad);
    }
  }
  SECTION("the flipped bit is the difference") {
    const std::string bad = record_variant(dir, "bad", {"flip:store.row_addr[9]@850"});
    const auto r = debugger::bisect_pair(good, bad, {});
    REQUIRE_FALSE(r.differences.empty());
    const auto g = std::stoull(r.differences.front().good, nullptr, 16);
    const auto b = std::stoull(r.differences.front().bad, nullptr, 16);
    CHECK((g ^ b) == (1u << 9));
  }
  SECTION("identical runs are the same") {
    const std::string again = record_variant(dir, "again", {});
    const auto r = debugger::bisect_pair(good, again, {});
    CHECK(r.verdict == debugger::DiffVerdict::Same);
    CHECK_FALSE(r.first_divergence_cycle);
  }
}

TEST_CASE("same data, another memory timing: a performance difference with its mechanism",
          "[bisect][goodbad][performance]") {
  const auto dir = test::temp_dir("goodbad_perf");
  const std::string good = record_variant(dir, "good", {});
  SECTION("a higher DRAM latency is memory") {
    const std::string slow = record_variant(
        dir, "slow", {}, [](run::RunOptions& o) { o.emulator.dram.base_latency = 200; });
    const auto r = debugger::bisect_pair(good, slow, {});
    INFO(r.text());
    CHECK(r.verdict == debugger::DiffVerdict::Performance);
    CHECK(r.mechanism == debugger::Mechanism::Memory);
    CHECK_FALSE(r.first_divergence_cycle);
    CHECK(r.bad_cycles > r.good_cycles);
    CHECK(r.window_start);
    CHECK(r.window_end);
    CHECK_FALSE(r.evidence.empty());
  }
  SECTION("a throttle is thermal") {
    const std::string hot = record_variant(dir, "hot", {}, [](run::RunOptions& o) {
      o.emulator.throttle.on_cycles = 1;
      o.emulator.throttle.period = 4;
    });
    const auto r = debugger::bisect_pair(good, hot, {});
    INFO(r.text());
    CHECK(r.verdict == debugger::DiffVerdict::Performance);
    CHECK(r.mechanism == debugger::Mechanism::Thermal);
    CHECK(r.bad_cycles > r.good_cycles);
  }
}

TEST_CASE("bud bisect --good/--bad through the binary", "[bisect][goodbad][cli]") {
  const auto dir = test::temp_dir("goodbad_cli");
  auto rec = [&](const std::string& name, const std::string& args) {
    const std::string path = (dir / (name + ".bpk")).string();
    const auto r = test::bud("run gemm_small " + args + " --record " + test::q(path), dir);
    INFO(r.err);
    REQUIRE(r.status <= 1);
    return path;
  };
  const std::string good = rec("good", "");
  const std::string bad = rec("bad", "--fault 'flip:compute.accum[3][5]@700'");
  const std::string slow = rec("slow", "--mem-latency 200");
  const std::string hot = rec("hot", "--throttle 1 --throttle-period 4");

  auto j = test::bud("bisect --json --good " + test::q(good) + " --bad " + test::q(bad), dir);
  CHECK(j.status == 1);
  CHECK(test::json_string(j.out, "verdict") == "diverged");
  CHECK(test::json_field(j.out, "first_divergence_cycle") == "701");
  CHECK(test::contains(j.out, "\"element\":\"compute.accum[3]\""));

  j = test::bud("bisect --json --good " + test::q(good) + " --bad " + test::q(slow), dir);
  CHECK(j.status == 1);
  CHECK(test::json_string(j.out, "verdict") == "performance");
  CHECK(test::json_string(j.out, "mechanism") == "memory");

  j = test::bud("bisect --json --good " + test::q(good) + " --bad " + test::q(hot), dir);
  CHECK(j.status == 1);
  CHECK(test::json_string(j.out, "verdict") == "performance");
  CHECK(test::json_string(j.out, "mechanism") == "thermal");

  j = test::bud("bisect --good " + test::q(good) + " --bad " + test::q(good), dir);
  CHECK(j.status == 0);
  CHECK(test::contains(j.out, "verdict    same"));
}

namespace {

/// The NPU's counter names, in its order.
std::vector<std::string> npu_counters() {
  std::vector<std::string> names;
  for (int i = 0; i < isa::kNumCounters; ++i) names.push_back(isa::counter_name(i));
  return names;
}

/// Growth of the named counters (everything else 0), by the NPU's counter order.
std::vector<double> growth_of(std::initializer_list<std::pair<const char*, double>> parts) {
  std::vector<double> g(isa::kNumCounters, 0.0);
  for (const auto& [name, v] : parts) {
    const auto c = isa::find_counter(name);
    REQUIRE(c);
    g[*c] = v;
  }
  return g;
}

}  // namespace

TEST_CASE("the mechanism rule on constructed counter growths", "[bisect][goodbad][mechanism]") {
  using debugger::Mechanism;
  auto call = [](std::initializer_list<std::pair<const char*, double>> parts) {
    return debugger::classify_mechanism(npu_counters(), growth_of(parts), 1000, 0.05);
  };
  // The field trial's case: a late write acknowledgement holds the store engine, and every other
  // engine waits on it (more scheduling growth in total, but it is the consequence).
  auto r = call({{"store.stall_mem", 400}, {"gemm.stall_dep", 300}, {"post.stall_dep", 300},
                 {"load.stall_out", 300}, {"fetch.stall_out", 300}});
  CHECK(r.mechanism == Mechanism::Memory);
  CHECK(r.score[static_cast<int>(Mechanism::Scheduling)] == 1200);
  CHECK(debugger::mechanism_name(r.mechanism) == std::string("memory"));
  CHECK(r.evidence.rfind("memory: +400 (store.stall_mem +400)", 0) == 0);
  // Waiting alone is scheduling.
  CHECK(call({{"gemm.stall_dep", 300}, {"load.stall_mem", 20}}).mechanism == Mechanism::Scheduling);
  // Bank conflicts are counted in stall_mem too: they are taken out of memory.
  r = call({{"bank_conflicts_inp", 300}, {"load.stall_mem", 320}});
  CHECK(r.mechanism == Mechanism::ComputeHazard);
  CHECK(r.score[static_cast<int>(Mechanism::Memory)] == 20);
  CHECK(call({{"load.throttled", 100}, {"gemm.throttled", 100}, {"load.stall_mem", 150}}).mechanism ==
        Mechanism::Thermal);
  CHECK(call({{"gemm.active", 200}}).mechanism == Mechanism::Compute);
  // A tie goes to the earlier cause: thermal, memory, compute-hazard, compute, precision.
  CHECK(call({{"load.stall_mem", 200}, {"gemm.throttled", 200}}).mechanism == Mechanism::Thermal);
  CHECK(call({{"load.stall_mem", 200}, {"gemm.active", 200}}).mechanism == Mechanism::Memory);
  // Below the tolerance (5% of 1000 cycles), or shrinking: nothing explains it.
  r = call({{"load.stall_mem", 50}, {"gemm.stall_dep", -400}});
  CHECK(r.mechanism == Mechanism::None);
  CHECK(debugger::mechanism_name(r.mechanism) == std::string("none"));
  CHECK(call({}).mechanism == Mechanism::None);
}

TEST_CASE("the mechanism class of one changed knob follows the evidence",
          "[bisect][goodbad][mechanism]") {
  using debugger::Mechanism;
  const auto dir = test::temp_dir("goodbad_mechanism");
  struct Case {
    const char* what;
    const char* workload;
    const char* fault;  ///< a timing-only fault, or ""
    void (*mutate)(run::RunOptions&);
    Mechanism want;
    const char* largest;  ///< the counter that must lead the evidence
  };
  const Case cases[] = {
      {"read latency", "gemm_small", "",
       [](run::RunOptions& o) { o.emulator.dram.base_latency = 200; }, Mechanism::Memory,
       "load.stall_mem"},
      {"read latency", "mlp", "", [](run::RunOptions& o) { o.emulator.dram.base_latency = 160; },
       Mechanism::Memory, "load.stall_mem"},
      // The field trial's case: one write acknowledgement held back 400 cycles. Every other engine
      // ends up waiting for the store (more scheduling growth in total), but the cause is memory.
      {"delayed write acknowledgement", "gemm_small", "dram-delay:400@880", nullptr,
       Mechanism::Memory, "store.stall_mem"},
      {"DRAM bandwidth", "gemm_small", "",
       [](run::RunOptions& o) { o.emulator.dram.bytes_per_cycle = 1; }, Mechanism::Memory,
       "load.stall_mem"},
      {"DRAM bandwidth", "mlp", "", [](run::RunOptions& o) { o.emulator.dram.bytes_per_cycle = 2; },
       Mechanism::Memory, "load.stall_mem"},
      {"throttle", "gemm_small", "",
       [](run::RunOptions& o) {
         o.emulator.throttle.on_cycles = 1;
         o.emulator.throttle.period = 4;
       },
       Mechanism::Thermal, ".throttled"},
      {"throttle", "mlp", "",
       [](run::RunOptions& o) {
         o.emulator.throttle.on_cycles = 3;
         o.emulator.throttle.period = 8;
       },
       Mechanism::Thermal, ".throttled"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what << " on " << c.workload) {
      const std::string good = record_variant(dir, "good", {}, nullptr, c.workload);
      std::vector<std::string> faults;
      if (*c.fault) faults.push_back(c.fault);
      const std::string bad = record_variant(dir, "bad", faults, c.mutate, c.workload);
      const auto r = debugger::bisect_pair(good, bad, {});
      INFO(r.text());
      REQUIRE(r.verdict == debugger::DiffVerdict::Performance);
      CHECK(r.bad_cycles > r.good_cycles);
      REQUIRE(r.mechanism);
      CHECK(*r.mechanism == c.want);
      REQUIRE_FALSE(r.evidence.empty());
      CHECK(r.evidence.front().rfind(debugger::mechanism_name(c.want), 0) == 0);
      CHECK(test::contains(r.evidence.front(), c.largest));
    }
  }
}
