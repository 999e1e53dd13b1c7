// bud design build: the example's model is Verilated, linked, cached by revision, and loaded;
// driven through its ports it computes exactly what the design's reference command computes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "design/LoadedModel.h"
#include "design/ModelBuild.h"
#include "tools/process/Subprocess.h"

using namespace bud::design;

namespace {

const std::string kDir = std::string(BUD_SOURCE_DIR) + "/examples/designs/fir_stream/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a design's model builds once per revision and computes what its reference does",
          "[design][build]") {
  const auto p = parse_design_file(kDir + "fir_stream.toml");
  REQUIRE(p.ok());
  DesignError e;
  const auto rtl = read_rtl_signals(*p.spec, e);
  REQUIRE(rtl);
  BuildOptions o;
  o.cache_dir = std::string(BUD_BINARY_DIR) + "/tests/design/model_cache";
  std::filesystem::remove_all(o.cache_dir);
  const auto built = build_model(*p.spec, *rtl, o, e);
  INFO(e.to_string());
  REQUIRE(built);
  CHECK_FALSE(built->cached);
  CHECK(built->revision.size() == 16);
  const auto again = build_model(*p.spec, *rtl, o, e);
  REQUIRE(again);
  CHECK(again->cached);
  CHECK(again->library == built->library);
  // Another parameter is another revision.
  DesignSpec other = *p.spec;
  other.parameters["C1"] = "4";
  CHECK(model_revision(other, e) != built->revision);

  std::string why;
  auto m = LoadedModel::load(built->library, why);
  INFO(why);
  REQUIRE(m);
  auto port = [&](const char* n) {
    auto i = m->find(n);
    REQUIRE(i);
    return *i;
  };
  const size_t clk = port("clk"), rst = port("rst_n"), sd = port("s_axis_tdata"),
               sv = port("s_axis_tvalid"), sr = port("s_axis_tready"), md = port("m_axis_tdata"),
               mv = port("m_axis_tvalid"), mr = port("m_axis_tready");
  CHECK(m->ports()[md].width == 32);
  CHECK_FALSE(m->ports()[md].input);
  // Internal signals by hierarchical name (--public-flat-rw), arrays with their elements.
  const size_t mul = port("mul_valid"), prod = port("prod"), count = port("samples_in");
  CHECK(m->ports()[mul].internal);
  CHECK(m->ports()[prod].elements == 4);
  CHECK(m->ports()[prod].width == 32);
  auto cycle = [&] {
    m->set(clk, 1);
    m->eval();
    m->set(clk, 0);
    m->eval();
  };
  m->set(rst, 0);
  for (int i = 0; i < 4; ++i) cycle();
  m->set(rst, 1);
  const std::string in = read(kDir + "data/samples.bin");
  std::string out;
  size_t next = 0;
  // Back-pressure on both sides (a fixed pattern): every sample still comes out once, in order.
  // Half way, the model's state is saved; after the run it is restored and the second half
  // re-run (traced to an FST file): it gives the same bytes again.
  auto beat = [&](uint64_t t) {
    m->set(sv, next < in.size() && t % 5 != 3);
    m->set(sd, next < in.size() ? static_cast<uint8_t>(in[next]) : 0);
    m->set(mr, t % 4 != 1);
    m->eval();
    if (m->get(sv) && m->get(sr)) ++next;
    if (m->get(mv) && m->get(mr)) {
      const uint32_t y = static_cast<uint32_t>(m->get(md));
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(y >> (8 * b)));
    }
    cycle();
  };
  std::vector<uint8_t> saved;
  size_t saved_next = 0, saved_out = 0;
  uint64_t saved_t = 0;
  for (uint64_t t = 0; out.size() < 4 * in.size() && t < 20 * in.size(); ++t) {
    if (t == 2000) {
      const auto b = m->save();
      saved.assign(b.begin(), b.end());
      saved_next = next;
      saved_out = out.size();
      saved_t = t;
    }
    if (m->tracing()) m->trace_dump(t);
    beat(t);
  }
  const std::string first = out;
  REQUIRE_FALSE(saved.empty());
  if (saved_t == 0) {  // not reached: loop ends early
    FAIL("the run ended before the save point");
  }
  // Scribble over the live state first: restore must replace it all.
  m->set(rst, 0);
  cycle();
  m->set(rst, 1);
  m->restore(saved);
  next = saved_next;
  out.resize(saved_out);
  const std::string wave = std::string(BUD_BINARY_DIR) + "/tests/design/fir_second_half.fst";
  std::filesystem::remove(wave);
  REQUIRE(m->trace_open(wave).empty());
  CHECK_FALSE(m->trace_open(wave).empty());  // one waveform at a time
  for (uint64_t t = saved_t; out.size() < 4 * in.size() && t < 20 * in.size(); ++t) {
    m->trace_dump(t);
    beat(t);
  }
  m->trace_close();
  CHECK(out == first);
  CHECK(std::filesystem::file_size(wave) > 1000);
  const std::string expected = std::string(BUD_BINARY_DIR) + "/tests/design/fir_expected.bin";
  const auto ref = bud::process::run({"python3", kDir + "ref/fir.py", kDir + "data/samples.bin",
                                      expected, "3", "-5", "7", "2"});
  INFO(ref.err);
  REQUIRE(ref.status == 0);
  CHECK(out.size() == 4 * in.size());
  CHECK(m->get(count) == in.size());  // the design's own counter of accepted samples
  CHECK(out == read(expected));
}
