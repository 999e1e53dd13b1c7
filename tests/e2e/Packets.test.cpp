// End-to-end: a packet holds everything its replay needs and everything that happened to the
// run: the prompt's interventions, the stage divergence a session saw, an imported model.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "tests/e2e/BudProcess.h"

namespace fs = std::filesystem;

namespace {

/// Runs `script` at the `bud debug gemm_small` prompt in batch mode; the packet it records (the
/// script says PACKET) is returned.
std::string record_at_prompt(const std::string& name, std::string script) {
  const std::string packet = temp_path(name + ".bpk");
  for (size_t at; (at = script.find("PACKET")) != std::string::npos;)
    script.replace(at, 6, packet);
  const std::string file = temp_path(name + ".bud");
  write_file(file, script);
  const auto r = bud({"debug", "gemm_small", "--batch", "-x", file});
  INFO(r.out << r.err);
  REQUIRE(fs::exists(packet));
  std::remove(file.c_str());
  return packet;
}

}  // namespace

TEST_CASE("a packet recorded at the prompt keeps its deposits and the divergence they caused",
          "[e2e][packet][prompt]") {
  // The field trial's session: a DRAM input byte overwritten at cycle 5, then continue: the
  // session stops at the load stage's divergence, and the packet must say so.
  const auto bad = record_at_prompt(
      "deposit", "record start PACKET\nstep 5\ndeposit dram 0x10000 0x55\ncontinue\nrecord stop\n");
  const auto r = bud({"replay", bad, "--json"});
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  const auto j = one_object(r)["packets"][0];
  CHECK(j["verdict"] == "reproduced");
  CHECK(contains(j.dump(), "stage-mismatch"));
  CHECK(contains(j.dump(), "stage load diverged at cycle 456"));
  const auto inspect = bud({"packet", "inspect", bad});
  CHECK(contains(inspect.out, "intervention"));
  // Attached to the packet, the debugger applies the deposit again and stops where it did.
  const std::string cont = temp_path("continue.bud");
  write_file(cont, "continue\n");
  const auto d = bud({"debug", "--packet", bad, "--batch", "-x", cont});
  CHECK(contains(d.out, "stopped at cycle 457: mismatch (stage load diverged at cycle 456"));
  // Bisect names the stage and the cycle of the deposit's first effect.
  const auto b = bud({"bisect", bad, "--json"});
  CHECK(b.status == 1);
  CHECK(one_object(b)["first_failing_stage"] == "load");
  std::remove(bad.c_str());
  std::remove(cont.c_str());

  // The same steps without the deposit: a clean prefix, checked against the golden model.
  const auto good = record_at_prompt("clean", "record start PACKET\nstep 500\nrecord stop\n");
  const auto g = bud({"replay", good});
  INFO(g.out << g.err);
  CHECK(g.status == 0);
  CHECK(contains(g.out, "its stages match the golden model"));
  std::remove(good.c_str());
}

TEST_CASE("a force held across record start and released inside it replays at its cycles",
          "[e2e][packet][prompt]") {
  const auto p = record_at_prompt("force",
                                  "step 3\nforce pmu.cycles 7\nstep 2\nrecord start PACKET\n"
                                  "step 100\nrelease pmu.cycles\nstep 20\nrecord stop\n");
  CHECK(bud({"replay", p}).status == 0);
  const std::string script = temp_path("force-goto.bud");
  write_file(script, "goto 50\nprint pmu.cycles\ngoto 125\nprint pmu.cycles\n");
  const auto d = bud({"debug", "--packet", p, "--batch", "-x", script});
  INFO(d.out << d.err);
  CHECK(contains(d.out, "pmu.cycles = 7 (0x7)"));     // still forced at 50
  CHECK(contains(d.out, "pmu.cycles = 27 (0x1b)"));   // counting again after the release at 105
  std::remove(p.c_str());
  std::remove(script.c_str());
}

TEST_CASE("an ONNX packet replays and bisects without its model file, from any directory",
          "[e2e][packet][onnx]") {
  const fs::path dir = temp_path("onnx-dir");
  fs::create_directories(dir / "models");
  fs::copy_file(fs::path(BUD_SOURCE_DIR) / "examples/onnx/qlinear_tiny.onnx",
                dir / "models/q.onnx", fs::copy_options::overwrite_existing);
  const std::string packet = (dir / "t.bpk").string();
  const auto rec = bud({"run", "models/q.onnx", "--precision", "bf16", "--record", packet},
                       dir.string());
  INFO(rec.out << rec.err);
  REQUIRE(rec.status == 0);
  fs::remove_all(dir / "models");  // the model is gone; the packet must not need it
  const auto inspect = bud({"packet", "inspect", packet, "--json"});
  CHECK(one_object(inspect)["workload"]["onnx_model_bytes"].get<uint64_t>() > 0);
  const auto r = bud({"replay", packet});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "results match the golden model"));
  const auto b = bud({"bisect", packet});
  INFO(b.out << b.err);
  CHECK(b.status == 0);
  fs::remove_all(dir);
}
