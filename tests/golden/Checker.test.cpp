#include "emu/golden/Checker.h"

#include <catch2/catch.hpp>
#include <regex>

#include "emu/workload/Builtins.h"

using namespace bud;
using bud::isa::Opcode;

namespace {

golden::CheckReport run_corrupted(const char* builtin,
                                  const std::function<void(workload::Program&)>& corrupt) {
  const workload::Workload w = workload::load_builtin(builtin).value();
  workload::Program p = workload::lower(w).value();
  corrupt(p);
  golden::GoldenNpu npu(w.dram_bytes);
  const golden::RunResult r = golden::run_program(npu, p);
  REQUIRE(r.ok);
  return golden::check_outputs(p, workload::run_reference(w), npu.dram());
}

}  // namespace

TEST_CASE("a corrupted GEMM weight address makes the checker fail", "[golden][checker]") {
  const golden::CheckReport rep = run_corrupted("gemm_small", [](workload::Program& p) {
    for (auto& c : p.commands)
      if (c.opcode == Opcode::Gemm) c.wgt_base += 1;
  });
  CHECK_FALSE(rep.ok());
  CHECK(rep.mismatches > 0);
  CHECK(rep.compared == 16 * 20);
  INFO(rep.first_mismatch);
  CHECK(
      std::regex_match(rep.first_mismatch,
                       std::regex(R"(tensor fc index \[\d+, \d+\] expected -?\d+ actual -?\d+)")));
  CHECK(rep.summary().find("elements differ") != std::string::npos);
  REQUIRE(rep.per_tensor.size() == 1);
  CHECK(rep.per_tensor[0].first == "fc");
  CHECK(rep.per_tensor[0].second == rep.mismatches);
}

TEST_CASE("the first mismatch is in the earliest wrong layer", "[golden][checker]") {
  // Corrupt the POST of conv2 (layer 1): conv1 stays right, conv2 and everything after is wrong.
  const golden::CheckReport rep = run_corrupted("conv", [](workload::Program& p) {
    for (auto& c : p.commands)
      if (c.opcode == Opcode::Post && c.layer == 1) c.mult = static_cast<int16_t>(c.mult + 50);
  });
  CHECK_FALSE(rep.ok());
  INFO(rep.first_mismatch);
  CHECK(rep.first_mismatch.rfind("tensor conv2 index [", 0) == 0);
  REQUIRE(rep.per_tensor.size() == 4);
  CHECK(rep.per_tensor[0].second == 0);
  CHECK(rep.per_tensor[1].second > 0);
}

TEST_CASE("a clean run passes with every element compared", "[golden][checker]") {
  const golden::CheckReport rep = run_corrupted("mlp", [](workload::Program&) {});
  CHECK(rep.ok());
  CHECK(rep.compared == 32 * 96 + 32 * 64 + 32 * 10);
  CHECK(rep.summary() == "all 5440 output elements match");
}

TEST_CASE("the checker reads DRAM through a function and reports read failures",
          "[golden][checker]") {
  const workload::Workload w = workload::load_builtin("gemm_small").value();
  const workload::Program p = workload::lower(w).value();
  const workload::ReferenceResult ref = workload::run_reference(w);
  const golden::CheckReport rep =
      golden::check_outputs(p, ref, [](uint32_t, std::span<uint8_t>) { return false; });
  CHECK_FALSE(rep.ok());
  CHECK(rep.error == "cannot read tensor fc from DRAM");
  // All-zero DRAM (nothing ran): every nonzero expected element mismatches.
  std::vector<uint8_t> zeros(w.dram_bytes, 0);
  const golden::CheckReport z = golden::check_outputs(p, ref, zeros);
  CHECK(z.mismatches > 0);
}

TEST_CASE("a program longer than the command ring runs from its encoded commands and checks",
          "[golden][checker][repeat]") {
  const std::string conv(workload::builtin_text("conv").value());
  const workload::Workload w = workload::parse_workload(conv + "repeat: 7\n", "conv7").value();
  const workload::Program p = workload::lower(w).value();
  REQUIRE(p.commands.size() > workload::kRingCommands);
  golden::GoldenNpu npu(w.dram_bytes);
  const golden::RunResult r = golden::run_program(npu, p);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.executed == p.commands.size());
  CHECK(r.gemm_iterations == p.gemm_iterations);
  CHECK(golden::check_outputs(p, workload::run_reference(w), npu.dram()).ok());
}
