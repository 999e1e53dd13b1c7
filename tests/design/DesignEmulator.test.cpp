// A design file's model behind the emulator interface: it runs to the same result as `bud design
// run`, a saved mid-run state restored into another instance finishes bit-identically, forces
// hold, and a stuck design is a hang, not a spin.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <memory>

#include "design/DesignEmulator.h"
#include "design/DesignRun.h"
#include "design/DesignTarget.h"
#include "emu/run/Designs.h"
#include "tools/process/Subprocess.h"

using namespace bud;
using namespace bud::design;

namespace {

const std::string kExamples = std::string(BUD_SOURCE_DIR) + "/examples/designs/";

DesignTarget target(const std::string& file, const TargetOptions& extra = {}) {
  TargetOptions o = extra;
  o.cache_dir = std::string(BUD_BINARY_DIR) + "/tests/design/emu_cache";
  DesignError e;
  auto t = prepare_design(kExamples + file, o, e);
  INFO(e.to_string());
  REQUIRE(t);
  return *t;
}

std::unique_ptr<emu::Emulator> make(const DesignTarget& t) {
  std::string error;
  emu::EmulatorConfig c;
  c.design = t.emulator;
  auto e = emu::make_emulator(c, error);
  INFO(error);
  REQUIRE(e);
  return e;
}

struct Finish {
  uint64_t cycles = 0, digest = 0;
  std::vector<emu::StageDigest> stages;
};

Finish run_out(emu::Emulator& e) {
  const auto r = e.step(1'000'000);
  INFO(r.message);
  REQUIRE(r.state == emu::RunState::Finished);
  Finish f{e.cycle(), e.digest(), {}};
  for (int s = 0; s < emu::kNumStages; ++s) f.stages.push_back(e.stage_digest(emu::Stage(s)));
  return f;
}

}  // namespace

TEST_CASE("a design emulator finishes where bud design run does, with its counters and memory",
          "[design][emulator]") {
  const DesignTarget t = target("vec_dma/vec_dma.toml");
  auto e = make(t);
  const emu::DesignInfo& info = e->describe();
  CHECK(info.name == "vec_dma");
  CHECK(info.revision == t.revision);
  CHECK(info.isa.empty());
  CHECK(info.stages == std::vector<std::string>{"ar", "r", "compute", "aw", "w"});
  REQUIRE(info.find_counter("r_waiting"));
  const Finish f = run_out(*e);

  RunOptions ro;
  ro.cache_dir = std::string(BUD_BINARY_DIR) + "/tests/design/emu_cache";
  DesignError err;
  const auto ran = run_design(t.spec, ro, err);
  REQUIRE(ran);
  CHECK(ran->passed);
  CHECK(f.cycles == ran->cycles);
  CHECK(f.stages[1].count == 64);  // r beats
  CHECK(e->counter(*info.find_counter("r_waiting")) == ran->counters[1].second);
  // The checked bytes are in the emulator's memory: what the example's reference computes.
  const std::string expected = std::string(BUD_BINARY_DIR) + "/tests/design/vec_expected.bin";
  const auto ref = process::run({"python3", kExamples + "vec_dma/ref/vec.py",
                                 kExamples + "vec_dma/data/ddr.bin", expected, "0xA8", "512", "-3",
                                 "320", "2"});
  REQUIRE(ref.status == 0);
  std::ifstream in(expected, std::ios::binary);
  const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> got(512);
  REQUIRE(e->read_memory("ddr", 0x10D0, got));
  CHECK(std::string(got.begin(), got.end()) == want);
}

TEST_CASE("a design emulator's state restores into another instance bit-identically",
          "[design][emulator][save]") {
  const DesignTarget t = target("vec_dma/vec_dma.toml");
  auto a = make(t);
  const Finish straight = run_out(*a);

  auto b = make(t);
  REQUIRE(b->step(300).cycles == 300);
  std::vector<uint8_t> state;
  b->save(state);
  auto c = make(t);
  std::string error;
  REQUIRE(c->restore(state, error));
  CHECK(c->cycle() == 300);
  const Finish resumed = run_out(*c);
  CHECK(resumed.cycles == straight.cycles);
  CHECK(resumed.digest == straight.digest);
  for (int s = 0; s < emu::kNumStages; ++s) {
    CHECK(resumed.stages[s].count == straight.stages[s].count);
    CHECK(resumed.stages[s].sum == straight.stages[s].sum);
  }
  // A truncated state names the byte offset and changes nothing.
  state.resize(state.size() / 2);
  CHECK_FALSE(c->restore(state, error));
  CHECK(error.find("byte offset") != std::string::npos);
  CHECK(c->cycle() == straight.cycles);
  // load() starts over: the same run again.
  REQUIRE(c->load({}).empty());
  CHECK(run_out(*c).digest == straight.digest);
}

TEST_CASE("a forced design signal holds, and a design that stops moving is a hang",
          "[design][emulator][force]") {
  const DesignTarget t = target("fir_stream/fir_stream.toml");
  auto good = make(t);
  const Finish f = run_out(*good);

  auto e = make(t);
  const auto id = e->find_signal("s_axis_tvalid");
  REQUIRE(id);
  emu::SignalValue zero;
  zero.width = 1;
  REQUIRE(e->force_signal(*id, 0, zero));
  // Nothing is ever offered: no handshake, so the watchdog ends the run as a hang.
  const auto r = e->step(1'000'000);
  CHECK(r.state == emu::RunState::Hang);
  CHECK(r.message.find("no handshake") != std::string::npos);
  CHECK(e->stage_digest(emu::Stage(0)).count == 0);
  CHECK(e->read_signal(*id).low() == 0);
  // Released, a fresh run is the good one.
  e->release_signal(*id, 0);
  REQUIRE(e->load({}).empty());
  CHECK(run_out(*e).digest == f.digest);
}
