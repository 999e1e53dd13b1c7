#include "profile/Calibrate.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "emu/npu/NpuEmulator.h"
#include "emu/workload/Workload.h"
#include "profile/Profiler.h"
#include "profile/Report.h"

namespace bud::profile {

namespace {

using isa::CycleClass;
using isa::Engine;
using json::Json;

// The microbenchmarks, as workloads (docs/profiling.md lists what each measures).
struct Bench {
  const char* name;
  const char* text;
  emu::ThrottleConfig throttle;  // period 0: the configuration's
};
const Bench kBenches[] = {
    // One 128 x 64 x 64 GEMM (8192 MAC-array iterations) on operands loaded once: the array's
    // peak from resident scratchpads (its active cycles).
    {"compute",
     R"(name: "cal_compute" seed: 1 input_shape: [128, 64]
      layer { name: "gemm" dense { m: 128 k: 64 n: 64 } })",
     {}},
    // 256 KiB of weights streamed once for a 2-row GEMV: the load engine reading DRAM.
    {"read_stream",
     R"(name: "cal_read" seed: 1 input_shape: [2, 1024]
      layer { name: "gemv" dense { m: 2 k: 1024 n: 256 } })",
     {}},
    // A ReLU over 64 KiB: as many bytes stored as loaded, stores back to back.
    {"write_stream",
     R"(name: "cal_write" seed: 1 input_shape: [32, 32, 64]
      layer { name: "relu" relu {} })",
     {}},
    // Single-buffered tiles: every tile's loads wait for compute, its POST for the stores.
    {"ping_pong",
     R"(name: "cal_ping_pong" seed: 1 input_shape: [1024, 64] single_buffer: true
      layer { name: "gemm" dense { m: 1024 k: 64 n: 64 } })",
     {}},
    // Double-buffered tiles: the load engine writes INP while GEMM reads the other half.
    {"bank_conflicts",
     R"(name: "cal_banks" seed: 1 input_shape: [1024, 64]
      layer { name: "gemm" dense { m: 1024 k: 64 n: 64 } })",
     {}},
    // The compute benchmark with the clock enabled 3 cycles of 4.
    {"throttle",
     R"(name: "cal_throttle" seed: 1 input_shape: [128, 64]
      layer { name: "gemm" dense { m: 128 k: 64 n: 64 } })",
     {4, 1}},
};

struct BenchRun {
  run::PreparedRun prepared;
  ProfiledRun run;
  emu::DramStats dram;
  uint64_t end = 0;
  uint64_t counter(const char* name) const { return run.report.counter(name); }
  uint64_t engine(Engine e, CycleClass c) const {
    return run.report.counters[isa::class_counter(e, c)];
  }
};

std::optional<BenchRun> run_bench(const Bench& b, const emu::EmulatorConfig& config,
                                  std::string& error) {
  auto w = workload::parse_workload(b.text, std::string("calibrate:") + b.name);
  if (!w) {
    error = w.error();
    return std::nullopt;
  }
  run::RunOptions o;
  o.workload = b.name;
  o.emulator = config;
  if (b.throttle.period != 0) o.emulator.throttle = b.throttle;
  auto prepared = run::prepare_workload(std::move(*w), o);
  if (!prepared) {
    error = prepared.error();
    return std::nullopt;
  }
  BenchRun r;
  r.prepared = std::move(*prepared);
  // The DRAM model's own statistics are the oracle for the DRAM counters: read from the NPU
  // emulator (the only design with that model) when the run has ended.
  r.run = run_profiled(r.prepared, o, 0, {}, [&r](const emu::Emulator& e) {
    r.end = e.cycle();
    if (const auto* npu = dynamic_cast<const emu::NpuEmulator*>(&e)) r.dram = npu->dram().stats();
  });
  if (!r.run.attribution || !r.run.report.passed) {
    error = std::string("microbenchmark ") + b.name +
            " did not pass: " + (r.run.error.empty() ? r.run.report.message : r.run.error);
    return std::nullopt;
  }
  return r;
}

uint64_t count_opcode(const workload::Program& p, isa::Opcode op) {
  uint64_t n = 0;
  for (const auto& c : p.commands) n += c.opcode == op;
  return n;
}

// Scratchpad entries the program's commands write or read, by buffer: LOADs write their
// y x x entries, POST writes its OUT entries (two per ACC entry for BF16), STOREs read theirs.
uint64_t load_entries(const workload::Program& p, isa::Buffer b) {
  uint64_t n = 0;
  for (const auto& c : p.commands)
    if (c.opcode == isa::Opcode::Load && c.buffer == b) n += uint64_t{c.y_size} * c.x_size;
  return n;
}
// MACs the program's GEMMs issue: rows x cols per int8 iteration, rows/2 x cols per BF16 one.
uint64_t issued_macs(const workload::Program& p) {
  uint64_t n = 0;
  const uint64_t R = p.array.rows, C = p.array.cols;
  for (const auto& c : p.commands)
    if (c.opcode == isa::Opcode::Gemm) {
      const uint64_t lanes = c.bf16 ? R / 2 : R;
      n += uint64_t{c.m} * ((c.k + lanes - 1) / lanes) * ((c.n + C - 1) / C) * lanes * C;
    }
  return n;
}
uint64_t post_entries(const workload::Program& p) {
  uint64_t n = 0;
  for (const auto& c : p.commands)
    if (c.opcode == isa::Opcode::Post) n += c.out_entries();
  return n;
}
uint64_t store_entries(const workload::Program& p) {
  uint64_t n = 0;
  for (const auto& c : p.commands)
    if (c.opcode == isa::Opcode::Store) n += uint64_t{c.y_size} * c.x_size;
  return n;
}

// Edges t in [first, last] at which the harness raised `throttle` (it drives edge t with the
// cycle count t - 1: throttled when (t - 1) % period < on).
uint64_t throttled_edges(const emu::ThrottleConfig& t, uint64_t first, uint64_t last) {
  if (t.period == 0 || last < first) return 0;
  uint64_t n = 0;
  for (uint64_t c = first - 1; c < last; ++c) n += (c % t.period) < t.on_cycles;
  return n;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// dram_rd_latency_sum against the DRAM model with the throttle on (docs/counters.md).
constexpr double kThrottledLatencyTolerance = 0.02;

// The two peaks the roofline's empirical ceilings are: MACs/cycle from `compute`, DRAM read
// bytes/cycle from `read_stream`.
Peak mac_peak(const BenchRun& compute) {
  const uint32_t m = compute.run.attribution->array_macs();
  return {"MACs/cycle", "compute", static_cast<double>(m),
          ratio(compute.counter("macs_issued"), compute.engine(Engine::Gemm, CycleClass::Active)),
          "macs_issued / gemm.active (operands resident: the array's own cycles)"};
}
Peak read_peak(const BenchRun& read, double dram_bw) {
  return {"DRAM read bytes/cycle", "read_stream", dram_bw,
          ratio(read.counter("dram_rd_bytes"), read.engine(Engine::Load, CycleClass::Active) +
                                                   read.engine(Engine::Load, CycleClass::StallMem)),
          "dram_rd_bytes / (load.active + load.stall_mem)"};
}

}  // namespace

Calibration calibrate(const emu::EmulatorConfig& config) {
  Calibration cal;
  auto row = [&](const std::string& bench, const std::string& counter, const char* oracle,
                 uint64_t expected, uint64_t measured, double tolerance = 0) {
    FidelityRow r;
    r.benchmark = bench;
    r.counter = counter;
    r.oracle = oracle;
    r.expected = expected;
    r.measured = measured;
    r.error = (static_cast<double>(measured) - static_cast<double>(expected)) /
              static_cast<double>(std::max<uint64_t>(expected, 1));
    r.tolerance = tolerance;
    r.ok = std::fabs(r.error) <= tolerance;
    cal.rows.push_back(std::move(r));
  };
  std::vector<BenchRun> runs;
  for (const auto& b : kBenches) {
    auto r = run_bench(b, config, cal.error);
    if (!r) return cal;
    cal.benchmarks.emplace_back(b.name);
    const auto& p = r->prepared.program;
    const std::string name = b.name;
    // The PMU counts from the host's first CSR write (PMU_CTRL enable + clear, edge 1) on, so
    // it sees edges 2..end: the emulator's clock minus one.
    const uint64_t counted = r->end - 1;
    row(name, "cycles", "emulator clock", counted, r->counter("cycles"));
    for (int e = 0; e < isa::kNumEngines; ++e) {
      uint64_t sum = 0;
      for (int c = 0; c < isa::kNumClasses; ++c)
        sum += r->engine(static_cast<Engine>(e), static_cast<CycleClass>(c));
      row(name, std::string(isa::kEngineNames[e]) + ".* (7 classes)", "emulator clock", counted,
          sum);
    }
    row(name, "macs_issued", "lowering", issued_macs(p), r->counter("macs_issued"));
    row(name, "macs_useful", "lowering", p.useful_macs, r->counter("macs_useful"));
    uint64_t requested = 0;
    for (const auto& c : p.commands) requested += command_read_bytes(c, p.array);
    row(name, "dram_rd_bytes", "lowering", requested, r->counter("dram_rd_bytes"));
    row(name, "dram_rd_bytes", "DRAM model", r->dram.bytes_read, r->counter("dram_rd_bytes"));
    row(name, "dram_wr_bytes", "DRAM model", r->dram.bytes_written, r->counter("dram_wr_bytes"));
    row(name, "dram_rd_reqs", "DRAM model", r->dram.read_requests, r->counter("dram_rd_reqs"));
    row(name, "dram_wr_reqs", "DRAM model", r->dram.write_requests, r->counter("dram_wr_reqs"));
    // The PMU counts a read's latency to the cycle the NPU takes the response, the model to its
    // first presentation: equal unless the NPU's clock is clamped while a response waits
    // (throttling), which only adds cycles (docs/counters.md "Fidelity").
    row(name, "dram_rd_latency_sum", "DRAM model", r->dram.total_read_latency,
        r->counter("dram_rd_latency_sum"), b.throttle.period != 0 ? kThrottledLatencyTolerance : 0);
    row(name, "spad_inp_wr", "lowering", load_entries(p, isa::Buffer::Inp),
        r->counter("spad_inp_wr"));
    row(name, "spad_wgt_wr", "lowering", load_entries(p, isa::Buffer::Wgt),
        r->counter("spad_wgt_wr"));
    row(name, "spad_out_wr", "lowering", post_entries(p), r->counter("spad_out_wr"));
    row(name, "spad_out_rd", "lowering", store_entries(p), r->counter("spad_out_rd"));
    row(name, "retired_load", "lowering", count_opcode(p, isa::Opcode::Load),
        r->counter("retired_load"));
    row(name, "retired_gemm", "lowering", count_opcode(p, isa::Opcode::Gemm),
        r->counter("retired_gemm"));
    row(name, "retired_post", "lowering", count_opcode(p, isa::Opcode::Post),
        r->counter("retired_post"));
    row(name, "retired_store", "lowering", count_opcode(p, isa::Opcode::Store),
        r->counter("retired_store"));
    row(name, "retired_end", "lowering", 1, r->counter("retired_end"));
    row(name, "saturations", "golden model", r->prepared.golden_saturations,
        r->counter("saturations"));
    if (b.throttle.period != 0) {
      const uint64_t thr = throttled_edges(b.throttle, 2, r->end);
      for (int e = 0; e < isa::kNumEngines; ++e)
        row(name, std::string(isa::kEngineNames[e]) + ".throttled", "throttle pattern", thr,
            r->engine(static_cast<Engine>(e), CycleClass::Throttled));
    }
    runs.push_back(std::move(*r));
  }
  cal.ok = true;
  for (const auto& r : cal.rows) cal.ok = cal.ok && r.ok;

  // Peaks: what the datasheet (the configuration) promises and what the benchmarks reached.
  const auto& compute = runs[0];
  const auto& read = runs[1];
  const auto& write = runs[2];
  const auto& ping = runs[3];
  const auto& banks = runs[4];
  const auto& thr = runs[5];
  const double dram_bw = config.dram.bytes_per_cycle;
  cal.peaks.push_back(mac_peak(compute));
  cal.peaks.push_back(read_peak(read, dram_bw));
  cal.peaks.push_back(
      {"DRAM write bytes/cycle", "write_stream", dram_bw,
       ratio(write.counter("dram_wr_bytes"), write.engine(Engine::Store, CycleClass::Active) +
                                                 write.engine(Engine::Store, CycleClass::StallMem)),
       "dram_wr_bytes / (store.active + store.stall_mem)"});
  cal.peaks.push_back({"DRAM read latency (cycles)", "read_stream",
                       config.dram.base_latency + config.dram.jitter / 2.0,
                       ratio(read.counter("dram_rd_latency_sum"), read.counter("dram_rd_reqs")),
                       "dram_rd_latency_sum / dram_rd_reqs (datasheet: base + jitter / 2)"});
  uint64_t l2c = 0;
  for (const auto& c : ping.prepared.program.commands)
    l2c += c.opcode == isa::Opcode::Gemm && c.pop_prev;
  cal.peaks.push_back({"GEMM token wait per L->C token (cycles)", "ping_pong", -1,
                       ratio(ping.engine(Engine::Gemm, CycleClass::StallDep), l2c),
                       "gemm.stall_dep / GEMMs that pop L->C (single buffering)"});
  cal.peaks.push_back({"bank conflicts per INP write", "bank_conflicts", -1,
                       ratio(banks.counter("bank_conflicts_inp"), banks.counter("spad_inp_wr")),
                       "bank_conflicts_inp / spad_inp_wr (load loses to GEMM's reads)"});
  const auto& pattern = kBenches[5].throttle;
  cal.peaks.push_back(
      {"clock fraction", "throttle", 1.0 - ratio(pattern.on_cycles, pattern.period),
       1.0 - ratio(thr.engine(Engine::Gemm, CycleClass::Throttled), thr.counter("cycles")),
       "1 - gemm.throttled / cycles (datasheet: 1 - on / period)"});
  return cal;
}

Ceilings datasheet_ceilings(const emu::EmulatorConfig& config, uint32_t array_macs) {
  return {static_cast<double>(array_macs), static_cast<double>(config.dram.bytes_per_cycle)};
}

std::optional<Ceilings> measure_ceilings(const emu::EmulatorConfig& config, std::string& error) {
  auto compute = run_bench(kBenches[0], config, error);
  if (!compute) return std::nullopt;
  auto read = run_bench(kBenches[1], config, error);
  if (!read) return std::nullopt;
  return Ceilings{mac_peak(*compute).measured,
                  read_peak(*read, config.dram.bytes_per_cycle).measured};
}

Ceilings empirical_ceilings(const Calibration& c) {
  Ceilings e;
  for (const auto& p : c.peaks) {
    if (p.name == "MACs/cycle") e.macs_per_cycle = p.measured;
    if (p.name == "DRAM read bytes/cycle") e.bytes_per_cycle = p.measured;
  }
  return e;
}

Json calibration_json(const Calibration& c) {
  Json j;
  j["ok"] = c.ok;
  j["benchmarks"] = c.benchmarks;
  if (!c.error.empty()) j["error"] = c.error;
  Json peaks = Json::array();
  for (const auto& p : c.peaks) {
    Json pj;
    pj["name"] = p.name;
    pj["benchmark"] = p.benchmark;
    pj["datasheet"] = p.datasheet >= 0 ? Json(p.datasheet) : Json(nullptr);
    pj["measured"] = p.measured;
    pj["how"] = p.how;
    peaks.push_back(pj);
  }
  j["peaks"] = peaks;
  Json rows = Json::array();
  for (const auto& r : c.rows) {
    Json rj;
    rj["benchmark"] = r.benchmark;
    rj["counter"] = r.counter;
    rj["oracle"] = r.oracle;
    rj["expected"] = r.expected;
    rj["measured"] = r.measured;
    rj["error"] = r.error;
    rj["tolerance"] = r.tolerance;
    rj["ok"] = r.ok;
    rows.push_back(rj);
  }
  j["fidelity"] = rows;
  return j;
}

std::string calibration_text(const Calibration& c) {
  std::ostringstream o;
  char buf[256];
  o << "calibration  " << c.benchmarks.size() << " microbenchmarks\n";
  if (!c.error.empty()) o << "error        " << c.error << "\n";
  o << "\npeaks\n";
  std::snprintf(buf, sizeof buf, "  %-40s %-15s %10s %10s  %s\n", "ceiling", "benchmark",
                "datasheet", "measured", "how");
  o << buf;
  for (const auto& p : c.peaks) {
    const std::string ds = p.datasheet >= 0 ? fmt("%.2f", p.datasheet) : "-";
    std::snprintf(buf, sizeof buf, "  %-40s %-15s %10s %10.2f  %s\n", p.name.c_str(),
                  p.benchmark.c_str(), ds.c_str(), p.measured, p.how.c_str());
    o << buf;
  }
  o << "\ncounter fidelity (counter | expected | measured | error | tolerance)\n";
  std::snprintf(buf, sizeof buf, "  %-15s %-26s %-16s %14s %14s %8s %6s  %s\n", "benchmark",
                "counter", "oracle", "expected", "measured", "error", "tol", "");
  o << buf;
  int bad = 0;
  for (const auto& r : c.rows) {
    std::snprintf(buf, sizeof buf, "  %-15s %-26s %-16s %14s %14s %+7.2f%% %5.1f%%  %s\n",
                  r.benchmark.c_str(), r.counter.c_str(), r.oracle.c_str(),
                  grouped(r.expected).c_str(), grouped(r.measured).c_str(), 100 * r.error,
                  100 * r.tolerance, r.ok ? "ok" : "OUT OF TOLERANCE");
    o << buf;
    bad += !r.ok;
  }
  o << "\nresult       "
    << (c.ok ? "every counter within its tolerance (" + std::to_string(c.rows.size()) + " checks)"
             : std::to_string(bad) + " of " + std::to_string(c.rows.size()) +
                   " checks out of tolerance")
    << "\n";
  return o.str();
}

RooflineCeilings roofline_ceilings(const emu::EmulatorConfig& config, const MachineModel& machine,
                                   std::optional<Ceilings> empirical, std::string empirical_how) {
  RooflineCeilings c;
  c.datasheet = datasheet_ceilings(config, machine.array_macs);
  c.effective = {c.datasheet.macs_per_cycle, machine.effective_bytes_per_cycle()};
  c.effective_how = std::to_string(machine.in_flight) + " requests x " +
                    std::to_string(isa::kMaxRequestBytes) + " B / " +
                    fmt("%.0f", machine.latency) + " cycles = " +
                    fmt("%.2f", machine.in_flight * double{isa::kMaxRequestBytes} /
                                    std::max(machine.latency, 1.0)) +
                    " B/cycle" +
                    (c.effective.bytes_per_cycle < c.datasheet.bytes_per_cycle
                         ? " (below the channel's " + fmt("%.0f", c.datasheet.bytes_per_cycle) +
                               ": latency binds)"
                         : " (at least the channel's " + fmt("%.0f", c.datasheet.bytes_per_cycle) +
                               ": bandwidth binds)");
  c.empirical = empirical;
  c.empirical_how = std::move(empirical_how);
  return c;
}

namespace {

double attainable(const Ceilings& c, double intensity) {
  return std::min(c.macs_per_cycle, intensity * c.bytes_per_cycle);
}

// Under Little's law for layer `i`'s own loads (nullopt: it has none, or no projection).
std::optional<double> attainable_latency(const RooflineCeilings& c, const Roofline& r, size_t i,
                                         double intensity) {
  if (i >= r.layers.size() || r.layers[i].effective_bytes_per_cycle <= 0) return std::nullopt;
  return std::min(c.datasheet.macs_per_cycle, intensity * r.layers[i].effective_bytes_per_cycle);
}

}  // namespace

std::string ceilings_text(const Profile& p, const RooflineCeilings& c, const Roofline& roofline) {
  std::ostringstream o;
  char buf[256];
  o << "\nroofline ceilings (MACs/cycle; attainable = min(peak, intensity x bytes/cycle))\n";
  o << "  datasheet  " << fmt("%.1f", c.datasheet.macs_per_cycle) << " MACs/cycle, "
    << fmt("%.1f", c.datasheet.bytes_per_cycle) << " B/cycle\n";
  o << "  effective  " << fmt("%.1f", c.effective.macs_per_cycle) << " MACs/cycle, "
    << fmt("%.2f", c.effective.bytes_per_cycle) << " B/cycle (Little's law: " << c.effective_how
    << ")\n";
  if (c.empirical)
    o << "  empirical  " << fmt("%.2f", c.empirical->macs_per_cycle) << " MACs/cycle, "
      << fmt("%.2f", c.empirical->bytes_per_cycle) << " B/cycle (" << c.empirical_how << ")\n";
  else
    o << "  empirical  - (" << c.empirical_how << ")\n";
  o << "  per layer, `its loads`: Little's law for the layer's own LOADs (min(8 tags, their mean "
       "requests) x their mean bytes / latency)\n";
  std::snprintf(buf, sizeof buf, "  %-12s %10s %10s %10s %10s %10s %10s\n", "layer", "intensity",
                "measured", "datasheet", "effective", "empirical", "its loads");
  o << buf;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    const double measured = l.cycles ? static_cast<double>(l.macs_useful) / l.cycles : 0;
    const std::string emp = c.empirical ? fmt("%.2f", attainable(*c.empirical, l.intensity)) : "-";
    const auto lat = attainable_latency(c, roofline, i, l.intensity);
    const std::string own = lat ? fmt("%.2f", *lat) : "-";
    std::snprintf(buf, sizeof buf, "  %-12s %10.2f %10.2f %10.2f %10.2f %10s %10s\n",
                  l.name.c_str(), l.intensity, measured, attainable(c.datasheet, l.intensity),
                  attainable(c.effective, l.intensity), emp.c_str(), own.c_str());
    o << buf;
  }
  return o.str();
}

Json ceilings_json(const Profile& p, const RooflineCeilings& c, const Roofline& roofline) {
  auto ceil_json = [](const Ceilings& x) {
    return Json{{"macs_per_cycle", x.macs_per_cycle}, {"bytes_per_cycle", x.bytes_per_cycle}};
  };
  Json j;
  j["datasheet"] = ceil_json(c.datasheet);
  j["effective"] = ceil_json(c.effective);
  j["effective"]["how"] = c.effective_how;
  j["empirical"] = c.empirical ? ceil_json(*c.empirical) : Json(nullptr);
  j["empirical_how"] = c.empirical_how;
  Json layers = Json::array();
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    Json lj;
    lj["name"] = l.name;
    lj["kind"] = l.kind;
    lj["intensity"] = l.intensity;
    lj["measured_macs_per_cycle"] = l.cycles ? static_cast<double>(l.macs_useful) / l.cycles : 0;
    lj["attainable_datasheet"] = attainable(c.datasheet, l.intensity);
    lj["attainable_effective"] = attainable(c.effective, l.intensity);
    lj["attainable_empirical"] =
        c.empirical ? Json(attainable(*c.empirical, l.intensity)) : Json(nullptr);
    const auto lat = attainable_latency(c, roofline, i, l.intensity);
    lj["attainable_latency"] = lat ? Json(*lat) : Json(nullptr);
    lj["latency_bytes_per_cycle"] =
        lat ? Json(roofline.layers[i].effective_bytes_per_cycle) : Json(nullptr);
    layers.push_back(lj);
  }
  j["layers"] = layers;
  return j;
}

}  // namespace bud::profile
