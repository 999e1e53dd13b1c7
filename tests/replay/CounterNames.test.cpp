// Counters in packets are matched by name (Header.counter_names, replay/CounterMap.h). The two
// packets in tests/replay/data/pre_names_*.bpk were recorded by the build before names were
// added (format 1.0: counters by position, the old hash): they must still read, map and diff.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "replay/CounterMap.h"
#include "replay/Framing.h"
#include "tests/replay/ReplayTestSupport.h"

namespace {

using namespace bud;

std::string data(const std::string& name) {
  return std::string(BUD_SOURCE_DIR) + "/tests/replay/data/" + name;
}

replay::Packet read(const std::string& path) {
  std::string error;
  auto p = replay::read_packet(path, error);
  INFO(error);
  REQUIRE(p);
  return std::move(*p);
}

/// The NPU's counters in its order (what its describe() lists).
std::vector<std::string> npu_counters() {
  std::vector<std::string> names;
  for (int i = 0; i < isa::kNumCounters; ++i) names.push_back(isa::counter_name(i));
  return names;
}

int index_of(const char* name) {
  const auto i = isa::find_counter(name);
  REQUIRE(i);
  return *i;
}

}  // namespace

TEST_CASE("a format-1 packet maps its counters through the format-1 list", "[replay][counters]") {
  const auto p = read(data("pre_names_fast.bpk"));
  CHECK(p.major == 1);
  CHECK(p.header.counter_names_size() == 0);
  REQUIRE(p.result);
  const auto m = replay::CounterMap::of(p.header, npu_counters());
  CHECK(m.unknown().empty());
  const auto& rc = p.result->counters();
  // Values the run printed when it was recorded (13,161 cycles, mlp: 3 GEMMs, 9 LOADs).
  CHECK(m.value(rc, index_of("cycles")) == p.result->cycles() - 1);
  CHECK(m.value(rc, index_of("retired_gemm")) == 3u);
  CHECK(m.value(rc, index_of("retired_load")) == 9u);
  CHECK(m.value(rc, index_of("dram_rd_bytes")) == 43'680u);
  CHECK(m.value(rc, index_of("saturations")) == 7u);
  // Every class block still sums to cycles after the mapping.
  for (const auto e : isa::kEngineNames) {
    uint64_t sum = 0;
    for (const auto c : isa::kClassNames)
      sum += *m.value(rc, index_of((std::string(e) + "." + std::string(c)).c_str()));
    CHECK(sum == p.result->cycles() - 1);
  }
}

TEST_CASE("counters map by name when the recorded list differs from this build's",
          "[replay][counters]") {
  // A packet from before `macs_issued` existed (everything after it one position earlier) and
  // with a counter this build does not know.
  replay::pb::Header h;
  google::protobuf::RepeatedField<uint64_t> recorded;
  for (int i = 0; i < isa::kNumCounters; ++i) {
    if (isa::kCounterNames[i] == "macs_issued") continue;
    h.add_counter_names(std::string(isa::kCounterNames[i]));
    recorded.Add(1000 + i);
  }
  h.add_counter_names("from_the_future");
  recorded.Add(42);
  const auto m = replay::CounterMap::of(h, npu_counters());
  CHECK_FALSE(m.has(index_of("macs_issued")));
  CHECK(m.value(recorded, index_of("macs_issued")) == std::nullopt);
  CHECK(m.value(recorded, index_of("cycles")) == 1000u + index_of("cycles"));
  CHECK(m.value(recorded, index_of("macs_useful")) == 1000u + index_of("macs_useful"));
  CHECK(m.value(recorded, index_of("saturations")) == 1000u + index_of("saturations"));
  REQUIRE(m.unknown().size() == 1);
  CHECK(m.unknown()[0] == "from_the_future");
  const auto cur = m.current(recorded);
  REQUIRE(cur.size() == static_cast<size_t>(isa::kNumCounters));
  CHECK(cur[index_of("macs_issued")] == 0u);
  CHECK(cur[index_of("retired_end")] == 1000u + index_of("retired_end"));
}

TEST_CASE("a new packet names its counters", "[replay][counters]") {
  const auto dir = test::temp_dir("counter_names");
  const auto path = (dir / "mlp.bpk").string();
  run::RunOptions o;
  o.workload = "mlp";
  test::record(path, o);
  const auto p = read(path);
  CHECK(p.major == replay::kFormatMajor);
  REQUIRE(p.header.counter_names_size() == isa::kNumCounters);
  for (int i = 0; i < isa::kNumCounters; ++i)
    CHECK(p.header.counter_names(i) == isa::kCounterNames[i]);
  // The format-1 list is this build's list as of format 2.0 (a counter added later goes to the
  // end of the table, or anywhere: the names keep old packets right either way).
  for (size_t i = 0; i < replay::kFormat1CounterNames.size(); ++i)
    CHECK(isa::find_counter(replay::kFormat1CounterNames[i]).has_value());
}

TEST_CASE("bud bisect diffs two format-1 packets by counter name", "[replay][counters]") {
  const auto dir = test::temp_dir("counter_names_diff");
  const auto out = (dir / "diff.json").string();
  const int rc =
      test::shell(test::bud_exe() + " bisect --json --good '" + data("pre_names_fast.bpk") +
                  "' --bad '" + data("pre_names_slow.bpk") + "' > '" + out + "' 2>&1");
  const auto json = test::slurp(out);
  INFO(json);
  CHECK(rc == 1);
  // The verdict and per-counter evidence the pre-change build gave for the same two packets (the
  // class line is the mechanism rule's of docs/bisect.md).
  CHECK(json.find("\"verdict\":\"performance\"") != std::string::npos);
  CHECK(json.find("\"mechanism\":\"memory\"") != std::string::npos);
  CHECK(json.find("memory: +7462 (load.stall_mem +6592, store.stall_mem +550, fetch.stall_mem +320)") !=
        std::string::npos);
  CHECK(json.find("load.stall_mem: +6592 per window (good 2196, bad 8788)") != std::string::npos);
  CHECK(json.find("dram_rd_latency_sum: +55307 per window (good 31892, bad 87199)") !=
        std::string::npos);
}

TEST_CASE("replaying a format-1 packet asks to record it again", "[replay][counters]") {
  const auto dir = test::temp_dir("counter_names_replay");
  const auto out = (dir / "replay.txt").string();
  const int rc = test::shell(test::bud_exe() + " replay --allow-revision-mismatch '" +
                             data("pre_names_fast.bpk") + "' > '" + out + "' 2>&1");
  const auto text = test::slurp(out);
  INFO(text);
  CHECK(rc == 125);
  CHECK(text.find("recorded by an older format (1.0)") != std::string::npos);
}
