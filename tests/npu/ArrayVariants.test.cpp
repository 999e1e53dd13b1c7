// MAC-array variants (docs/isa.md, "Array sizes"): every built design reports its array in the
// CONFIG and SPAD_CFG CSRs, and that is the table's variant; the lowering and the golden model
// agree with the direct reference on every variant of the table (no RTL needed); and, for the
// variants this build Verilated (-DBUD_NPU_VARIANTS), every built-in runs bit-exactly on the RTL.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "bud/NpuVariants.h"
#include "emu/golden/Checker.h"
#include "emu/golden/GoldenNpu.h"
#include "emu/run/Designs.h"
#include "emu/workload/Builtins.h"
#include "tests/npu/NpuTestSupport.h"
#include "tests/workload/EdgeWorkloads.h"

namespace {

using bud::isa::ArrayConfig;

/// Every NPU design this build has: "npu" (the default variant) and the extra variants.
std::vector<std::string> npu_designs() {
  std::vector<std::string> v = {"npu"};
  for (const auto& b : bud::emu::kBuiltNpuVariants) v.emplace_back(b.name);
  return v;
}

}  // namespace

TEST_CASE("every built NPU design reports its array variant in CONFIG and SPAD_CFG",
          "[npu][array]") {
  std::set<std::string> revisions;
  for (const auto& design : npu_designs()) {
    INFO("design " << design);
    bud::emu::EmulatorConfig c;
    c.design = design;
    auto emu = bud::emu::make_emulator(c);
    const auto config = emu->read_csr(bud::isa::csr::kConfig);
    const auto spad = emu->read_csr(bud::isa::csr::kSpadCfg);
    REQUIRE(config);
    REQUIRE(spad);
    const ArrayConfig got = bud::isa::array_from_csrs(*config, *spad);
    const std::string variant =
        design == "npu" ? std::string(bud::isa::default_array().name) : design;
    const ArrayConfig* want = bud::isa::find_array_variant(variant);
    REQUIRE(want);
    CHECK(got.name == want->name);
    CHECK(got.rows == want->rows);
    CHECK(got.cols == want->cols);
    CHECK(got.entries == want->entries);
    // The fetch depth byte of CONFIG is unchanged by the array.
    CHECK(((*config >> 16) & 0xFF) == 4);
    // design_array() reads the same CSRs; the scratchpad memories have the table's sizes.
    std::string error;
    const auto described = bud::emu::design_array(design, error);
    REQUIRE(described);
    CHECK(*described == *want);
    for (int b = 0; b < bud::isa::kNumBuffers; ++b) {
      const auto buf = static_cast<bud::isa::Buffer>(b);
      bool found = false;
      for (const auto& m : emu->memories())
        if (m.name == bud::isa::buffer_name(buf)) {
          found = true;
          CHECK(m.size_bytes == uint64_t{want->entry_bytes(buf)} * want->entries[b]);
          CHECK(m.word_bytes == want->entry_bytes(buf));
        }
      CHECK(found);
    }
    // Each variant is its own model revision.
    CHECK(!emu->describe().revision.empty());
    CHECK(revisions.insert(emu->describe().revision).second);
    CHECK(bud::emu::design_revision(design) == emu->describe().revision);
  }
}

TEST_CASE("the CSR decoding names the table variant and nothing else", "[npu][array]") {
  for (const ArrayConfig& a : bud::isa::kArrayVariants) {
    uint32_t spad = 0;
    for (int b = 0; b < bud::isa::kNumBuffers; ++b)
      spad |= static_cast<uint32_t>(__builtin_ctz(a.entries[b])) << (4 * b);
    const ArrayConfig got = bud::isa::array_from_csrs(a.rows | (a.cols << 8) | (4u << 16), spad);
    CHECK(got.name == a.name);
    CHECK(got == a);
  }
  CHECK(bud::isa::array_from_csrs(12 | (12 << 8), 0xBB9B).name == "custom");
  CHECK(bud::isa::find_array_variant("npu7") == nullptr);
}

TEST_CASE("the lowering and the golden model agree with the reference on every array variant",
          "[npu][array]") {
  std::vector<std::pair<std::string, std::string>> workloads;  // (name, text; empty: built-in)
  for (const auto& name : bud::test::builtin_names()) workloads.emplace_back(name, "");
  for (const auto& [name, text] : bud::test::edge_workloads()) workloads.emplace_back(name, text);
  for (const ArrayConfig& a : bud::isa::kArrayVariants) {
    for (const auto& [name, text] : workloads) {
      DYNAMIC_SECTION(a.name << " " << name) {
        auto w = text.empty() ? bud::workload::load_builtin(name, {})
                              : bud::workload::parse_workload(text, name);
        REQUIRE(w.ok());
        auto p = bud::workload::lower(*w, a);
        INFO(p.error());
        REQUIRE(p.ok());
        CHECK(p->array == a);
        bud::golden::GoldenNpu golden(p->dram_bytes, a);
        for (const auto& r : p->dram_init) REQUIRE(golden.write_dram(r.addr, r.bytes));
        const auto gr = golden.run(p->commands);
        INFO(gr.error);
        REQUIRE(gr.ok);
        // The golden model executed the iterations the lowering planned, on this array's lanes.
        CHECK(gr.gemm_iterations == p->gemm_iterations);
        CHECK(gr.macs_useful == p->useful_macs);
        const auto reference = bud::workload::reference_of(*w);
        const auto check = bud::golden::check_outputs(*p, reference, golden.dram());
        INFO(check.summary());
        CHECK(check.ok());
      }
    }
  }
}

TEST_CASE("larger arrays need fewer iterations for the same work", "[npu][array]") {
  auto w = bud::workload::load_builtin("compute_bound", {});
  REQUIRE(w.ok());
  uint64_t useful = 0, previous = UINT64_MAX;
  for (const ArrayConfig& a : bud::isa::kArrayVariants) {
    auto p = bud::workload::lower(*w, a);
    REQUIRE(p.ok());
    INFO(a.name);
    if (useful) CHECK(p->useful_macs == useful);  // the same MACs on real data
    useful = p->useful_macs;
    CHECK(p->gemm_iterations < previous);
    CHECK(p->gemm_iterations * a.macs() >= p->useful_macs);
    previous = p->gemm_iterations;
  }
}

// Registered per built variant by tests/npu/CMakeLists.txt (`-c <variant>`, label `variants`):
// hidden from the default discovery, so a build without extra variants has no vacuous test.
TEST_CASE("built-ins are bit-exact on the built array variants", "[.variants]") {
  for (const auto& v : bud::emu::kBuiltNpuVariants) {
    DYNAMIC_SECTION(v.name) {
      for (const auto& name : bud::test::builtin_names()) {
        INFO(v.name << " " << name);
        auto o = bud::test::options_for(name);
        o.emulator.design = v.name;
        auto p = bud::run::prepare(o);
        INFO(p.error());
        REQUIRE(p.ok());
        CHECK(p->program.array.name == v.name);
        const auto r = bud::run::execute(*p, o);
        bud::test::check_bit_exact(r);
        // The PMU counts the variant's array: rows x cols MACs per iteration.
        CHECK(bud::test::counter(r, bud::isa::Counter::MacsIssued) ==
              p->program.gemm_iterations * p->program.array.macs());
        CHECK(bud::test::counter(r, bud::isa::Counter::MacsUseful) == p->program.useful_macs);
        CHECK(r.model_revision == bud::emu::design_revision(v.name));
      }
    }
  }
}

// The same registration: the reductions that run in K chunks on this variant's half of WGT (the
// chunked lowering of dense and im2col conv on the variant's lanes), per-channel POSTs (scale
// entries of the variant's width) and attention (block copies of the variant's B x B blocks),
// at int8 and BF16.
TEST_CASE(
    "chunked reductions and per-channel requantisation are bit-exact on the built array variants",
    "[.variants]") {
  for (const auto& v : bud::emu::kBuiltNpuVariants) {
    DYNAMIC_SECTION(v.name) {
      const ArrayConfig* a = bud::isa::find_array_variant(v.name);
      REQUIRE(a != nullptr);
      for (const auto& [name, text] : bud::test::edge_workloads()) {
        const std::string n = name;
        const bool chunks = n == "long_k_all" || n == "long_k_conv_all";
        if (!chunks && n.rfind("per_channel", 0) != 0 && n.rfind("attention", 0) != 0) continue;
        for (const char* precision : {"int8", "bf16"}) {
          INFO(v.name << " " << n << " " << precision);
          auto w = bud::workload::parse_workload(text, n);
          REQUIRE(w.ok());
          REQUIRE_FALSE(bud::workload::assign_precision(w.value(), precision, "test"));
          if (chunks) {
            const auto plan = bud::workload::plan_tiles(w->layers[0], *a, w->tiles);
            REQUIRE(plan.ok());
            CHECK(plan->k_chunks > 1);
          }
          bud::run::RunOptions o;
          o.emulator.design = v.name;
          auto p = bud::run::prepare_workload(std::move(w).value(), o);
          INFO(p.error());
          REQUIRE(p.ok());
          CHECK(p->program.array.name == v.name);
          bud::test::check_bit_exact(bud::run::execute(*p, o));
        }
      }
    }
  }
}
