// The cost of running a design under bud, both example designs side by side in one process
// (docs/performance.md, "Design files"). Each design's model is driven by
//   bare      a hand-written testbench: the same model, the same stimulus and back-pressure
//             (fir_stream: source beats offered on 90% of cycles, sink ready on 75%, from one
//             generator; vec_dma: an AXI4 slave memory answering each burst after the port's
//             latency plus seeded jitter, and the firmware's AXI4-Lite writes, its STATUS read
//             and the interrupt), the Verilated members written and read in place as `top->x`
//             would, the output collected, clock edges; nothing else. It must produce the
//             harness's output (checked before timing).
//   harness   design/DesignHarness: the same plus counters, stage transactions with payload
//             digests, AXI4 DRAM timing, the firmware runner and the drain check
//   interp    the harness with its counters and stages evaluated by the interpreter (the
//             expression stack machine and per-signal reads) instead of the generated probe
//   emulator  design/DesignEmulator behind emu::Emulator (what `bud debug --design` steps):
//             the harness plus StageTxns and stage digests
//   profile   the harness with design/HandshakeProfile observing (`bud profile --design`):
//             the four-state count per handshake, counters every 1024 cycles; and with spans
//             (`--trace`), the state spans too
// Each runs the design's whole stimulus REPS times (restoring the power-on state between), in
// ROUNDS interleaved rounds (designs and loops alternating), and prints one line per round and
// loop: `round DESIGN LOOP CYCLES SECONDS`; tests/bench/design_harness_bench.sh turns them into
// the table (best and median). Wall time is for this figure only.
// Usage: bud-bench-design SOURCE_DIR CACHE_DIR [REPS [ROUNDS]]; BUD_BENCH_ONLY=DESIGN[:LOOP] runs
// only that design (loop), for a profiler.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "design/DesignEmulator.h"
#include "design/DesignHarness.h"
#include "design/DesignTarget.h"
#include "design/HandshakeProfile.h"
#include "design/LoadedModel.h"
#include "emu/core/Rng.h"
#if __has_include("design/CompiledProbe.h")
#include "design/CompiledProbe.h"
#define BUD_BENCH_HAS_PROBE 1
#endif

using namespace bud;
using namespace bud::design;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bud-bench-design: %s\n", why.c_str());
  std::exit(2);
}

// A Verilated member of the top, as a hand-written testbench names it (`top->name`).
template <class T>
T* member(LoadedModel& m, const char* name) {
  const auto i = m.find(name);
  if (!i) die(std::string("no port ") + name);
  if (m.ports()[*i].bytes != sizeof(T)) die(std::string("port ") + name + " is not that wide");
  return static_cast<T*>(m.ports()[*i].data);
}

void edge(LoadedModel& m, uint8_t* clk) {
  *clk = 1, m.eval(), *clk = 0, m.eval();
}

void reset(LoadedModel& m, uint8_t* clk, uint8_t* rst_n) {
  *rst_n = 0;
  for (int i = 0; i < 4; ++i) *clk = 0, m.eval(), *clk = 1, m.eval();
  *clk = 0, *rst_n = 1, m.eval();
}

// fir_stream by hand: the sink's bytes in `out`; cycles returned.
struct FirBare {
  uint8_t *clk, *rst_n, *sd, *sv, *sr, *mv, *mr;
  uint32_t* md;
  explicit FirBare(LoadedModel& m)
      : clk(member<uint8_t>(m, "clk")), rst_n(member<uint8_t>(m, "rst_n")),
        sd(member<uint8_t>(m, "s_axis_tdata")), sv(member<uint8_t>(m, "s_axis_tvalid")),
        sr(member<uint8_t>(m, "s_axis_tready")), mv(member<uint8_t>(m, "m_axis_tvalid")),
        mr(member<uint8_t>(m, "m_axis_tready")), md(member<uint32_t>(m, "m_axis_tdata")) {}
  [[gnu::noinline]] uint64_t run(LoadedModel& m, const std::string& samples, std::string& out) {
    *sv = 0, *mr = 0;
    reset(m, clk, rst_n);
    emu::Rng rng(1);
    size_t sent = 0;
    bool offering = false;
    uint64_t idle = 0, cycles = 0;
    while (idle < 1000) {
      if (!offering && sent < samples.size()) offering = rng.chance(900'000, 1'000'000);
      *sd = offering ? static_cast<uint8_t>(samples[sent]) : 0;
      *sv = offering;
      *mr = rng.chance(750'000, 1'000'000);
      m.eval();
      bool moved = false;
      if (offering && *sr) ++sent, offering = false, moved = true;
      if (*mv && *mr) out.append(reinterpret_cast<const char*>(md), 4), moved = true;
      idle = moved || sent < samples.size() ? 0 : idle + 1;
      edge(m, clk);
      ++cycles;
    }
    return cycles;
  }
};

// vec_dma by hand: a one-burst-at-a-time AXI4 slave over the region's bytes (each read burst's
// data and each write's response after the port's latency plus seeded jitter), the firmware's
// CSR writes over AXI4-Lite, then the interrupt, a STATUS read (done, no error) and the clear.
struct VecBare {
  uint8_t *clk, *rst_n;
  // AXI4-Lite control slave.
  uint16_t *l_awaddr, *l_araddr;
  uint8_t *l_awvalid, *l_awready, *l_wvalid, *l_wready, *l_wstrb, *l_bvalid, *l_bready;
  uint8_t *l_arvalid, *l_arready, *l_rvalid, *l_rready, *irq;
  uint32_t *l_wdata, *l_rdata;
  // AXI4 master.
  uint32_t *araddr, *awaddr;
  uint8_t *arlen, *arvalid, *arready, *rvalid, *rready, *rlast, *rid, *rresp;
  uint8_t *awlen, *awvalid, *awready, *wvalid, *wready, *wstrb, *wlast, *bvalid, *bready, *bid,
      *bresp;
  uint64_t *rdata, *wdata;
  uint64_t base = 0, latency = 0, jitter = 0;
  explicit VecBare(LoadedModel& m, const DesignSpec& spec)
      : clk(member<uint8_t>(m, "clk")), rst_n(member<uint8_t>(m, "rst_n")),
        l_awaddr(member<uint16_t>(m, "s_axil_awaddr")), l_araddr(member<uint16_t>(m, "s_axil_araddr")),
        l_awvalid(member<uint8_t>(m, "s_axil_awvalid")), l_awready(member<uint8_t>(m, "s_axil_awready")),
        l_wvalid(member<uint8_t>(m, "s_axil_wvalid")), l_wready(member<uint8_t>(m, "s_axil_wready")),
        l_wstrb(member<uint8_t>(m, "s_axil_wstrb")), l_bvalid(member<uint8_t>(m, "s_axil_bvalid")),
        l_bready(member<uint8_t>(m, "s_axil_bready")), l_arvalid(member<uint8_t>(m, "s_axil_arvalid")),
        l_arready(member<uint8_t>(m, "s_axil_arready")), l_rvalid(member<uint8_t>(m, "s_axil_rvalid")),
        l_rready(member<uint8_t>(m, "s_axil_rready")), irq(member<uint8_t>(m, "irq")),
        l_wdata(member<uint32_t>(m, "s_axil_wdata")), l_rdata(member<uint32_t>(m, "s_axil_rdata")),
        araddr(member<uint32_t>(m, "m_axi_araddr")), awaddr(member<uint32_t>(m, "m_axi_awaddr")),
        arlen(member<uint8_t>(m, "m_axi_arlen")), arvalid(member<uint8_t>(m, "m_axi_arvalid")),
        arready(member<uint8_t>(m, "m_axi_arready")), rvalid(member<uint8_t>(m, "m_axi_rvalid")),
        rready(member<uint8_t>(m, "m_axi_rready")), rlast(member<uint8_t>(m, "m_axi_rlast")),
        rid(member<uint8_t>(m, "m_axi_rid")), rresp(member<uint8_t>(m, "m_axi_rresp")),
        awlen(member<uint8_t>(m, "m_axi_awlen")), awvalid(member<uint8_t>(m, "m_axi_awvalid")),
        awready(member<uint8_t>(m, "m_axi_awready")), wvalid(member<uint8_t>(m, "m_axi_wvalid")),
        wready(member<uint8_t>(m, "m_axi_wready")), wstrb(member<uint8_t>(m, "m_axi_wstrb")),
        wlast(member<uint8_t>(m, "m_axi_wlast")), bvalid(member<uint8_t>(m, "m_axi_bvalid")),
        bready(member<uint8_t>(m, "m_axi_bready")), bid(member<uint8_t>(m, "m_axi_bid")),
        bresp(member<uint8_t>(m, "m_axi_bresp")), rdata(member<uint64_t>(m, "m_axi_rdata")),
        wdata(member<uint64_t>(m, "m_axi_wdata")) {
    base = spec.memories.at(0).base;
    latency = spec.axi4.at(0).latency.value_or(40);
    jitter = spec.axi4.at(0).jitter.value_or(8);
  }
  [[gnu::noinline]] uint64_t run(LoadedModel& m, std::vector<uint8_t>& mem) {
    const uint32_t ddr = static_cast<uint32_t>(base);
    // The firmware: CSR writes (SRC, DST, LEN, SCALE, BIAS, SHIFT, start with interrupt), the
    // interrupt, STATUS (must read done and nothing else), the clear.
    const std::pair<uint16_t, uint32_t> writes[] = {{0x08, ddr + 0xA8}, {0x0C, ddr + 0x10D0},
                                                    {0x10, 512}, {0x14, 0xFD}, {0x18, 320},
                                                    {0x1C, 2}, {0x00, 0x3}};
    enum class Fw { Write, WriteResp, Irq, Read, ReadResp, Clear, ClearResp, Done };
    Fw fw = Fw::Write;
    size_t next = 0;
    bool aw_done = false, w_done = false;
    // The slave: one read burst and one write burst at a time.
    enum class Ch { Idle, Wait, Data };
    Ch rd = Ch::Idle, wr = Ch::Idle;
    uint64_t r_at = 0, r_due = 0, w_at = 0, b_due = 0;
    uint32_t r_beat = 0, r_len = 0;
    bool b_wait = false;
    emu::Rng rng(7);
    *arready = *awready = *wready = *rvalid = *bvalid = 0;
    *l_awvalid = *l_wvalid = *l_bready = *l_arvalid = *l_rready = 0;
    reset(m, clk, rst_n);
    *l_wstrb = 0xF;
    *rid = *rresp = *bid = *bresp = 0;
    uint64_t cycle = 0, idle = 0;
    while (idle < 1000) {
      // Drive: the slave's outputs from its state, the firmware's request.
      *arready = rd == Ch::Idle;
      *rvalid = rd == Ch::Data && cycle >= r_due;
      if (*rvalid) *rdata = load64(mem, r_at + 8 * r_beat), *rlast = r_beat == r_len;
      *awready = wr == Ch::Idle && !b_wait;
      *wready = wr == Ch::Data;
      *bvalid = b_wait && cycle >= b_due;
      const bool writing = fw == Fw::Write || fw == Fw::Clear;
      const auto [csr, value] = fw == Fw::Clear ? std::pair<uint16_t, uint32_t>{0x04, 1}
                                                : writes[next < 7 ? next : 6];
      *l_awvalid = writing && !aw_done;
      *l_wvalid = writing && !w_done;
      *l_awaddr = csr, *l_wdata = value;
      *l_bready = fw == Fw::WriteResp || fw == Fw::ClearResp;
      *l_arvalid = fw == Fw::Read, *l_araddr = 0x04;
      *l_rready = fw == Fw::ReadResp;
      m.eval();
      // The edge's handshakes.
      bool moved = false;
      if (*arvalid && *arready) {
        r_at = *araddr - base, r_len = *arlen, r_beat = 0, rd = Ch::Data, moved = true;
        r_due = cycle + latency + rng.below(jitter + 1);
      }
      if (*rvalid && *rready) {
        moved = true;
        if (r_beat++ == r_len) rd = Ch::Idle;
      }
      if (*awvalid && *awready) w_at = *awaddr - base, wr = Ch::Data, moved = true;
      if (*wvalid && *wready) {
        moved = true;
        for (int b = 0; b < 8; ++b)
          if ((*wstrb >> b) & 1) mem[w_at + b] = static_cast<uint8_t>(*wdata >> (8 * b));
        w_at += 8;
        if (*wlast) wr = Ch::Idle, b_wait = true, b_due = cycle + latency + rng.below(jitter + 1);
      }
      if (*bvalid && *bready) b_wait = false, moved = true;
      switch (fw) {
        case Fw::Write:
        case Fw::Clear:
          aw_done = aw_done || *l_awready;
          w_done = w_done || *l_wready;
          if (aw_done && w_done) fw = fw == Fw::Write ? Fw::WriteResp : Fw::ClearResp, moved = true;
          break;
        case Fw::WriteResp:
        case Fw::ClearResp:
          if (*l_bvalid) {
            aw_done = w_done = false, moved = true;
            fw = fw == Fw::ClearResp ? Fw::Done : ++next == 7 ? Fw::Irq : Fw::Write;
          }
          break;
        case Fw::Irq:
          if (*irq) fw = Fw::Read, moved = true;
          break;
        case Fw::Read:
          if (*l_arready) fw = Fw::ReadResp, moved = true;
          break;
        case Fw::ReadResp:
          if (*l_rvalid) {
            if ((*l_rdata & 7) != 1) die("vec_dma bare: STATUS is not done");
            fw = Fw::Clear, moved = true;
          }
          break;
        case Fw::Done:
          break;
      }
      const bool busy = fw != Fw::Done || rd != Ch::Idle || wr != Ch::Idle || b_wait;
      idle = moved || busy ? 0 : idle + 1;
      edge(m, clk);
      ++cycle;
    }
    return cycle;
  }
  static uint64_t load64(const std::vector<uint8_t>& mem, uint64_t at) {
    uint64_t v;
    std::memcpy(&v, mem.data() + at, 8);
    return v;
  }
};

struct Loop {
  std::string name;
  std::function<uint64_t()> run;  // simulated cycles
};

struct Bench {
  std::string name;
  std::optional<DesignTarget> target;
  std::optional<LoadedModel> model, interp_model;
  std::optional<DesignHarness> harness, interp;
  std::unique_ptr<DesignEmulator> emulator;
  std::vector<uint8_t> power_on, interp_power_on;
  std::vector<Loop> loops;
};

std::string output_of(const DesignHarness& h, const DesignSpec& spec) {
  const OutputCheck& c = *spec.check;
  if (!c.sink.empty()) {
    for (const auto& s : h.streams())
      if (s.name == c.sink) return s.bytes;
    die("no sink " + c.sink);
  }
  std::string out(c.length, '\0');
  h.axi().memory(c.memory)->read(c.offset, {reinterpret_cast<uint8_t*>(out.data()), out.size()});
  return out;
}

[[gnu::noinline]] uint64_t harness_run(DesignHarness& h, const std::vector<uint8_t>& power_on,
                                       int reps) {
  uint64_t cycles = 0;
  std::string why;
  for (int r = 0; r < reps; ++r) {
    size_t at = 0;
    h.restore(power_on, at, why);
    h.reset();
    while (!h.drained(1000) && !h.stopped()) h.step();
    cycles += h.cycle();
  }
  return cycles;
}

void setup(Bench& b, const std::string& source, const std::string& cache, int reps) {
  TargetOptions to;
  to.cache_dir = cache;
  DesignError err;
  b.target = prepare_design(source + "/examples/designs/" + b.name + "/" + b.name + ".toml", to, err);
  if (!b.target) die(err.to_string());
  const DesignTarget& t = *b.target;
  std::string why;
  auto model = LoadedModel::load(t.library, why);
  if (!model) die(why);
  b.model.emplace(std::move(*model));
  b.harness = DesignHarness::make(t.spec, *b.model, 1, why);
  if (!b.harness) die(why);
  b.harness->save(b.power_on);
  DesignHarness& h = *b.harness;
  LoadedModel& m = *b.model;

  // The bare loop, checked against the harness: the same output.
  std::function<uint64_t(std::string&)> bare;
  if (b.name == "fir_stream") {
    auto fir = std::make_shared<FirBare>(m);
    const std::string samples = h.streams()[0].bytes;
    bare = [fir, samples, &m](std::string& out) {
      out.clear();
      out.reserve(samples.size() * 4 + 64);
      return fir->run(m, samples, out);
    };
  } else {
    auto vec = std::make_shared<VecBare>(m, t.spec);
    std::ifstream in(t.spec.memories.at(0).init, std::ios::binary);
    std::vector<uint8_t> init((std::istreambuf_iterator<char>(in)), {});
    init.resize(t.spec.memories.at(0).size, 0);
    const OutputCheck c = *t.spec.check;
    bare = [vec, init, c, &m](std::string& out) {
      std::vector<uint8_t> mem = init;
      const uint64_t cycles = vec->run(m, mem);
      out.assign(reinterpret_cast<const char*>(mem.data() + c.offset), c.length);
      return cycles;
    };
  }
  auto restore_model = [&b] {
    size_t at = 0;
    std::string why;
    b.harness->restore(b.power_on, at, why);  // the model's power-on state, as the harness's
  };
  {
    restore_model();
    std::string bare_out;
    bare(bare_out);
    harness_run(h, b.power_on, 1);
    if (bare_out != output_of(h, t.spec) || bare_out.empty())
      die(b.name + ": the bare loop's output differs from the harness's");
  }
  auto out = std::make_shared<std::string>();
  b.loops.push_back({"bare", [=] {
                       uint64_t cycles = 0;
                       for (int r = 0; r < reps; ++r) {
                         restore_model();
                         cycles += bare(*out);
                       }
                       return cycles;
                     }});
  b.loops.push_back({"harness", [&h, &b, reps] { return harness_run(h, b.power_on, reps); }});
#ifdef BUD_BENCH_HAS_PROBE
  auto second = LoadedModel::load(t.library, why);
  if (!second) die(why);
  b.interp_model.emplace(std::move(*second));
  b.interp = DesignHarness::make(t.spec, *b.interp_model, 1, why, {}, ProbeMode::Interpreted);
  if (!b.interp) die(why);
  b.interp->save(b.interp_power_on);
  b.loops.push_back({"interp", [&b, reps] { return harness_run(*b.interp, b.interp_power_on, reps); }});
#endif
  emu::EmulatorConfig ec;
  b.emulator = DesignEmulator::make(t.spec, t.library, t.revision, ec, 1, 1000, why);
  if (!b.emulator) die(why);
  b.loops.push_back({"emulator", [&b, reps] {
                       uint64_t cycles = 0;
                       for (int r = 0; r < reps; ++r) {
                         b.emulator->load({});
                         b.emulator->step(100'000'000);
                         cycles += b.emulator->cycle();
                       }
                       return cycles;
                     }});
  // The harness with the handshake profile on (a new one each run, as each `bud profile` makes).
  for (const uint64_t spans : {uint64_t{0}, uint64_t{1} << 18})
    b.loops.push_back({spans ? "spans" : "profile", [&h, &b, reps, spans] {
                         uint64_t cycles = 0;
                         std::string why;
                         for (int r = 0; r < reps; ++r) {
                           size_t at = 0;
                           h.restore(b.power_on, at, why);
                           ProfileOptions po;
                           po.max_spans = spans;
                           auto p = HandshakeProfile::make(b.target->spec, h, po, why);
                           h.set_profile(&*p);
                           h.reset();
                           while (!h.drained(1000) && !h.stopped()) h.step();
                           h.set_profile(nullptr);
                           p->finish(h);
                           cycles += h.cycle();
                         }
                         return cycles;
                       }});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bud-bench-design SOURCE_DIR CACHE_DIR [REPS [ROUNDS]]\n");
    return 2;
  }
  const int reps = argc > 3 ? std::atoi(argv[3]) : 10;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 7;
  // fir_stream's 6,724 cycles a run against vec_dma's 1,632: about the same wall time each.
  std::vector<Bench> benches(2);
  benches[0].name = "fir_stream";
  benches[1].name = "vec_dma";
  // BUD_BENCH_ONLY=DESIGN or DESIGN:LOOP runs only that (for a profiler).
  const char* only_env = std::getenv("BUD_BENCH_ONLY");
  const std::string only = only_env ? only_env : "";
  for (Bench& b : benches)
    if (only.empty() || only.rfind(b.name, 0) == 0)
      setup(b, argv[1], argv[2], b.name == "vec_dma" ? reps * 4 : reps);
  // Interleaved rounds: on a shared machine every loop sees the same disturbance on average.
  for (int round = 0; round < rounds; ++round)
    for (Bench& b : benches)
      for (Loop& l : b.loops) {
        if (!only.empty() && only != b.name && only != b.name + ":" + l.name) continue;
        const auto t0 = Clock::now();
        const uint64_t cycles = l.run();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        std::printf("round %s %s %llu %.6f\n", b.name.c_str(), l.name.c_str(),
                    static_cast<unsigned long long>(cycles), s);
        std::fflush(stdout);
      }
  return 0;
}
