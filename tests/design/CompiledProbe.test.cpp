// A design's generated probe (design/ProbeBuild.h) against the interpreter it replaces: two
// harnesses over two instances of one model, one compiled and one interpreted, stepped together
// must agree on every cycle - the handshakes' valid/ready bits, every counter, every stage's
// count, digest and first/last cycle - for both examples and for a design file whose counters
// use every operator of the expression language. And a step with the probe does not allocate.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "design/DesignHarness.h"
#include "design/DesignTarget.h"
#include "design/ProbeBuild.h"
#include "tests/AllocCount.h"

using namespace bud;
using namespace bud::design;

namespace {

namespace fs = std::filesystem;

const std::string kExamples = std::string(BUD_SOURCE_DIR) + "/examples/designs/";
const std::string kCache = std::string(BUD_BINARY_DIR) + "/tests/design/probe_cache";

DesignTarget target(const std::string& file) {
  TargetOptions o;
  o.cache_dir = kCache;
  DesignError e;
  auto t = prepare_design(file, o, e);
  INFO(e.to_string());
  REQUIRE(t);
  return *t;
}

// A model instance and a harness over it in `mode`; filled in place (the harness points at the
// model).
struct Bench {
  std::optional<LoadedModel> model;
  std::optional<DesignHarness> harness;
};

void make(Bench& b, const DesignTarget& t, ProbeMode mode) {
  std::string why;
  auto m = LoadedModel::load(t.library, why);
  INFO(why);
  REQUIRE(m);
  b.model.emplace(std::move(*m));
  auto h = DesignHarness::make(t.spec, *b.model, 1, why, {}, mode);
  INFO(why);
  REQUIRE(h);
  b.harness.emplace(std::move(*h));
}

// Steps both until drained, comparing everything the probe computes after every cycle. Returns
// the cycles run.
uint64_t lockstep(DesignHarness& compiled, DesignHarness& interpreted) {
  REQUIRE(compiled.probe_compiled());
  REQUIRE(compiled.probe_error().empty());
  REQUIRE_FALSE(interpreted.probe_compiled());
  const size_t words = (compiled.handshakes().size() + 63) / 64;
  compiled.reset();
  interpreted.reset();
  uint64_t mismatches = 0;
  while (!compiled.drained(1000) && !compiled.stopped() && compiled.cycle() < 200'000) {
    compiled.step();
    interpreted.step();
    bool same = compiled.cycle() == interpreted.cycle();
    for (size_t w = 0; w < words; ++w)
      same = same && compiled.valid_bits()[w] == interpreted.valid_bits()[w] &&
             compiled.ready_bits()[w] == interpreted.ready_bits()[w];
    for (size_t i = 0; i < compiled.counters().size(); ++i)
      same = same && compiled.counters()[i].value(compiled.model()) ==
                         interpreted.counters()[i].value(interpreted.model());
    for (size_t i = 0; i < compiled.stages().size(); ++i) {
      const auto &a = compiled.stages()[i], &b = interpreted.stages()[i];
      same = same && a.txns == b.txns && a.digest == b.digest && a.first_cycle == b.first_cycle &&
             a.last_cycle == b.last_cycle;
    }
    if (!same && mismatches++ < 3) FAIL_CHECK("compiled and interpreted differ at cycle " << compiled.cycle());
  }
  CHECK(mismatches == 0);
  CHECK(interpreted.drained(1000));
  CHECK(compiled.digest() == interpreted.digest());
  return compiled.cycle();
}

}  // namespace

TEST_CASE("the generated probe equals the interpreter on every cycle of both examples",
          "[design][probe]") {
  for (const char* file : {"fir_stream/fir_stream.toml", "vec_dma/vec_dma.toml"}) {
    INFO(file);
    const DesignTarget t = target(kExamples + file);
    Bench c, i;
    make(c, t, ProbeMode::Compiled);
    make(i, t, ProbeMode::Interpreted);
    const uint64_t cycles = lockstep(*c.harness, *i.harness);
    CHECK(cycles > 1000);
    // Something was counted and transferred, so the comparison compared something.
    uint64_t txns = 0;
    for (const auto& st : c.harness->stages()) txns += st.txns;
    CHECK(txns > 100);
    bool counted = false;
    for (const auto& k : c.harness->counters()) counted = counted || (k.when && k.count > 0);
    CHECK(counted);
  }
}

TEST_CASE("generated counters compute every operator as the expression machine does",
          "[design][probe]") {
  // fir_stream with counters over signed and unsigned values, integer wrap-around, real
  // division, modulo (of reals, by zero and by -1), NaN-free and mixed comparisons, array
  // elements and a stateful function (which stays interpreted in both).
  const fs::path dir = fs::path(BUD_BINARY_DIR) / "tests/design/probe_ops";
  fs::remove_all(dir);
  fs::copy(kExamples + "fir_stream", dir, fs::copy_options::recursive);
  std::ifstream in(dir / "fir_stream.toml");
  std::stringstream text;
  text << in.rdbuf();
  std::string toml = text.str();
  const char* whens[] = {
      "m_axis_tdata % 7 == 3 || -s_axis_tdata < -100",
      "m_axis_tdata / 3 > 1000.5",
      "prod[1] * 2 - prod[2] >= 0 && !(samples_in % 5 == 0)",
      "m_axis_tdata - 0.25 * 4 != m_axis_tdata - 1",
      "s_axis_tdata * 0x7fffffffffffffff + 1 < 0",
      "m_axis_tdata % 2.5 > 1 or samples_in % 0 == 0 and samples_in % -1 == 0",
      "prod[3] / 0 == 0 && (prod[0] - prod[1]) % 3 != -1",
      "-(m_axis_tdata + 0.5) < -40000 || 12.5% * samples_in > 300",
      "rose(m_axis_tvalid)",
      "(s_axis_tdata > 0x80) == (s_axis_tdata >= 129)",
  };
  int n = 0;
  for (const char* w : whens)
    toml += "\n[[counter]]\nname = \"op" + std::to_string(n++) + "\"\nwhen = \"" + w + "\"\n";
  const std::string file = (dir / "fir_stream.toml").string();
  std::ofstream(file) << toml;
  const DesignTarget t = target(file);
  Bench c, i;
  make(c, t, ProbeMode::Compiled);
  make(i, t, ProbeMode::Interpreted);
  lockstep(*c.harness, *i.harness);
  // Most of the new counters count something and none counts every cycle: each was tested
  // both ways.
  int varied = 0;
  for (const auto& k : c.harness->counters())
    varied += k.name.rfind("op", 0) == 0 && k.count > 0 && k.count < c.harness->cycle();
  CHECK(varied >= 7);
  // The generated source compiles each stateless one (rose() stays with the interpreter).
  CHECK(c.harness->probe_compiled());
}

TEST_CASE("a harness step with the generated probe does not allocate", "[design][probe][alloc]") {
  const DesignTarget t = target(kExamples + "vec_dma/vec_dma.toml");
  Bench c;
  make(c, t, ProbeMode::Compiled);
  DesignHarness& h = *c.harness;
  REQUIRE(h.probe_compiled());
  h.reset();
  for (int k = 0; k < 10; ++k) h.step();
  const uint64_t before = test::allocations();
  for (int k = 0; k < 1500; ++k) h.step();
  CHECK(test::allocations() == before);
}
