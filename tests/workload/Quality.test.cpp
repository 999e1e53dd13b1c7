// Quality against the fp32 network and the `auto` precision policy (docs/workloads.md, "Quality
// and the auto policy"), on the direct reference: no RTL.
#include <catch2/catch.hpp>
#include <string>

#include "emu/workload/Quality.h"

using namespace bud::workload;

namespace {

Workload load(const std::string& text) {
  auto w = parse_workload(text, "q.textpb");
  INFO(w.error());
  REQUIRE(w.ok());
  return std::move(w).value();
}

Workload needs_bf16() {
  auto w = load_workload_file(std::string(BUD_SOURCE_DIR) + "/examples/precision/needs_bf16.textpb");
  INFO(w.error());
  REQUIRE(w.ok());
  return std::move(w).value();
}

const LayerQuality& of(const std::vector<LayerQuality>& q, const std::string& name) {
  for (const auto& l : q)
    if (l.layer == name) return l;
  FAIL("no layer " << name);
  return q.front();
}

}  // namespace

TEST_CASE("a network int8 computes exactly has no error against the fp32 network",
          "[workload][quality]") {
  // relu and add with factor 1: every value is an integer in int8's range.
  const Workload w = load(
      "input_shape: [4, 4, 8]\n"
      "layer { name: \"r\" relu { } quant { mult: 1 shift: 0 } }\n"
      "layer { name: \"a\" add { other: \"input\" } quant { mult: 1 shift: 1 } }\n");
  const auto q = network_quality(w, run_reference(w), float_network(w));
  REQUIRE(q.size() == 2);
  CHECK(q[0].snr_db == 99);
  CHECK(q[0].max_abs_error == 0);
  // (r + x) / 2 rounds half-integers: an error of at most 0.5, never more.
  CHECK(q[1].max_abs_error <= 0.5);
  CHECK(q[1].snr_db < 99);
}

TEST_CASE("the fp32 network of a dense layer is bias plus the dot product times the factor",
          "[workload][quality]") {
  const Workload w = load(
      "seed: 5 input_shape: [2, 3]\n"
      "layer { name: \"d\" dense { m: 2 k: 3 n: 2 } quant { mult: 3 shift: 2 } }\n");
  const auto x = generate_input(w);
  const auto d = generate_layer_data(w, 0);
  const auto f = float_network(w);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 2; ++j) {
      double acc = d.bias[static_cast<size_t>(j)];
      for (int k = 0; k < 3; ++k)
        acc += x[static_cast<size_t>(r * 3 + k)] * d.weights[static_cast<size_t>(k * 2 + j)];
      CHECK(f[0][static_cast<size_t>(r * 2 + j)] == acc * 0.75);
    }
}

TEST_CASE("int8 breaks the guardrail on the layer that needs BF16 and only there",
          "[workload][quality]") {
  const Workload w = needs_bf16();
  REQUIRE(w.min_snr_db == 20.0);
  const auto q = network_quality(w, run_reference(w), float_network(w));
  CHECK(of(q, "fc1").snr_db >= 20);
  CHECK(of(q, "fc2").snr_db < 5);  // its outputs round to 0
  // BF16 everywhere meets the guardrail by a wide margin.
  Workload b = w;
  REQUIRE_FALSE(assign_precision(b, "bf16", "test"));
  const auto qb = network_quality(b, run_reference(b), float_network(b));
  for (const auto& l : qb) CHECK(l.snr_db > 40);
}

TEST_CASE("auto falls back exactly the layer below the guardrail with its readers",
          "[workload][quality]") {
  Workload w = needs_bf16();
  const auto fb = apply_auto_precision(w, bud::isa::default_array(), *w.min_snr_db);
  REQUIRE(fb.size() == 1);
  CHECK(fb[0].layer == "fc2");
  CHECK(fb[0].int8_snr_db < 5);
  CHECK(fb[0].readers == std::vector<std::string>{"fc3"});
  CHECK(w.layers[0].precision == Precision::Int8);
  CHECK(w.layers[1].precision == Precision::Bf16);
  CHECK(w.layers[2].precision == Precision::Bf16);
  CHECK(w.layers[1].out_type == Precision::Bf16);  // fc2's output is never rounded to int8
  const auto q = network_quality(w, run_reference(w), float_network(w));
  for (const auto& l : q) CHECK(l.snr_db >= 20);
  // Deterministic: the same policy on the same workload takes the same fallbacks.
  Workload again = needs_bf16();
  const auto fb2 = apply_auto_precision(again, bud::isa::default_array(), 20);
  REQUIRE(fb2.size() == 1);
  CHECK(fb2[0].int8_snr_db == fb[0].int8_snr_db);
  // A guardrail nothing breaks keeps everything int8; one everything breaks moves it all.
  Workload loose = needs_bf16();
  CHECK(apply_auto_precision(loose, bud::isa::default_array(), -100).empty());
  CHECK_FALSE(has_bf16(loose));
}

TEST_CASE("min_snr_db must be positive and names where it is", "[workload][quality]") {
  auto w = parse_workload("input_shape: [2, 2]\nmin_snr_db: -3\nlayer { relu { } }\n", "g.textpb");
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().rfind("g.textpb:2:", 0) == 0);
  CHECK(w.error().find("min_snr_db must be a positive number of dB") != std::string::npos);
}
