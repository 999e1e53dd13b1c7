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
      REQUIRE(r.verdict == "diverged");
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
    CHECK(r.verdict == "same");
    CHECK_FALSE(r.first_divergence_cycle);
  }
}

TEST_CASE("same data, another memory timing: a performance difference with its mechanism",
          "[bisect][goodbad][performance]") {
  const auto dir = test::temp_dir("goodbad_perf");
  const std::string good = record_variant(dir, "good", {});
  SECTION("a higher DRAM latency is memory") {
    const std::string slow =
        record_variant(dir, "slow", {}, [](run::RunOptions& o) { o.npu.dram.base_latency = 200; });
    const auto r = debugger::bisect_pair(good, slow, {});
    INFO(r.text());
    CHECK(r.verdict == "performance");
    CHECK(r.mechanism == "memory");
    CHECK_FALSE(r.first_divergence_cycle);
    CHECK(r.bad_cycles > r.good_cycles);
    CHECK(r.window_start);
    CHECK(r.window_end);
    CHECK_FALSE(r.evidence.empty());
  }
  SECTION("a throttle is thermal") {
    const std::string hot = record_variant(dir, "hot", {}, [](run::RunOptions& o) {
      o.npu.throttle.on_cycles = 1;
      o.npu.throttle.period = 4;
    });
    const auto r = debugger::bisect_pair(good, hot, {});
    INFO(r.text());
    CHECK(r.verdict == "performance");
    CHECK(r.mechanism == "thermal");
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
