#include "emu/workload/Builtins.h"

#include <catch2/catch.hpp>

#include "emu/workload/Lowering.h"

using namespace bud::workload;

TEST_CASE("the five built-ins are embedded, described and valid", "[workload][builtins]") {
  const std::vector<BuiltinInfo> all = list_builtins();
  std::vector<std::string> names;
  for (const auto& b : all) {
    names.push_back(b.name);
    INFO(b.name << ": " << b.description);
    CHECK_FALSE(b.description.empty());
    CHECK(b.description.find("invalid") == std::string::npos);
    const Result<Workload> w = load_builtin(b.name);
    REQUIRE(w.ok());
    CHECK(w->name == b.name);
    CHECK(builtin_text(b.name).has_value());
  }
  CHECK(names ==
        std::vector<std::string>{"compute_bound", "conv", "gemm_small", "mem_bound", "mlp"});
}

TEST_CASE("unknown built-in names list the known ones", "[workload][builtins]") {
  const Result<Workload> w = load_builtin("resnet50");
  CHECK(w.error() ==
        "unknown built-in workload 'resnet50' (built-ins: compute_bound, conv, gemm_small, "
        "mem_bound, mlp)");
}

TEST_CASE("built-ins have the documented shapes and sizes", "[workload][builtins]") {
  struct Expect {
    const char* name;
    size_t layers;
    uint64_t gemm_iterations;
  };
  for (const Expect& e :
       {Expect{"gemm_small", 1, 240}, Expect{"mlp", 3, 6656}, Expect{"conv", 4, 11232},
        Expect{"mem_bound", 1, 16384}, Expect{"compute_bound", 1, 262144}}) {
    INFO(e.name);
    const Result<Workload> w = load_builtin(e.name);
    REQUIRE(w.ok());
    CHECK(w->layers.size() == e.layers);
    const Result<Program> p = lower(*w);
    REQUIRE(p.ok());
    CHECK(p->gemm_iterations == e.gemm_iterations);
    // Small enough for an RTL simulation at ~1M cycles/s to finish well within 2 s.
    CHECK(p->gemm_iterations < 400000);
    CHECK(p->commands.size() <= kRingCommands);
  }
}
