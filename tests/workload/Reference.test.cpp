#include "emu/workload/Reference.h"

#include <catch2/catch.hpp>

#include "emu/workload/Builtins.h"

using namespace bud::workload;

TEST_CASE("requantisation follows the POST formula", "[workload][reference]") {
  bool sat = false;
  CHECK(requantize(100, Quant{1, 0}, false, &sat) == 100);
  CHECK_FALSE(sat);
  CHECK(requantize(300, Quant{1, 0}, false, &sat) == 127);
  CHECK(sat);
  CHECK(requantize(-300, Quant{1, 0}, false, &sat) == -128);
  CHECK(sat);
  CHECK(requantize(-300, Quant{1, 0}, true, &sat) == 0);
  CHECK(sat);  // saturation is counted before the clamp to [clamp_lo, clamp_hi]
  CHECK(requantize(5, Quant{1, 1}, false) == 3);        // (5 + 1) >> 1, round half up
  CHECK(requantize(-5, Quant{1, 1}, false) == -2);      // (-5 + 1) >> 1 = -2 (arithmetic shift)
  CHECK(requantize(1000, Quant{-3, 5}, false) == -94);  // (-3000 + 16) >> 5 = -94 (floor)
  CHECK(requantize(INT32_MIN, Quant{-32768, 31}, false, &sat) == 127);
  CHECK(sat);
}

TEST_CASE("reference dense layer matches a hand computation", "[workload][reference]") {
  const Result<Workload> w = parse_workload(
      "input_shape: [2, 3]\nlayer { dense { m: 2 k: 3 n: 2 } quant { mult: 1 shift: 0 } }", "t");
  REQUIRE(w.ok());
  const std::vector<int8_t> x = generate_input(*w);
  const LayerData d = generate_layer_data(*w, 0);
  const ReferenceResult r = run_reference(*w);
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      int32_t acc = d.bias[static_cast<size_t>(n)];
      for (int k = 0; k < 3; ++k)
        acc += x[static_cast<size_t>(m * 3 + k)] * d.weights[static_cast<size_t>(k * 2 + n)];
      CHECK(r.layers[0].data[static_cast<size_t>(m * 2 + n)] ==
            requantize(acc, Quant{1, 0}, false));
    }
}

TEST_CASE("built-in outputs are meaningful: neither all zero nor saturated",
          "[workload][reference]") {
  for (const auto& b : list_builtins()) {
    INFO(b.name);
    const Result<Workload> w = load_builtin(b.name);
    REQUIRE(w.ok());
    const ReferenceResult r = run_reference(*w);
    for (size_t i = 0; i < r.layers.size(); ++i) {
      const Tensor& t = r.layers[i];
      size_t zero = 0, sat = 0;
      for (int8_t v : t.data) {
        zero += v == 0;
        sat += v == 127 || v == -128;
      }
      INFO("layer " << w->layers[i].name);
      CHECK(zero < t.data.size() * 7 / 10);  // ReLU layers zero about half
      CHECK(sat < t.data.size() / 50);       // a few saturations are fine
    }
  }
}

TEST_CASE("the reference kept from the load's calibration is the reference run",
          "[workload][reference]") {
  // Workload::reference saves the checks a second pass over every layer: it must be exactly
  // what run_reference computes, for every built-in, several seeds and explicit quantisation.
  for (const auto& b : list_builtins()) {
    for (uint64_t seed : {uint64_t{0}, uint64_t{7}, uint64_t{123456789}}) {
      INFO(b.name << " seed " << seed);
      LoadOptions o;
      if (seed) o.seed = seed;
      const Result<Workload> w = load_builtin(b.name, o);
      REQUIRE(w.ok());
      REQUIRE(w->reference);
      const ReferenceResult again = run_reference(*w);
      CHECK(w->reference->input.data == again.input.data);
      REQUIRE(w->reference->layers.size() == again.layers.size());
      for (size_t i = 0; i < again.layers.size(); ++i)
        CHECK(w->reference->layers[i].data == again.layers[i].data);
      CHECK(w->reference->saturations == again.saturations);
      CHECK(reference_of(*w).saturations == again.saturations);
    }
  }
  const Result<Workload> q = parse_workload(
      "input_shape: [4, 4, 3]\nlayer { conv2d { c_out: 5 kh: 3 kw: 3 stride: 2 pad: 1 relu: true } "
      "quant { mult: 3 shift: 4 } }\nlayer { dense { m: 4 k: 5 n: 6 } }",
      "t");
  REQUIRE(q.ok());
  REQUIRE(q->reference);
  const ReferenceResult again = run_reference(*q);
  for (size_t i = 0; i < again.layers.size(); ++i)
    CHECK(q->reference->layers[i].data == again.layers[i].data);
}
