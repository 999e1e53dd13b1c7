#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "emu/workload/Reference.h"
#include "emu/workload/Workload.h"

// Rng.h uses unsigned __int128 (a GCC/Clang extension that -Wpedantic flags).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop

using namespace bud::workload;

namespace {

std::string fixture(const std::string& name) {
  return std::string(BUD_SOURCE_DIR) + "/tests/workload/data/" + name;
}

// The error of loading a fixture, with the path replaced by its file name.
std::string fixture_error(const std::string& name) {
  const Result<Workload> w = load_workload_file(fixture(name));
  REQUIRE_FALSE(w.ok());
  std::string e = w.error();
  const std::string dir = std::string(BUD_SOURCE_DIR) + "/tests/workload/data/";
  REQUIRE(e.rfind(dir, 0) == 0);
  return e.substr(dir.size());
}

}  // namespace

TEST_CASE("bad workload files report FILE:LINE:COL and the reason", "[workload][parse]") {
  CHECK(fixture_error("syntax_error.textpb") ==
        "syntax_error.textpb:6:26: Expected identifier, got: =");
  CHECK(fixture_error("zero_dim.textpb") ==
        "zero_dim.textpb:7:5: layer 'fc': dense.k must be positive (got 0)");
  CHECK(fixture_error("shape_mismatch.textpb") ==
        "shape_mismatch.textpb:9:16: layer 'fc2': input shape mismatch: dense expects m x k = "
        "4x32 but the output of layer 'fc1' is 4x16");
  CHECK(fixture_error("tile_too_big.textpb") ==
        "tile_too_big.textpb:3:1: layer 'wide': cannot be tiled: even a 1-pixel tile of 8200 "
        "channels needs 1025 INP entries but half the INP scratchpad holds 1024");
  CHECK(fixture_error("unknown_ref.textpb") ==
        "unknown_ref.textpb:9:9: layer 'sum': add.other 'nope' names no earlier layer");
  CHECK(fixture_error("bad_quant.textpb") ==
        "bad_quant.textpb:6:19: layer 'fc': quant.shift must be in [0, 31] (got 40)");
  CHECK(fixture_error("dram_too_big.textpb") ==
        "dram_too_big.textpb:4:1: layer 'fc1': DRAM image too big: tensor 'fc1.weights' "
        "(262144 bytes at 0x11000) does not fit in the DRAM of 131072 bytes");
  CHECK(fixture_error("no_kind.textpb") ==
        "no_kind.textpb:3:1: layer 'empty': no layer kind (dense, conv2d, add, relu, matmul or host)");
  CHECK(fixture_error("conv_mismatch.textpb") ==
        "conv_mismatch.textpb:5:12: layer 'c1': input shape mismatch: conv2d.c_in = 4 but the "
        "workload input is 6x6x3");
}

TEST_CASE("semantic errors from text name the offending field", "[workload][parse]") {
  auto err = [](const std::string& text) {
    const Result<Workload> w = parse_workload(text, "t.textpb");
    return w.ok() ? std::string("OK") : w.error();
  };
  CHECK(err("") == "t.textpb:1:1: input_shape must be [M, K] or [H, W, C] (got 0 dimensions)");
  CHECK(err("name: \"x\"\n  input_shape: [4, -2]\nlayer { relu {} }") ==
        "t.textpb:2:3: input_shape[1] must be positive (got -2)");
  CHECK(err("input_shape: 4\ninput_shape: 0\nlayer { relu {} }") ==
        "t.textpb:2:1: input_shape[1] must be positive (got 0)");
  CHECK(err("input_shape: [4, 8]") == "t.textpb:1:1: workload has no layers");
  CHECK(err("input_shape: [4, 8]\nlayer { name: \"a\" relu {} }\nlayer { name: \"a\" relu {} }") ==
        "t.textpb:3:9: duplicate layer name 'a'");
  CHECK(err("input_shape: [4, 8]\nlayer { name: \"input\" relu {} }") ==
        "t.textpb:2:9: layer name 'input' is reserved for the workload input");
  CHECK(err("input_shape: [3, 3, 8]\nlayer { conv2d { c_out: 8 kh: 5 kw: 5 } }") ==
        "t.textpb:2:1: layer 'l0': a 5x5 kernel with pad 0 does not fit: the workload input is "
        "3x3x8");
  CHECK(err("input_shape: [3, 3, 8]\nlayer { conv2d { c_out: 8 kh: 1 kw: 1 stride: 0 } }") ==
        "t.textpb:2:39: layer 'l0': conv2d.stride must be positive (got 0)");
  CHECK(err("input_shape: [4, 8]\nlayer { add { other: \"input\" } quant { mult: 40000 } }") ==
        "t.textpb:2:40: layer 'l0': quant.mult must fit int16 (got 40000)");
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 16 } }\n"
            "layer { add { other: \"input\" } }") ==
        "t.textpb:3:15: layer 'l1': shape mismatch: add.other 'input' is 4x8 but the output of "
        "layer 'l0' is 4x16");
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 8 } }\nlayer { add { other: "
            "\"input\" } }") == "OK");
  CHECK(err("\ninput_shape: [1048577, 8]\nlayer { relu {} }") ==
        "t.textpb:2:1: input_shape[0] is too large (got 1048577, at most 1048576)");
  CHECK(err("dram_bytes: 5\ninput_shape: [4, 8]\nlayer { relu {} }") ==
        "t.textpb:1:1: dram_bytes must be in (0x10000, 2^32] (got 5)");
  // Per-channel requantisation: one value per output channel, dense and conv2d only, no mix
  // with the per-tensor fields, each value in range (located at the element).
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 3 } quant { channel_mult: [1, 2] "
            "channel_shift: [0, 0] } }") ==
        "t.textpb:2:42: layer 'l0': per-channel requantisation needs 3 channel_mult and "
        "channel_shift values, one per output channel (got 2 and 2)");
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 2 } quant { channel_mult: [1, "
            "70000] channel_shift: [0, 0] } }") ==
        "t.textpb:2:42: layer 'l0': quant.channel_mult[1] must fit int16 (got 70000)");
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 2 } quant { channel_mult: [1, 1] "
            "channel_shift: [0, 32] } }") ==
        "t.textpb:2:63: layer 'l0': quant.channel_shift[1] must be in [0, 31] (got 32)");
  CHECK(err("input_shape: [4, 8]\nlayer { relu { } quant { per_channel: true } }") ==
        "t.textpb:2:26: layer 'l0': per-channel requantisation is for dense (not transposed) and conv2d layers");
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 8 } quant { per_channel: true "
            "mult: 3 } }") ==
        "t.textpb:2:60: layer 'l0': quant.mult/shift do not combine with per-channel factors");
  CHECK(err("input_shape: [4, 8]\nlayer { dense { m: 4 k: 8 n: 8 } }\nbogus: 1") ==
        "t.textpb:3:6: Message type \"bud.workload.WorkloadSpec\" has no field named \"bogus\".");
}

TEST_CASE("unreadable files are one clear line", "[workload][parse]") {
  const Result<Workload> w = load_workload_file("/nonexistent/dir/w.textpb");
  CHECK(w.error() == "/nonexistent/dir/w.textpb: cannot open workload file");
}

TEST_CASE("a valid workload loads with resolved shapes and defaults", "[workload][parse]") {
  const char* text = R"(
name: "net"
description: "test"
seed: 7
input_shape: [8, 8, 3]
layer { name: "c" conv2d { c_out: 5 kh: 3 kw: 3 stride: 2 pad: 1 relu: true } }
layer { name: "d" dense { m: 16 k: 5 n: 4 } quant { mult: -3 shift: 2 } }
layer { name: "a" add { } }
layer { name: "r" relu { } }
)";
  const Result<Workload> r = parse_workload(text, "net.textpb");
  REQUIRE(r.ok());
  const Workload& w = r.value();
  CHECK(w.name == "net");
  CHECK(w.seed == 7);
  CHECK(w.dram_bytes == kDefaultDramBytes);
  REQUIRE(w.layers.size() == 4);
  CHECK(w.layers[0].out_shape == Shape{4, 4, 5, 3});
  CHECK(w.layers[0].relu);
  CHECK(w.layers[0].where == "net.textpb:6:1");
  CHECK(w.layers[0].quant.mult > 1);  // calibrated
  CHECK(w.layers[1].quant.mult == -3);
  CHECK(w.layers[1].quant.shift == 2);
  CHECK(w.layers[1].out_shape == Shape{4, 4, 4, 3});
  CHECK(w.layers[2].other == kFreshTensor);
  CHECK(w.layers[2].quant.mult == 1);
  CHECK(w.layers[2].quant.shift == 0);
  CHECK(w.layers[3].relu);
  CHECK(w.find_layer("a") == 2);
  CHECK_FALSE(w.find_layer("zz").has_value());
  CHECK(w.layers[0].reduction() == 27);
  CHECK_FALSE(w.layers[0].per_channel());

  const Result<Workload> s = parse_workload(text, "net.textpb", LoadOptions{99});
  REQUIRE(s.ok());
  CHECK(s->seed == 99);
  CHECK(generate_input(*s) != generate_input(w));
  CHECK(generate_input(*s) == generate_input(*parse_workload(text, "x", LoadOptions{99})));
}

TEST_CASE("mutated workload texts never crash the loader", "[workload][parse][fuzz]") {
  const std::string base = R"(name: "f"
input_shape: [6, 6, 8]
layer { name: "c" conv2d { c_out: 8 kh: 3 kw: 3 pad: 1 relu: true } }
layer { name: "a" add { other: "input" } quant { mult: 1 shift: 1 } }
layer { name: "d" dense { m: 36 k: 8 n: 12 } }
)";
  bud::emu::Rng rng(1234);
  const std::string alphabet = "0123456789-:{}[]\" abcdkmnz\n";
  int ok = 0;
  for (int i = 0; i < 400; ++i) {
    std::string t = base;
    const int edits = 1 + static_cast<int>(rng.below(3));
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng.below(t.size());
      switch (rng.below(3)) {
        case 0:
          t[pos] = alphabet[rng.below(alphabet.size())];
          break;
        case 1:
          t.erase(pos, 1 + rng.below(4));
          break;
        default:
          t.insert(pos, 1, alphabet[rng.below(alphabet.size())]);
          break;
      }
    }
    const Result<Workload> w = parse_workload(t, "fuzz.textpb");
    if (w.ok()) {
      ++ok;
    } else {
      INFO(t);
      REQUIRE(w.error().rfind("fuzz.textpb:", 0) == 0);
    }
  }
  CHECK(ok > 0);
}

TEST_CASE("per-channel factors load as given or calibrated channel by channel",
          "[workload][parse][per_channel]") {
  const Result<Workload> r = parse_workload(R"(input_shape: [6, 6, 4]
layer { name: "c" conv2d { c_out: 12 kh: 3 kw: 3 pad: 1 } quant { per_channel: true } }
layer { name: "d" dense { m: 36 k: 12 n: 3 } quant { channel_mult: [5, -6, 7] channel_shift: [1, 2, 3] } }
)",
                                            "pc.textpb");
  INFO(r.error());
  REQUIRE(r.ok());
  const Layer& c = r->layers[0];
  REQUIRE(c.channel_quant.size() == 12);
  // Calibrated per channel: each channel's accumulators map their RMS to about 40, so channels
  // with different ranges get different factors.
  std::set<std::pair<int, int>> distinct;
  for (const Quant& q : c.channel_quant) {
    CHECK(q.mult >= 1);
    distinct.insert({q.mult, q.shift});
  }
  CHECK(distinct.size() > 1);
  const Layer& d = r->layers[1];
  REQUIRE(d.channel_quant.size() == 3);
  CHECK(d.quant_of(1).mult == -6);
  CHECK(d.quant_of(2).shift == 3);
  CHECK(d.quant_of(3).mult == d.quant.mult);  // a padding lane: the per-tensor default
  // The reference requantises each channel with its own factor.
  const std::vector<int32_t> acc = layer_accumulators(*r, 1, r->reference->input,
                                                      r->reference->layers,
                                                      generate_layer_data(*r, 1));
  const Tensor& out = r->reference->layers[1];
  REQUIRE(out.data.size() == acc.size());
  for (size_t j = 0; j < acc.size(); ++j)
    CHECK(out.data[j] == requantize(acc[j], d.quant_of(static_cast<int64_t>(j % 3)), false));
}
