// The handshake profile of a design run: the four states of each handshake sum to the cycles, a
// stage's busy cycles are its transactions, starved and back-pressured cycles agree with the
// example's own `when` counters (counted by the expression engine, not by the profile), a sink
// that is never ready gives a known pattern, the counter series halves in place when full, the
// trace's spans cover the run, the verdict names the throttled side, and profiling a cycle does
// not allocate.
#include "design/HandshakeProfile.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "design/DesignHarness.h"
#include "design/DesignRun.h"
#include "design/DesignTarget.h"
#include "design/HandshakeReport.h"
#include "tests/AllocCount.h"

using namespace bud;
using namespace bud::design;

namespace {

const std::string kExamples = std::string(BUD_SOURCE_DIR) + "/examples/designs/";
const std::string kCache = std::string(BUD_BINARY_DIR) + "/tests/design/emu_cache";

// fir_stream's design file with its text edited by `edits` (each: from -> to, which must occur).
DesignSpec fir(const std::vector<std::pair<std::string, std::string>>& edits = {}) {
  const std::string path = kExamples + "fir_stream/fir_stream.toml";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  auto parsed = parse_design_text(text, path);
  INFO(parsed.error.to_string());
  REQUIRE(parsed.ok());
  return *parsed.spec;
}

struct Profiled {
  std::optional<RunOutcome> outcome;
  std::optional<HandshakeProfile> profile;
};

Profiled profile_run(const DesignSpec& spec, ProfileOptions po = {}, uint64_t max_cycles = 0) {
  RunOptions ro;
  ro.cache_dir = kCache;
  ro.write_sinks = false;
  if (max_cycles) ro.max_cycles = max_cycles;
  Profiled p;
  ro.profile = &p.profile;
  ro.profile_options = po;
  DesignError err;
  p.outcome = run_design(spec, ro, err);
  INFO(err.to_string());
  REQUIRE(p.outcome);
  REQUIRE(p.profile);
  return p;
}

const HandshakeProfile::Handshake& named(const HandshakeProfile& p, const std::string& name) {
  for (const auto& h : p.handshakes())
    if (h.name == name) return h;
  FAIL("no handshake " << name);
  return p.handshakes().front();
}

uint64_t counter(const RunOutcome& r, const std::string& name) {
  for (const auto& [n, v] : r.counters)
    if (n == name) return v;
  FAIL("no counter " << name);
  return 0;
}

using S = HandshakeState;

std::optional<DesignTarget> example(const std::string& file) {
  TargetOptions o;
  o.cache_dir = kCache;
  DesignError e;
  auto t = prepare_design(kExamples + file, o, e);
  INFO(e.to_string());
  REQUIRE(t);
  return t;
}

// An example's model and a harness over it, stepped by the test itself. Filled in place: the
// harness points at the model.
struct Driven {
  std::optional<DesignTarget> target;
  std::optional<LoadedModel> model;
  std::optional<DesignHarness> harness;
};

void drive(Driven& d, const std::string& file) {
  d.target = example(file);
  std::string why;
  auto model = LoadedModel::load(d.target->library, why);
  INFO(why);
  REQUIRE(model);
  d.model.emplace(std::move(*model));
  auto harness = DesignHarness::make(d.target->spec, *d.model, 1, why);
  INFO(why);
  REQUIRE(harness);
  d.harness.emplace(std::move(*harness));
}

}  // namespace

TEST_CASE(
    "every handshake's four states sum to the run's cycles and busy is the stage's "
    "transactions",
    "[design][profile]") {
  const auto run = profile_run(fir());
  const HandshakeProfile& p = *run.profile;
  CHECK(p.cycles() == run.outcome->cycles);
  // fir_stream declares three stages, two of them its streams: nothing else to list.
  REQUIRE(p.handshakes().size() == 3);
  for (size_t i = 0; i < p.handshakes().size(); ++i) {
    const auto& h = p.handshakes()[i];
    INFO(h.name);
    CHECK(h.count(S::Busy) + h.count(S::Starved) + h.count(S::BackPressured) + h.count(S::Idle) ==
          p.cycles());
    REQUIRE(h.stage == i);
    CHECK(h.count(S::Busy) == run.outcome->stages[i].txns);
    uint64_t active = 0;
    for (uint64_t n : h.active) active += n;
    CHECK(active == p.active_cycles());
  }
  CHECK(named(p, "ingress").count(S::Busy) == 4096);  // every sample byte
  // The example's own counters, counted by the expression engine on the same cycles:
  // in_starved = s_axis_tready && !s_axis_tvalid, out_backpressured = m_axis_tvalid &&
  // !m_axis_tready.
  CHECK(named(p, "ingress").count(S::Starved) == counter(*run.outcome, "in_starved"));
  CHECK(named(p, "egress").count(S::BackPressured) == counter(*run.outcome, "out_backpressured"));
  CHECK(named(p, "ingress").producer == Party::Source);
  CHECK(named(p, "egress").consumer == Party::Sink);
  // The run ends with the harness's quiet cycles: no transfer after the active window.
  CHECK(p.cycles() - p.active_cycles() <= RunOptions{}.quiet_cycles);
}

namespace {

// Holds the sink's tready low whatever bud drives (as a debugger's force does).
class NeverReady : public DesignHarness::Override {
 public:
  explicit NeverReady(size_t ready) : ready_(ready) {}
  bool apply(LoadedModel& m) override {
    m.set(ready_, 0);
    return true;
  }

 private:
  size_t ready_;
};

}  // namespace

TEST_CASE(
    "a sink that is never ready: egress idle until its first beat, back-pressured after, "
    "never busy or starved",
    "[design][profile]") {
  Driven d;
  drive(d, "fir_stream/fir_stream.toml");
  const std::optional<DesignTarget>& t = d.target;
  std::optional<LoadedModel>& model = d.model;
  std::optional<DesignHarness>& h = d.harness;
  std::string why;
  ProfileOptions po;
  po.max_spans = 1000;
  auto prof = HandshakeProfile::make(t->spec, *h, po, why);
  REQUIRE(prof);
  const auto ready = model->find("m_axis_tready");
  REQUIRE(ready);
  NeverReady never(*ready);
  h->set_override(&never);
  h->set_profile(&*prof);
  h->reset();
  for (int i = 0; i < 2000; ++i) h->step();
  prof->finish(*h);
  const HandshakeProfile& p = *prof;
  REQUIRE(p.cycles() == 2000);
  const auto& egress = named(p, "egress");
  CHECK(egress.count(S::Busy) == 0);
  CHECK(egress.count(S::Starved) == 0);
  REQUIRE(egress.count(S::BackPressured) > 0);
  CHECK(egress.count(S::Idle) + egress.count(S::BackPressured) == 2000);
  // AXI-Stream: a valid beat stays offered until taken, so exactly two spans: idle, then
  // back-pressured from the first output to the end.
  REQUIRE(egress.spans.size() == 2);
  CHECK(egress.spans[0].start() == 0);
  CHECK(egress.spans[0].state() == S::Idle);
  CHECK(egress.spans[1].start() == egress.count(S::Idle));
  CHECK(egress.spans[1].state() == S::BackPressured);
  // out_backpressured = m_axis_tvalid && !m_axis_tready, counted by the expression engine.
  const size_t out_bp = 2;
  REQUIRE(p.counter_names()[out_bp] == "out_backpressured");
  CHECK(egress.count(S::BackPressured) == p.total(out_bp));
  // The design fills and stops taking samples: ingress is back-pressured at the end, and it
  // never moved a byte past what the pipeline holds.
  CHECK(named(p, "ingress").spans.back().state() == S::BackPressured);
  CHECK(named(p, "ingress").count(S::Busy) < 16);
  const Bottleneck b = find_bottleneck(p);
  CHECK(b.kind == BottleneckKind::Downstream);
  CHECK(b.limiter == "sink 'sums'");
  // The stall after the last transfer is back-pressure: not a wait, and in the readings.
  CHECK_FALSE(p.quiet_end());
  CHECK_FALSE(b.mostly_waiting);
}

TEST_CASE(
    "the verdict follows the throttled side: a slow sink is downstream, a slow source "
    "upstream",
    "[design][profile][verdict]") {
  const auto slow_sink =
      profile_run(fir({{"rate = 0.9", "rate = 1.0"}, {"rate = 0.75", "rate = 0.3"}}));
  const Bottleneck down = find_bottleneck(*slow_sink.profile);
  CHECK(down.kind == BottleneckKind::Downstream);
  CHECK(down.limiter == "sink 'sums'");
  CHECK(slow_sink.profile->handshakes()[*down.last].name == "egress");
  CHECK(reading(*slow_sink.profile, named(*slow_sink.profile, "egress")) == Reading::BackPressured);

  const auto slow_source =
      profile_run(fir({{"rate = 0.9", "rate = 0.3"}, {"rate = 0.75", "rate = 1.0"}}));
  const Bottleneck up = find_bottleneck(*slow_source.profile);
  CHECK(up.kind == BottleneckKind::Upstream);
  CHECK(up.limiter == "source 'samples'");
  CHECK(reading(*slow_source.profile, named(*slow_source.profile, "ingress")) == Reading::Starved);
  // An unthrottled sink never back-pressures.
  CHECK(named(*slow_source.profile, "egress").count(S::BackPressured) == 0);
  CHECK_FALSE(up.mostly_waiting);
}

TEST_CASE(
    "counter samples are the counters at each interval and the series halves in place "
    "when full",
    "[design][profile][counters]") {
  // A counter of every cycle: its value at the end of cycle c is c.
  const auto spec =
      fir({{"[[stage]]", "[[counter]]\nname = \"ticks\"\nwhen = \"1\"\n\n[[stage]]"}});
  ProfileOptions po;
  po.interval = 100;
  po.max_samples = 8;
  const auto run = profile_run(spec, po);
  const HandshakeProfile& p = *run.profile;
  const size_t ticks = p.counter_names().size() - 1;
  REQUIRE(p.counter_names()[ticks] == "ticks");
  CHECK(p.total(ticks) == p.cycles());
  CHECK(p.requested_interval() == 100);
  // 100 doubled until at most 8 samples cover the run.
  uint64_t want = 100;
  while (p.cycles() / want > 8) want *= 2;
  CHECK(p.interval() == want);
  CHECK(p.samples() == p.cycles() / want);
  for (size_t i = 0; i < p.samples(); ++i) CHECK(p.sample(i, ticks) == (i + 1) * p.interval());
  // The signal counter as the run reads it at the end.
  CHECK(p.total(0) == counter(*run.outcome, "samples_in"));
}

TEST_CASE(
    "trace spans tile each track, a small budget truncates them, and the JSON percentages "
    "sum to 100",
    "[design][profile][trace]") {
  ProfileOptions po;
  po.max_spans = 1u << 20;
  const auto run = profile_run(fir(), po);
  const HandshakeProfile& p = *run.profile;
  CHECK_FALSE(p.truncated());
  const auto trace = handshake_trace(p, "fir_stream");
  std::map<int, uint64_t> covered;
  std::map<int, std::string> names;
  size_t counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") covered[e["tid"].get<int>()] += e["dur"].get<uint64_t>();
    if (ph == "M" && e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"];
    counters += ph == "C";
  }
  REQUIRE(names.size() == 3);
  for (const auto& [tid, n] : covered) CHECK(n == p.cycles());
  CHECK(counters >= p.counter_names().size() * p.samples());
  // Equal states are merged: each handshake has fewer spans than cycles, and its states change
  // from span to span.
  for (const auto& h : p.handshakes()) {
    CHECK(h.spans.size() < p.cycles());
    for (size_t i = 1; i < h.spans.size(); ++i) CHECK(h.spans[i].state() != h.spans[i - 1].state());
  }

  const auto j = handshake_json(p, find_bottleneck(p));
  for (const auto& h : j["handshakes"]) {
    double sum = 0;
    for (const auto& [k, v] : h["percent"].items()) sum += v.get<double>();
    CHECK(sum == Approx(100.0).epsilon(1e-9));
  }

  ProfileOptions small;
  small.max_spans = 30;  // 10 per handshake
  const auto cut = profile_run(fir(), small);
  CHECK(cut.profile->truncated());
  for (const auto& h : cut.profile->handshakes()) {
    CHECK(h.spans.size() <= 10);
    if (h.truncated_at) CHECK(*h.truncated_at > h.spans.back().start());
  }
  // The counts still cover the whole run.
  CHECK(named(*cut.profile, "ingress").count(S::Busy) == 4096);
}

TEST_CASE(
    "an AXI design lists its undeclared control channels and reads the memory as the "
    "limiter",
    "[design][profile][axi]") {
  const auto t = example("vec_dma/vec_dma.toml");
  const auto run = profile_run(t->spec);
  const HandshakeProfile& p = *run.profile;
  // Six declared stages, then the five AXI4-Lite channels no stage covers.
  REQUIRE(p.handshakes().size() == 11);
  CHECK(p.handshakes()[6].name == "control.aw");
  CHECK(p.handshakes()[6].producer == Party::Firmware);
  CHECK(p.handshakes()[8].name == "control.b");
  CHECK(p.handshakes()[8].producer == Party::Design);
  const auto& r = named(p, "r");
  CHECK(r.producer == Party::Memory);
  CHECK(r.count(S::Busy) == 64);
  // r_waiting = m_axi_rready && !m_axi_rvalid: the r channel's starved cycles.
  CHECK(r.count(S::Starved) == counter(*run.outcome, "r_waiting"));
  // 8 firmware writes and 4 reads (firmware.fw): the control channels' transfers.
  CHECK(named(p, "control.w").count(S::Busy) == run.outcome->firmware_accesses - 4);
  CHECK(named(p, "control.r").count(S::Busy) == 4);
  const Bottleneck b = find_bottleneck(p);
  CHECK(b.kind == BottleneckKind::Upstream);
  CHECK(b.limiter == "memory port 'mem'");
}

TEST_CASE("profiling a cycle does not allocate", "[design][profile][alloc]") {
  Driven d;
  drive(d, "fir_stream/fir_stream.toml");
  const std::optional<DesignTarget>& t = d.target;
  std::optional<DesignHarness>& h = d.harness;
  std::string why;
  ProfileOptions po;
  po.interval = 1;  // a counter sample every cycle, and the series halves several times
  po.max_samples = 64;
  po.max_spans = 1u << 16;
  auto p = HandshakeProfile::make(t->spec, *h, po, why);
  REQUIRE(p);
  h->set_profile(&*p);
  h->reset();
  for (int i = 0; i < 100; ++i) h->step();  // past the first halving
  const uint64_t before = test::allocations();
  for (int i = 0; i < 3000; ++i) h->step();
  CHECK(test::allocations() == before);
  CHECK(p->cycles() == 3100);
  CHECK(p->interval() > 1);
}
