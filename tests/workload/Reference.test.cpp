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
