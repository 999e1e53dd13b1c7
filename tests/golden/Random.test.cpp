#include <catch2/catch.hpp>
#include <string>

#include "emu/golden/Checker.h"

// Rng.h uses unsigned __int128 (a GCC/Clang extension that -Wpedantic flags).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop

using namespace bud;

namespace {

// A random but valid layer stack; shapes are tracked so every layer fits its input.
// `bf16`: each NPU layer runs BF16 with probability 1/2 (mixed programs; docs/workloads.md).
std::string random_workload(emu::Rng& rng, bool bf16 = false) {
  int64_t h = rng.range(1, 9), w = rng.range(1, 9), c = rng.range(1, 40);
  std::string t = "input_shape: [" + std::to_string(h) + ", " + std::to_string(w) + ", " +
                  std::to_string(c) + "]\n";
  const int layers = static_cast<int>(rng.range(1, 5));
  for (int i = 0; i < layers; ++i) {
    t += "layer { name: \"l" + std::to_string(i) + "\" ";
    switch (rng.below(4)) {
      case 0: {
        const int64_t n = rng.range(1, 70);
        t += "dense { m: " + std::to_string(h * w) + " k: " + std::to_string(c) +
             " n: " + std::to_string(n) + (rng.chance(1, 2) ? " relu: true" : "") + " }";
        c = n;
        break;
      }
      case 1: {
        const int64_t kh = rng.range(1, std::min<int64_t>(5, h + 2)),
                      kw = rng.range(1, std::min<int64_t>(5, w + 2));
        const int64_t pad = rng.range(0, 2), stride = rng.range(1, 3);
        if (h + 2 * pad < kh || w + 2 * pad < kw) {
          t += "relu { }";
          break;
        }
        const int64_t co = rng.range(1, 24);
        t += "conv2d { c_out: " + std::to_string(co) + " kh: " + std::to_string(kh) +
             " kw: " + std::to_string(kw) + " stride: " + std::to_string(stride) +
             " pad: " + std::to_string(pad) + (rng.chance(1, 2) ? " relu: true" : "") + " }";
        h = (h + 2 * pad - kh) / stride + 1;
        w = (w + 2 * pad - kw) / stride + 1;
        c = co;
        break;
      }
      case 2:
        t += i > 0 && rng.chance(1, 2) ? "add { other: \"l" + std::to_string(i - 1) + "\" }"
                                       : "add { }";
        break;
      default:
        t += "relu { }";
        break;
    }
    if (rng.chance(1, 3))
      t += " quant { mult: " + std::to_string(rng.range(-300, 300)) +
           " shift: " + std::to_string(rng.range(0, 12)) + " }";
    // Large factors drive BF16 values past the fp32 range: Inf and NaN reach later layers.
    else if (bf16 && rng.chance(1, 4))
      t += " quant { mult: " + std::to_string(rng.range(20000, 32767)) + " shift: 0 }";
    if (bf16 && rng.chance(1, 2)) t += " precision: BF16";
    t += " }\n";
  }
  return t;
}

}  // namespace

TEST_CASE("random layer stacks: golden model equals the direct reference", "[golden][random]") {
  emu::Rng rng(2024);
  for (int iter = 0; iter < 150; ++iter) {
    const std::string text = random_workload(rng);
    INFO(text);
    const workload::Result<workload::Workload> w = workload::parse_workload(text, "random");
    INFO(w.error());
    REQUIRE(w.ok());
    const workload::Result<workload::Program> p = workload::lower(*w);
    REQUIRE(p.ok());
    golden::GoldenNpu npu(w->dram_bytes);
    const golden::RunResult r = golden::run_program(npu, *p);
    INFO(r.error);
    REQUIRE(r.ok);
    CHECK(r.tokens_left == std::array<uint32_t, 4>{});
    const golden::CheckReport rep =
        golden::check_outputs(*p, workload::run_reference(*w), npu.dram());
    INFO(rep.summary());
    REQUIRE(rep.ok());
  }
}

TEST_CASE("random mixed-precision stacks: golden model equals the direct reference bit for bit",
          "[golden][random][bf16]") {
  emu::Rng rng(1616);
  int bf16_layers = 0, specials = 0;
  // Besides the random stacks, one that must overflow: a factor of 32767 per layer grows values
  // about 6.5e5-fold a layer (K = 20, weights in [-8, 8]), past the fp32 range well before the
  // tenth layer (Inf), and an add of opposite infinities gives NaN.
  std::string overflow = "input_shape: [4, 20]\n";
  for (int i = 0; i < 10; ++i)
    overflow += "layer { name: \"d" + std::to_string(i) +
                "\" dense { m: 4 k: 20 n: 20 } quant { mult: 32767 shift: 0 } precision: BF16 }\n";
  overflow += "layer { name: \"neg\" input: \"d9\" relu { } quant { mult: -1 shift: 0 } "
              "precision: BF16 }\n";
  overflow += "layer { name: \"sum\" add { other: \"d9\" relu: true } precision: BF16 }\n";
  for (int iter = 0; iter <= 150; ++iter) {
    const std::string text = iter == 150 ? overflow : random_workload(rng, true);
    INFO(text);
    const workload::Result<workload::Workload> w = workload::parse_workload(text, "random");
    INFO(w.error());
    REQUIRE(w.ok());
    for (const auto& l : w->layers) bf16_layers += l.precision == workload::Precision::Bf16;
    // npu8 and npu16 order the BF16 sums differently (4 or 8 products per tree).
    for (const auto* a : {&isa::kArrayVariants[0], &isa::kArrayVariants[1]}) {
      const workload::Result<workload::Program> p = workload::lower(*w, *a);
      INFO(a->name);
      REQUIRE(p.ok());
      golden::GoldenNpu npu(w->dram_bytes, *a);
      const golden::RunResult r = golden::run_program(npu, *p);
      INFO(r.error);
      REQUIRE(r.ok);
      CHECK(r.tokens_left == std::array<uint32_t, 4>{});
      const workload::ReferenceResult ref = workload::run_reference(*w, *a);
      for (const auto& t : ref.layers)
        for (const uint16_t v : t.bf16) specials += (v & 0x7f80u) == 0x7f80u;
      const golden::CheckReport rep = golden::check_outputs(*p, ref, npu.dram());
      INFO(rep.summary());
      REQUIRE(rep.ok());
    }
  }
  // The sweep exercised what it claims: BF16 layers, and infinities or NaNs among their values.
  CHECK(bf16_layers > 100);
  CHECK(specials > 0);
}
