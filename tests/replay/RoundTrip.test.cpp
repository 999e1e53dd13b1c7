// Record -> replay with the NPU: bit-exact digests over seeds and memory configurations,
// determinism of the packet bytes, --at, symptoms, divergence and revision mismatch.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "ReplayTestSupport.h"
#include "bud/ModelRevision.h"
#include "emu/npu/NpuEmulator.h"
#include "emu/run/Designs.h"
#include "replay/Replayer.h"

using namespace bud;
using namespace bud::replay;

namespace {

using test::small_intervals;

struct MemCase {
  std::string name;
  emu::DramConfig dram;
};

std::vector<MemCase> memory_cases() {
  std::vector<MemCase> v;
  v.push_back({"default", {}});
  MemCase slow{"latency150_jitter60", {}};
  slow.dram.base_latency = 150;
  slow.dram.jitter = 60;
  v.push_back(slow);
  MemCase narrow{"bw8_in_order_4_outstanding", {}};
  narrow.dram.bytes_per_cycle = 8;
  narrow.dram.reorder = false;
  narrow.dram.max_outstanding = 4;
  v.push_back(narrow);
  MemCase bursty{"bursty", {}};
  bursty.dram.bursty = true;
  v.push_back(bursty);
  return v;
}

// Records and replays `n` seeds per memory configuration; returns (verified, total).
// Each sweep has its own directory (ctest runs test cases in parallel, and temp_dir empties it).
std::pair<int, int> sweep(const std::string& workload, int seeds) {
  const auto dir = test::temp_dir("sweep_" + workload + "_" + std::to_string(seeds));
  int ok = 0, total = 0;
  for (const auto& mc : memory_cases()) {
    for (int s = 1; s <= seeds; ++s) {
      run::RunOptions o;
      o.workload = workload;
      o.seed = static_cast<uint64_t>(s);
      o.emulator.dram = mc.dram;
      o.emulator.dram.seed = static_cast<uint64_t>(1000 + s);
      const auto path = (dir / (mc.name + "_" + std::to_string(s) + ".bpk")).string();
      const auto rec = test::record(path, o, small_intervals());
      const auto out = replay_file(path, {});
      ++total;
      INFO(mc.name << " seed " << s << ": " << out.message);
      CHECK(out.verdict == Verdict::Passed);
      CHECK(out.digests_checked > 0);
      CHECK_FALSE(out.divergence);
      CHECK(out.report.cycles == rec.report.cycles);
      if (out.verdict == Verdict::Passed && !out.divergence) ++ok;
    }
  }
  return {ok, total};
}

}  // namespace

TEST_CASE("record -> replay verifies bit for bit over seeds and memory configurations",
          "[replay][roundtrip]") {
  const auto [ok, total] = sweep("gemm_small", 5);
  CHECK(ok == total);
}

TEST_CASE("record -> replay: 100 seeds x 4 memory configurations all verify",
          "[replay][roundtrip][slow]") {
  const auto [ok, total] = sweep("gemm_small", 100);
  WARN("replay success rate: " << ok << "/" << total);
  CHECK(ok == total);
}

TEST_CASE("the same recording twice gives byte-identical packets", "[replay][roundtrip]") {
  const auto dir = test::temp_dir("identical");
  run::RunOptions o;
  o.workload = "mlp";
  test::record((dir / "a.bpk").string(), o, small_intervals());
  test::record((dir / "b.bpk").string(), o, small_intervals());
  CHECK(test::read_bytes((dir / "a.bpk").string()) == test::read_bytes((dir / "b.bpk").string()));
}

TEST_CASE("a recorded symptom reproduces and --at starts from the nearest checkpoint",
          "[replay][roundtrip][symptom]") {
  const auto dir = test::temp_dir("symptom");
  SECTION("result mismatch from an injected fault") {
    const auto path = (dir / "mismatch.bpk").string();
    RecordConfig fine;
    fine.digest_interval = 64;
    fine.checkpoint_interval = 256;
    const auto rec = test::record(path, test::memflip_run(), fine);
    CHECK_FALSE(rec.report.passed);
    std::string error;
    auto p = read_packet(path, error);
    REQUIRE(p);
    REQUIRE(p->symptom);
    CHECK(p->symptom->kind() == pb::Symptom::RESULT_MISMATCH);
    REQUIRE(p->header.faults_size() == 1);
    CHECK(p->header.faults(0).text() == "memflip:dram:0x10000[3]@10");
    const auto out = bud::replay::replay(*p, {});
    CHECK(out.verdict == Verdict::Reproduced);
    CHECK(out.exit_code() == 1);
    ReplayOptions at;
    at.at = p->last_cycle() - 10;
    const auto late = bud::replay::replay(*p, at);
    CHECK(late.verdict == Verdict::Reproduced);
    CHECK(late.start_cycle == p->checkpoints.back().cycle());
    CHECK(late.start_cycle > 0);
  }
  SECTION("hang from a starved queue") {
    const auto path = (dir / "hang.bpk").string();
    test::record(path, test::starved_queue_run(), small_intervals());
    const auto out = replay_file(path, {});
    REQUIRE(out.replay_symptom);
    CHECK(out.replay_symptom->kind() == pb::Symptom::HANG);
    CHECK(out.verdict == Verdict::Reproduced);
  }
}

TEST_CASE("divergence, revision mismatch and fixed symptoms are classified",
          "[replay][roundtrip][verdict]") {
  const auto dir = test::temp_dir("verdicts");
  run::RunOptions o;
  o.workload = "mlp";
  const auto base = (dir / "base.bpk").string();
  test::record(base, o, small_intervals());

  SECTION("a changed digest is the first divergent window") {
    const auto path = (dir / "diverged.bpk").string();
    test::PacketEdits edits;
    edits.window = [](pb::Window& w) {
      if (w.index() == 3) w.mutable_digests(1)->set_digest(w.digests(1).digest() ^ 1);
    };
    test::rewrite_packet(base, path, edits);
    const auto out = replay_file(path, {});
    CHECK(out.verdict == Verdict::Diverged);
    CHECK(out.exit_code() == 125);
    REQUIRE(out.divergence);
    CHECK(out.divergence->window == 3);
    CHECK(out.divergence->cycle == 3 * 1024 + 2 * 256);
  }
  SECTION("another model revision needs --allow-revision-mismatch") {
    const auto path = (dir / "other_rev.bpk").string();
    test::PacketEdits edits;
    edits.header = [](pb::Header& h) { h.set_model_revision("0123456789abcdef"); };
    test::rewrite_packet(base, path, edits);
    const auto refused = replay_file(path, {});
    CHECK(refused.verdict == Verdict::Incompatible);
    CHECK(refused.message.find("0123456789abcdef") != std::string::npos);
    ReplayOptions allow;
    allow.allow_revision_mismatch = true;
    const auto out = replay_file(path, allow);
    CHECK(out.verdict == Verdict::Passed);
    CHECK_FALSE(out.notes.empty());
  }
  SECTION("a packet of an array variant this bud lacks is refused, naming it") {
    // Each array variant is its own design and model revision (docs/isa.md "Array sizes"). A
    // variant not built here (or a design nobody has) is refused before anything runs.
    for (const std::string design : {"npu16", "npu32", "npu99"}) {
      std::string error;
      if (!emu::packet_design_revision(design, error).empty()) continue;  // built here
      const auto path = (dir / ("design_" + design + ".bpk")).string();
      test::PacketEdits edits;
      edits.header = [&](pb::Header& h) { h.set_design(design); };
      test::rewrite_packet(base, path, edits);
      ReplayOptions allow;
      allow.allow_revision_mismatch = true;  // the design, not the revision, is what is missing
      const auto refused = replay_file(path, allow);
      INFO(refused.message);
      CHECK(refused.verdict == Verdict::Incompatible);
      CHECK(refused.message.find("'" + design + "'") != std::string::npos);
      if (design != "npu99") CHECK(refused.message.find("-DBUD_NPU_VARIANTS") != std::string::npos);
    }
  }
  SECTION("a symptom that no longer happens is fixed") {
    const auto path = (dir / "fixed.bpk").string();
    test::PacketEdits edits;
    edits.symptom = [](std::optional<pb::Symptom>& s) {
      s = pb::Symptom();
      s->set_kind(pb::Symptom::RESULT_MISMATCH);
      s->set_message("outputs differed once");
    };
    test::rewrite_packet(base, path, edits);
    const auto out = replay_file(path, {});
    CHECK(out.verdict == Verdict::Fixed);
    CHECK(out.exit_code() == 0);
  }
}

TEST_CASE("two fresh NPU emulators digest alike (VerilatedContext padding)", "[replay]") {
  // Verilator serialises VerilatedContext::m_s as raw bytes, struct padding included, and
  // NpuEmulator allocates the context with plain new: Emulator::save() and digest() then hash
  // uninitialised heap bytes (valgrind: "created by make_unique<VerilatedContext>",
  // emu/npu/NpuEmulator.cpp). Dirtying the heap before construction shows it.
  run::RunOptions o;
  o.workload = "gemm_small";
  auto p = run::prepare(o);
  REQUIRE(p);
  auto fresh_digest = [&] {
    emu::NpuEmulator e(o.emulator);
    REQUIRE(e.load(p->job).empty());
    e.step(100);
    return e.digest();
  };
  const uint64_t first = fresh_digest();
  // Heap churn as a real process has it between two runs (a whole run, then reference models).
  run::RunOptions other;
  other.workload = "mlp";
  auto q = run::prepare(other);
  REQUIRE(q);
  (void)run::execute(*q, other);
  CHECK(fresh_digest() == first);
}

// Registered per built variant by tests/replay/CMakeLists.txt (`-c <variant>`, label `variants`).
TEST_CASE("a packet recorded on an array variant replays on it", "[.variants]") {
  std::string npu8_error;
  const std::string npu8_revision = emu::packet_design_revision("npu", npu8_error);
  for (const auto& name : emu::design_names()) {
    if (name == "npu" || !isa::find_array_variant(name)) continue;
    DYNAMIC_SECTION(name) {
      const auto dir = test::temp_dir("variant_" + name);  // ctest runs the variants in parallel
      run::RunOptions o;
      o.workload = "mlp";
      o.emulator.design = name;
      const auto path = (dir / (name + ".bpk")).string();
      test::record(path, o, small_intervals());
      std::string error;
      auto packet = read_packet(path, error);
      REQUIRE(packet);
      CHECK(packet->header.design() == name);
      CHECK(packet->header.model_revision() == emu::design_revision(name));
      CHECK(packet->header.model_revision() != npu8_revision);
      const auto out = replay_file(path, {});
      INFO(out.message);
      CHECK(out.verdict == Verdict::Passed);
      // The same packet claiming the default design has another revision: refused.
      const auto as_npu8 = (dir / (name + "_as_npu8.bpk")).string();
      test::PacketEdits edits;
      edits.header = [](pb::Header& h) { h.set_design("npu"); };
      test::rewrite_packet(path, as_npu8, edits);
      const auto refused = replay_file(as_npu8, {});
      CHECK(refused.verdict == Verdict::Incompatible);
      CHECK(refused.message.find(npu8_revision) != std::string::npos);
    }
  }
}
