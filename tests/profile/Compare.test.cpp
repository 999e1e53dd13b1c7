// `bud profile --compare`: two profiles of one workload read back from their JSON, per-layer
// deltas, the first persistent divergence and its mechanism, and every malformed or mismatched
// input refused with the file and JSON path at fault.
#include "profile/Compare.h"
#include "profile/Memo.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "profile/Report.h"
#include "profile/Roofline.h"
#include "tests/profile/CliSupport.h"
#include "tests/profile/ProfileTestSupport.h"

using namespace bud;
using namespace bud::profile;

namespace {

/// What `bud profile --json` prints for a profiled run of `o` (the run part: what compare reads).
json::Json profile_output(const run::RunOptions& o) {
  const auto r = profile_test::profiled(o);
  const auto p = build_profile(*r.run.attribution, r.prepared.program, r.run.report);
  const auto roofline = project(r.prepared.workload, r.prepared.program, o.emulator, p);
  json::Json j;
  j["run"]["workload"] = r.run.report.workload;
  j["run"]["seed"] = r.run.report.seed;
  j["run"]["mem_seed"] = r.run.report.mem_seed;
  j["run"]["model_revision"] = r.run.report.model_revision;
  j["profile"] = profile_json(p, roofline);
  return j;
}

json::Json profile_output(const std::string& workload, uint32_t latency = 0) {
  run::RunOptions o;
  o.workload = workload;
  if (latency) o.emulator.dram.base_latency = latency;
  return profile_output(o);
}

ProfileInput read(const json::Json& j, const std::string& file) {
  auto in = read_profile_json(j, file);
  INFO(in.error());
  REQUIRE(in);
  return std::move(in).value();
}

std::string read_error(const json::Json& j) {
  auto in = read_profile_json(j, "p.json");
  REQUIRE_FALSE(in);
  return in.error();
}

// Moves `cycles` of layer `i` from useful to memory (dram_wait) slots, lengthens its span and
// shifts it and every later layer and the run by the same cycles: what a memory regression
// confined to that layer would look like.
void slow_down(Profile& p, size_t i, uint64_t cycles) {
  auto& l = p.layers[i];
  const uint64_t slots = cycles * p.array_macs;
  l.topdown.slots += slots;
  l.topdown.sub[static_cast<size_t>(SubClass::DramWait)] += slots;
  l.cycles += cycles;
  for (size_t j = i; j < p.layers.size(); ++j) {
    if (j > i) p.layers[j].first_dispatch += cycles;
    p.layers[j].last_retire += cycles;
  }
  p.cycles += cycles;
}

}  // namespace

TEST_CASE("compare: a slower memory is localized to a layer with class memory",
          "[profile][compare]") {
  const auto base = read(profile_output("mlp"), "base.json");
  const auto next = read(profile_output("mlp", 160), "new.json");
  REQUIRE(check_comparable(base, next).empty());
  const double tol = 0.05;
  const auto c = compare(base.profile, next.profile, tol);
  CHECK(c.cycles.change > tol);
  REQUIRE(c.layers.size() == 3);
  REQUIRE(c.divergence);
  const auto& d = *c.divergence;
  CHECK(d.kind == CompareDivergence::Kind::Layer);
  REQUIRE(d.layer >= 0);
  // The first layer whose own span is beyond the tolerance, and every layer's end from there on.
  int first = -1;
  for (size_t i = 0; i < c.layers.size() && first < 0; ++i)
    if (c.layers[i].cycles.change > tol) first = static_cast<int>(i);
  CHECK(d.layer == first);
  for (size_t i = static_cast<size_t>(d.layer); i < c.layers.size(); ++i)
    CHECK(c.layers[i].end.change > tol);
  CHECK(d.mechanism == TopClass::Memory);
  CHECK(parent_of(d.mechanism_sub) == TopClass::Memory);
  CHECK(d.share_change_bp > 0);
  CHECK(d.class_cycles_change > 0);
  CHECK(d.rule.rfind("T3", 0) == 0);
  bool stall_mem = false;
  for (const auto& e : d.evidence)
    if (e.counter == "load.stall_mem") {
      stall_mem = true;
      CHECK(e.next > e.base);
    }
  CHECK(stall_mem);
  // The ranking before and after, and the JSON of it all.
  const auto j = comparison_json(c, base, next);
  CHECK(j["divergence"]["mechanism"] == "memory");
  CHECK(j["divergence"]["layer"] == base.profile.layers[d.layer].name);
  CHECK(j["ranking"]["before"].size() == 3);
  CHECK(j["ranking"]["after"].size() == 3);
  CHECK(j["ranking"]["after"][0]["dominant"] == "memory");
  const auto text = comparison_text(c, base, next);
  CHECK(text.find("mechanism  memory") != std::string::npos);
  CHECK(text.find("bottlenecks after") != std::string::npos);
}

TEST_CASE("compare: identical runs do not diverge", "[profile][compare]") {
  const auto j = profile_output("conv");
  const auto base = read(j, "a.json");
  const auto next = read(j, "b.json");
  // Reading back gives the figures and the ranking build_profile gave.
  CHECK(base.profile.layers.size() == 4);
  CHECK(base.profile.cycles == j["profile"]["cycles"].get<uint64_t>());
  REQUIRE(base.profile.ranking.size() == j["profile"]["ranking"].size());
  for (size_t i = 0; i < base.profile.ranking.size(); ++i) {
    const auto& b = base.profile.ranking[i];
    CHECK(j["profile"]["ranking"][i]["layer"] == base.profile.layers[b.layer].name);
    CHECK(j["profile"]["ranking"][i]["rule"] == b.rule);
    CHECK(j["profile"]["ranking"][i]["lost_cycles"] == b.lost_cycles);
  }
  const auto c = compare(base.profile, next.profile, 0.0);
  CHECK_FALSE(c.divergence);
  CHECK(c.cycles.change == 0);
  for (const auto& l : c.layers) {
    CHECK(l.cycles.change == 0);
    CHECK(l.end.change == 0);
    CHECK(l.base_bp == l.next_bp);
    CHECK_FALSE(l.diverges);
  }
  CHECK(comparison_json(c, base, next)["divergence"].is_null());
}

TEST_CASE("compare: the first persistent layer, not a transient one", "[profile][compare]") {
  const auto base = read(profile_output("mlp"), "base.json");
  const double tol = 0.05;
  SECTION("a regression in the last layer is localized there") {
    Profile next = base.profile;
    const uint64_t extra = next.cycles / 5;  // 20% of the run, all in fc3
    slow_down(next, 2, extra);
    const auto c = compare(base.profile, next, tol);
    REQUIRE(c.divergence);
    CHECK(c.divergence->kind == CompareDivergence::Kind::Layer);
    CHECK(c.divergence->layer == 2);
    CHECK(c.divergence->mechanism == TopClass::Memory);
    CHECK(c.divergence->mechanism_sub == SubClass::DramWait);
    CHECK(c.divergence->class_cycles_change == static_cast<int64_t>(extra));
  }
  SECTION("a layer that is slower but made up for later is not the divergence") {
    // fc1 slower by half, fc2 as much faster (the later layers end where they did), and the
    // run longer after the last layer: the divergence that persists is in the tail.
    Profile next = base.profile;
    slow_down(next, 0, next.layers[0].cycles / 2);
    for (size_t j = 1; j < next.layers.size(); ++j) {
      next.layers[j].first_dispatch = base.profile.layers[j].first_dispatch;
      next.layers[j].last_retire = base.profile.layers[j].last_retire;
    }
    next.cycles = base.profile.cycles + base.profile.cycles / 10;
    const auto c = compare(base.profile, next, tol);
    CHECK(c.layers[0].diverges);
    REQUIRE(c.divergence);
    CHECK(c.divergence->kind == CompareDivergence::Kind::Tail);
    CHECK(c.divergence->layer == -1);
    CHECK(c.divergence->scope == "tail");
  }
  SECTION("a longer start-up: accumulated from the first layer, class host") {
    // The host starts the program later: every layer keeps its span but ends later, and the
    // idle cycles before the first command are attributed to that command (layer 0's slots).
    Profile next = base.profile;
    const uint64_t later = next.cycles / 10;
    for (auto& l : next.layers) {
      l.first_dispatch += later;
      l.last_retire += later;
    }
    next.layers[0].topdown.slots += later * next.array_macs;
    next.layers[0].topdown.sub[static_cast<size_t>(SubClass::Idle)] += later * next.array_macs;
    next.cycles += later;
    const auto c = compare(base.profile, next, tol);
    REQUIRE(c.divergence);
    CHECK(c.divergence->kind == CompareDivergence::Kind::Accumulated);
    CHECK(c.divergence->layer == 0);
    CHECK(c.divergence->mechanism == TopClass::Host);
    CHECK(c.divergence->class_cycles_change == static_cast<int64_t>(later));
    for (const auto& l : c.layers) CHECK_FALSE(l.diverges);
  }
  SECTION("within the tolerance nothing diverges") {
    Profile next = base.profile;
    slow_down(next, 1, next.cycles / 100);  // +1% of the run
    // (each layer's change is relative to its own base: fc2's span grew by more than 1%)
    CHECK_FALSE(compare(base.profile, next, tol).divergence);
    const auto tight = compare(base.profile, next, 0.001);
    REQUIRE(tight.divergence);
    CHECK(tight.divergence->layer == 1);
  }
}

TEST_CASE("compare: malformed and mismatched profiles are errors naming file and path",
          "[profile][compare]") {
  const auto good = profile_output("gemm_small");
  {
    auto j = good;
    j["profile"]["layers"][0].erase("cycles");
    CHECK(read_error(j) == "p.json: $.profile.layers[0].cycles: missing");
  }
  {
    auto j = good;
    j["profile"]["layers"][0]["engine_cycles"]["load"]["stall_mem"] = "many";
    CHECK(read_error(j) ==
          "p.json: $.profile.layers[0].engine_cycles.load.stall_mem: is string, expected "
          "unsigned integer");
  }
  {
    auto j = good;
    j["profile"]["layers"][0]["topdown"]["classes"]["memory"]["sub"]["dram_wait"] =
        j["profile"]["layers"][0]["topdown"]["classes"]["memory"]["sub"]["dram_wait"]
            .get<uint64_t>() +
        1;
    CHECK(read_error(j).rfind("p.json: $.profile.layers[0].topdown: sub-classes sum to", 0) == 0);
  }
  {
    auto j = good;
    j.erase("run");
    CHECK(read_error(j) == "p.json: $.run: missing");
  }
  {
    json::Json err;
    err["error"] = "bad_input";
    err["message"] = "bud profile: unknown built-in workload 'x'";
    err["exit_code"] = 2;
    CHECK(read_error(err).find("an error report, not a profile") != std::string::npos);
    CHECK(read_error(json::Json::array()).find("$: is array") != std::string::npos);
  }
  // Different workloads, and the same name with other layers.
  const auto a = read(good, "a.json");
  const auto b = read(profile_output("mlp"), "b.json");
  CHECK(check_comparable(a, b) ==
        "a.json and b.json profile different workloads: gemm_small and mlp");
  auto renamed = profile_output("mlp");
  renamed["run"]["workload"] = "gemm_small";
  const auto c = read(renamed, "c.json");
  CHECK(check_comparable(a, c).find("different layers") != std::string::npos);
}

TEST_CASE("bud profile --compare end to end", "[profile][compare][cli]") {
  using profile_test::one_object;
  using profile_test::run_bud;
  const std::string base = profile_test::scratch("base.json");
  const std::string next = profile_test::scratch("new.json");
  const std::string other = profile_test::scratch("other.json");
  auto b = run_bud("profile mlp --json");
  REQUIRE(b.status == 0);
  profile_test::write_file(base, b.out);
  auto n = run_bud("profile mlp --mem-latency 160 --json");
  REQUIRE(n.status == 0);
  profile_test::write_file(next, n.out);
  auto o = run_bud("profile gemm_small --json");
  REQUIRE(o.status == 0);
  profile_test::write_file(other, o.out);

  auto c = run_bud("profile --compare " + base + " " + next + " --json");
  INFO(c.err);
  CHECK(c.status == 1);  // a persistent divergence
  auto j = one_object(c.out);
  CHECK(j["compare"]["divergence"]["mechanism"] == "memory");
  CHECK(j["compare"]["divergence"]["kind"] == "layer");
  CHECK(j["compare"]["layers"].size() == 3);

  // The recorded conditions differ in the DRAM latency alone: it is named as the cause, and the
  // counters' memory class as what it moved (a longer wait: dram_wait, latency-bound).
  CHECK(j["compare"]["conditions"].size() == 1);
  CHECK(j["compare"]["conditions"][0]["condition"] == "dram_base_latency_cycles");
  CHECK(j["compare"]["divergence"]["cause"]["condition"] == "dram_base_latency_cycles");
  CHECK(j["compare"]["divergence"]["cause"]["base"] == "40");
  CHECK(j["compare"]["divergence"]["cause"]["new"] == "160");
  CHECK(j["compare"]["divergence"]["mechanism_sub"] == "dram_wait");
  CHECK(j["compare"]["divergence"]["memory_split"]["latency_cycles_change"].get<int64_t>() >
        j["compare"]["divergence"]["memory_split"]["bandwidth_cycles_change"].get<int64_t>());

  auto text = run_bud("profile --compare " + base + " " + next + " --tolerance 5");
  CHECK(text.status == 1);
  CHECK(text.out.find("conditions differ:\n  dram_base_latency_cycles 40 -> 160") !=
        std::string::npos);
  CHECK(text.out.find("cause      run condition dram_base_latency_cycles 40 -> 160") !=
        std::string::npos);
  CHECK(text.out.find("moved      memory / dram_wait") != std::string::npos);

  auto same = run_bud("profile --compare " + base + " " + base + " --json");
  CHECK(same.status == 0);
  CHECK(one_object(same.out)["compare"]["divergence"].is_null());

  auto mismatched = run_bud("profile --compare " + base + " " + other + " --json");
  CHECK(mismatched.status == 2);
  j = one_object(mismatched.out);
  CHECK(j["error"] == "bad_input");
  CHECK(j["message"].get<std::string>().find("different workloads") != std::string::npos);

  auto missing = run_bud("profile --compare " + base + " /nonexistent/x.json --json");
  CHECK(missing.status == 2);
  CHECK(one_object(missing.out)["message"].get<std::string>().find("/nonexistent/x.json") !=
        std::string::npos);

  auto not_json = run_bud("profile --compare " + base + " docs/profiling.md --json");
  CHECK(not_json.status == 2);
  CHECK(one_object(not_json.out)["message"].get<std::string>().find("not JSON") !=
        std::string::npos);

  auto run_option = run_bud("profile --compare " + base + " " + next + " --mem-latency 5 --json");
  CHECK(run_option.status == 2);
  auto negative = run_bud("profile --compare " + base + " " + next + " --tolerance -1 --json");
  CHECK(negative.status == 2);
  std::remove(base.c_str());
  std::remove(next.c_str());
  std::remove(other.c_str());
}

TEST_CASE("bud profile --compare names a clock change and a bandwidth cut before a mechanism",
          "[profile][compare][conditions][cli]") {
  using profile_test::one_object;
  using profile_test::run_bud;
  const std::string nominal = profile_test::scratch("nominal.json");
  const std::string low = profile_test::scratch("low.json");
  const std::string narrow = profile_test::scratch("narrow.json");
  auto b = run_bud("profile mem_bound --json");
  REQUIRE(b.status == 0);
  profile_test::write_file(nominal, b.out);
  CHECK(one_object(b.out)["profile"]["conditions"]["operating_point"] == "nominal");
  CHECK(one_object(b.out)["profile"]["conditions"]["clock_mhz"] == 1000);
  auto l = run_bud("profile mem_bound --point low --json");
  REQUIRE(l.status == 0);
  profile_test::write_file(low, l.out);
  auto n = run_bud("profile mem_bound --mem-bw 2 --json");
  REQUIRE(n.status == 0);
  profile_test::write_file(narrow, n.out);

  // The operating point: the clock and the DRAM timing in cycles it derives differ; the point
  // leads, whatever the counters moved.
  auto c = run_bud("profile --compare " + nominal + " " + low + " --json");
  INFO(c.err);
  CHECK(c.status == 1);
  auto j = one_object(c.out)["compare"];
  bool clock = false;
  for (const auto& x : j["conditions"]) {
    if (x["condition"] == "clock_mhz") {
      clock = true;
      CHECK(x["base"] == "1000");
      CHECK(x["new"] == "500");
    }
  }
  CHECK(clock);
  CHECK(j["divergence"]["cause"]["condition"] == "operating_point");
  CHECK(j["divergence"]["cause"]["new"] == "low");
  CHECK(j["divergence"]["cause"]["effect"].get<std::string>().find("DRAM timing is in ns") !=
        std::string::npos);
  auto text = run_bud("profile --compare " + nominal + " " + low);
  CHECK(text.out.find("cause      run condition operating_point nominal -> low") !=
        std::string::npos);

  // A narrower channel: the cause is the bandwidth, and the memory change is a slower
  // transfer (load_transfer, T3b), not a longer wait, though the counters count both as
  // load.stall_mem.
  c = run_bud("profile --compare " + nominal + " " + narrow + " --json");
  CHECK(c.status == 1);
  j = one_object(c.out)["compare"];
  CHECK(j["conditions"].size() == 1);
  CHECK(j["divergence"]["cause"]["condition"] == "dram_bytes_per_cycle");
  CHECK(j["divergence"]["mechanism"] == "memory");
  CHECK(j["divergence"]["mechanism_sub"] == "load_transfer");
  CHECK(j["divergence"]["rule"].get<std::string>().rfind("T3b", 0) == 0);
  CHECK(j["ranking"]["after"][0]["bound"] == "bandwidth");
  std::remove(nominal.c_str());
  std::remove(low.c_str());
  std::remove(narrow.c_str());
}

TEST_CASE("bud profile --compare on two packets, or a packet and a profile",
          "[profile][compare][packet][cli]") {
  using profile_test::one_object;
  using profile_test::run_bud;
  const std::string before = profile_test::scratch("before.bpk");
  const std::string after = profile_test::scratch("after.bpk");
  const std::string base = profile_test::scratch("before.json");
  REQUIRE(run_bud("run mlp --record " + before).status == 0);
  REQUIRE(run_bud("run mlp --mem-latency 160 --record " + after).status == 0);
  const auto b = run_bud("profile mlp --json");
  REQUIRE(b.status == 0);
  profile_test::write_file(base, b.out);

  // Packets are profiled as recorded: the same verdict as from the two --json outputs.
  const auto packets = run_bud("profile --compare " + before + " " + after + " --json");
  INFO(packets.err);
  CHECK(packets.status == 1);
  auto j = one_object(packets.out);
  CHECK(j["compare"]["divergence"]["mechanism"] == "memory");
  CHECK(j["compare"]["base"]["file"] == before);
  // A packet's conditions come from the options it recorded.
  CHECK(j["compare"]["divergence"]["cause"]["condition"] == "dram_base_latency_cycles");
  const auto mixed = run_bud("profile --compare " + base + " " + after + " --json");
  CHECK(mixed.status == 1);
  CHECK(one_object(mixed.out)["compare"]["layers"] == j["compare"]["layers"]);
  const auto same = run_bud("profile --compare " + base + " " + before + " --json");
  CHECK(same.status == 0);
  CHECK(one_object(same.out)["compare"]["cycles"]["change"] == 0);
  std::remove(before.c_str());
  std::remove(after.c_str());
  std::remove(base.c_str());
}

TEST_CASE("memo: the mechanism leads, competing classes are weighed, risks are named",
          "[profile][memo]") {
  const auto base = read(profile_output("mlp"), "base.json");
  const auto next = read(profile_output("mlp", 160), "new.json");
  const auto c = compare(base.profile, next.profile, 0.05);
  const Memo m = make_memo(c, base, next);
  REQUIRE(m.diverged);
  CHECK(m.slice == "fc1");
  CHECK(m.divergence_kind == "layer");
  CHECK(m.slice_cycles.change > 0.05);
  REQUIRE_FALSE(m.hypotheses.empty());
  const Hypothesis& lead = m.hypotheses.front();
  CHECK(lead.leading);
  CHECK(lead.cls == TopClass::Memory);
  CHECK(lead.sub == SubClass::DramWait);
  CHECK(lead.cycles_change > 0);
  CHECK_FALSE(lead.evidence.empty());
  // Competing classes grew less; classes whose cycles did not grow are ruled out, after them.
  bool seen_ruled_out = false;
  for (size_t i = 1; i < m.hypotheses.size(); ++i) {
    const auto& h = m.hypotheses[i];
    CHECK_FALSE(h.leading);
    CHECK(h.ruled_out == (h.cycles_change <= 0));
    if (h.ruled_out) seen_ruled_out = true;
    else CHECK_FALSE(seen_ruled_out);
    if (!h.ruled_out) CHECK(h.cycles_change <= lead.cycles_change);
  }
  // Same revision and seeds: the change is the leading rule's remedy on the slice.
  CHECK(m.change.rfind("on fc1: ", 0) == 0);
  CHECK(m.expected.find(std::to_string(lead.cycles_change)) != std::string::npos);
  // The slower memory slows every layer: each is a risk of the same mechanism.
  REQUIRE(m.risks.size() == 2);
  CHECK(m.risks[0].rfind("fc2 also slowed", 0) == 0);
  const std::string md = memo_markdown(m);
  for (const char* section : {"## Symptom", "## First failing stage", "## Tags", "## Mechanism",
                              "## Smallest reversible change", "## Regression risk"})
    CHECK(md.find(section) != std::string::npos);
  CHECK(md.find("[base.json](base.json)") != std::string::npos);
  CHECK(memo_json(m)["hypotheses"][0]["class"] == "memory");
}

TEST_CASE("memo: identical runs have nothing to explain", "[profile][memo]") {
  const auto base = read(profile_output("mlp"), "base.json");
  const auto next = read(profile_output("mlp"), "new.json");
  const Memo m = make_memo(compare(base.profile, next.profile, 0.05), base, next);
  CHECK_FALSE(m.diverged);
  CHECK(m.hypotheses.empty());
  CHECK(memo_markdown(m).find("nothing to explain") != std::string::npos);
}

TEST_CASE("bud memo on two packets writes the memo and refuses bad input", "[profile][memo][cli]") {
  using profile_test::run_bud;
  const std::string before = profile_test::scratch("memo_before.bpk");
  const std::string after = profile_test::scratch("memo_after.bpk");
  const std::string md = profile_test::scratch("memo.md");
  REQUIRE(run_bud("run mlp --record " + before).status == 0);
  REQUIRE(run_bud("run mlp --mem-latency 160 --record " + after).status == 0);
  auto r = run_bud("memo " + before + " " + after + " -o " + md);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("Leading hypothesis: memory / dram_wait") != std::string::npos);
  auto bad = run_bud("memo " + before + " /nonexistent/x.json --json");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("\"exit_code\":2") != std::string::npos);
}
