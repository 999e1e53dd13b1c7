#include "emu/run/RunJob.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bud/ModelRevision.h"
#include "emu/golden/Checker.h"
#include "emu/golden/GoldenNpu.h"
#include "emu/onnx/Importer.h"
#include "emu/run/Designs.h"
#include "emu/workload/Builtins.h"

namespace bud::run {

workload::Result<std::string> import_text(const std::string& path, std::optional<uint64_t> seed,
                                          const ImportChoices& choices) {
  onnx_import::ImportOptions io;
  if (seed) io.seed = *seed;
  io.per_channel = choices.per_channel;
  io.host_attention = choices.host_attention;
  auto bytes = onnx_model_bytes(path, choices);
  if (!bytes) return workload::Error{bytes.error()};
  auto r = onnx_import::import_bytes(*bytes, path, io);
  if (!r) return workload::Error{r.error()};
  return std::move(r->text);
}

workload::Result<std::string> onnx_model_bytes(const std::string& path, const ImportChoices& c) {
  if (!c.model.empty()) return c.model;
  std::ifstream in(path, std::ios::binary);
  if (!in) return workload::Error{path + ": cannot open ONNX file"};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return workload::Error{path + ": cannot read ONNX file"};
  return ss.str();
}

workload::Result<workload::Workload> load_workload(const RunOptions& o) {
  workload::LoadOptions lo;
  lo.seed = o.seed;
  lo.tiles = o.tiles;
  if (workload::builtin_text(o.workload)) return workload::load_builtin(o.workload, lo);
  if (onnx_import::is_onnx_path(o.workload)) {
    auto text = import_text(o.workload, o.seed, o.import);
    if (!text) return workload::Error{text.error()};
    return workload::parse_workload(*text, o.workload, lo);
  }
  if (!std::filesystem::exists(o.workload))
    return workload::Error{"'" + o.workload +
                           "' is neither a built-in workload (see `bud workloads`) nor a file"};
  return workload::load_workload_file(o.workload, lo);
}

uint64_t RunReport::counter(std::string_view name) const {
  for (size_t i = 0; i < counter_names.size() && i < counters.size(); ++i)
    if (counter_names[i] == name) return counters[i];
  return 0;
}

double RunReport::mac_utilization() const {
  const uint64_t c = counter("cycles");
  if (c == 0) return 0.0;
  return static_cast<double>(counter("macs_useful") + counter("macs_useful_bf16")) /
         (static_cast<double>(c) * array.macs());
}

std::array<RunReport::ModeFigures, 2> RunReport::precision_mix() const {
  std::array<ModeFigures, 2> mix{};
  for (const auto& l : precisions) ++mix[l.precision == "bf16" ? 1 : 0].layers;
  const uint64_t useful = counter("macs_useful"), issued = counter("macs_issued");
  mix[1].macs_useful = counter("macs_useful_bf16");
  mix[1].macs_issued = counter("macs_issued_bf16");
  mix[0].macs_useful = useful - std::min(useful, mix[1].macs_useful);
  mix[0].macs_issued = issued - std::min(issued, mix[1].macs_issued);
  const uint64_t m = array.macs();
  mix[0].array_cycles = m ? mix[0].macs_issued / m : 0;
  mix[1].array_cycles = m / 2 ? mix[1].macs_issued / (m / 2) : 0;
  return mix;
}

workload::Result<PreparedRun> prepare(const RunOptions& options) {
  auto w = load_workload(options);
  if (!w) return workload::Error{w.error()};
  return prepare_workload(std::move(w).value(), options);
}

workload::Result<PrecisionText> read_precision(const std::string& precision) {
  PrecisionText p{precision, RunOptions{}.precision_origin};
  if (precision.empty() || precision == "auto" || workload::parse_precision(precision)) return p;
  std::ifstream in(precision, std::ios::binary);
  if (!in)
    return workload::Error{"--precision " + precision +
                           ": neither int8, bf16, auto nor a readable precision file"};
  std::ostringstream text;
  text << in.rdbuf();
  return PrecisionText{text.str(), precision};
}

workload::Result<AppliedPrecision> apply_precision(workload::Workload& w,
                                                   const RunOptions& options,
                                                   const isa::ArrayConfig& array) {
  AppliedPrecision a;
  a.min_snr_db = w.min_snr_db.value_or(workload::kDefaultMinSnrDb);
  // --precision FILE: read here, so that the text travels in the PreparedRun (and packets). With
  // another origin the text is already a file's (a packet's).
  std::string origin = options.precision_origin;
  a.text = options.precision;
  if (origin == RunOptions{}.precision_origin) {
    auto p = read_precision(options.precision);
    if (!p) return workload::Error{p.error()};
    a.text = p->text;
    origin = p->origin;
  }
  a.origin = origin;
  if (a.text == "auto") {
    a.fallbacks = workload::apply_auto_precision(w, array, a.min_snr_db);
  } else if (!a.text.empty()) {
    if (auto e = workload::assign_precision(w, a.text, origin)) return *e;
  }
  return a;
}

workload::Result<PreparedRun> prepare_workload(workload::Workload w, const RunOptions& options,
                                               bool with_checks) {
  // The lowering follows the array the design reports (its CONFIG/SPAD_CFG CSRs).
  std::string error;
  const auto array = emu::design_array(options.emulator.design, error);
  if (!array) return workload::Error{error};
  auto applied = apply_precision(w, options, *array);
  if (!applied) return workload::Error{applied.error()};
  auto program = workload::lower(w, *array);
  if (!program) return workload::Error{program.error()};
  if (program->dram_bytes > options.emulator.dram.size_bytes)
    return workload::Error{"workload needs " + std::to_string(program->dram_bytes) +
                           " bytes of DRAM, the memory model has " +
                           std::to_string(options.emulator.dram.size_bytes)};
  PreparedRun p;
  p.precision = applied->text;
  p.workload = std::move(w);
  p.program = std::move(program).value();
  if (with_checks) {
    if (auto e = add_checks(p); !e.empty()) return workload::Error{e};
  }
  // A precision choice gets its quality report (docs/workloads.md, "Quality and the auto policy").
  if (!options.precision.empty() && with_checks) {
    p.quality = workload::network_quality(p.workload, p.reference,
                                          workload::float_network(p.workload));
    p.fallbacks = std::move(applied->fallbacks);
    p.min_snr_db = applied->min_snr_db;
    p.agreement = workload::output_agreement(p.workload, p.program.array);
    // An imported model: also against the ONNX model's own fp32 network, at these precisions.
    if (onnx_import::is_onnx_path(options.workload) && options.import.model_available) {
      auto bytes = onnx_model_bytes(options.workload, options.import);
      if (!bytes) return workload::Error{bytes.error()};
      onnx_import::ImportOptions io;
      if (options.seed) io.seed = *options.seed;
      io.per_channel = options.import.per_channel;
      io.host_attention = options.import.host_attention;
      io.precision = applied->text;
      io.precision_origin = applied->origin;
      io.array = p.program.array;
      auto imported = onnx_import::import_bytes(*bytes, options.workload, io);
      if (!imported) return workload::Error{imported.error()};
      for (const auto& q : imported->quality) {
        workload::LayerQuality lq;
        lq.layer = q.layer;
        lq.elements = q.elements;
        lq.snr_db = q.snr_db;
        lq.max_abs_error = q.max_abs_error;
        lq.mean_abs_error = q.mean_abs_error;
        p.onnx_quality.push_back(lq);
      }
      p.onnx_agreement = {imported->agreement.inputs, imported->agreement.rows,
                          imported->agreement.top1, imported->agreement.top5};
    }
  }
  p.job.ring_base = p.program.ring_base;
  p.job.ring_entries = workload::kRingCommands;
  p.job.commands.reserve(p.program.commands.size());
  for (const auto& c : p.program.commands) p.job.commands.push_back(c.encode());
  for (const auto& r : p.program.dram_init) p.job.image.push_back({r.addr, r.bytes});
  return p;
}

std::string add_checks(PreparedRun& p) {
  p.reference = workload::reference_of(p.workload, p.program.array);
  golden::GoldenNpu golden(p.program.dram_bytes, p.program.array);
  for (const auto& r : p.program.dram_init) golden.write_dram(r.addr, r.bytes);
  const auto gr = golden.run(p.program.commands);
  if (!gr.ok) return "golden model rejected the lowered program: " + gr.error;
  p.golden_digests = golden.digests();
  p.golden_saturations = gr.saturations;
  p.lowering_failures.clear();
  // Stage "lowering": the command stream, run by the golden model, must compute what the direct
  // reference computes from the workload description.
  if (auto c = golden::check_outputs(p.program, p.reference, golden.dram()); !c.ok())
    p.lowering_failures.push_back("lowering: " + c.summary());
  return {};
}

std::vector<std::string> check_results(const PreparedRun& p, const emu::Emulator& emu) {
  std::vector<std::string> failures;
  const auto outs =
      golden::check_outputs(p.program, p.reference, [&](uint32_t addr, std::span<uint8_t> out) {
        return emu.read_memory("dram", addr, out);
      });
  if (!outs.ok()) failures.push_back("outputs: " + outs.summary());
  const auto saturations = emu.describe().find_counter("saturations");
  const uint64_t sat = saturations ? emu.counter(*saturations) : 0;
  if (sat != p.golden_saturations)
    failures.push_back("saturations: PMU counted " + std::to_string(sat) + ", golden model " +
                       std::to_string(p.golden_saturations));
  return failures;
}

RunReport finish(const PreparedRun& p, const RunOptions& options, emu::Emulator& emu) {
  drive::Driver driver(emu);
  return finish(p, options, driver);
}

RunReport finish(const PreparedRun& p, const RunOptions& options, drive::Driver& driver,
                 drive::DriveStop* stop) {
  drive::ProgressParticipant progress(options.progress, options.progress_interval);
  if (options.progress) driver.add(progress);
  const auto ds = driver.run_until(options.max_cycles, options.progress_interval);
  if (options.progress) driver.remove(progress);
  if (stop) *stop = ds;
  return conclude(p, options, driver.emulator(), ds, driver.cycles_driven());
}

RunReport conclude(const PreparedRun& p, const RunOptions& options, emu::Emulator& emu,
                   const drive::DriveStop& ds, uint64_t driven_cycles) {
  const emu::DesignInfo& design = emu.describe();
  RunReport r;
  r.workload = p.workload.name;
  r.seed = p.workload.seed;
  r.mem_seed = options.emulator.dram.seed;
  r.model_revision = design.revision.empty() ? build::kModelRevision : design.revision;
  r.array = p.program.array;
  r.commands = p.program.commands.size();
  for (size_t i = 0; i < p.program.layers.size(); ++i)
    if (p.workload.layers[i].kind == workload::LayerKind::Host)
      r.host_layers.push_back({p.program.layers[i].name,
                               workload::host_op_name(p.workload.layers[i].host.op),
                               p.program.layers[i].host_cycles});
  r.host_cycles = p.program.host_cycles;
  for (const auto& l : p.workload.layers)
    if (l.kind != workload::LayerKind::Host)
      r.precisions.push_back({l.name, workload::precision_name(l.precision),
                              workload::precision_name(l.out_type), l.promoted_by});
  r.quality = p.quality;
  r.fallbacks = p.fallbacks;
  r.agreement = p.agreement;
  r.onnx_quality = p.onnx_quality;
  r.onnx_agreement = p.onnx_agreement;
  r.min_snr_db = p.min_snr_db;
  r.golden_digests = p.golden_digests;
  r.cycles = emu.cycle();
  r.driven_cycles = driven_cycles;
  r.state = emu.state();
  if (r.state == emu::RunState::Ready) {
    // Still making progress when the budget ran out: not a hang (the watchdog did not fire).
    r.state = emu::RunState::CycleLimit;
    r.message = "cycle limit: did not finish within --max-cycles " +
                std::to_string(options.max_cycles) + " (still making progress)\n" +
                emu.status_report();
  } else if (r.state == emu::RunState::Hang) {
    r.message = "no progress for " + std::to_string(options.emulator.hang_cycles) +
                " cycles, detected at cycle " + std::to_string(r.cycles) + "\n" +
                emu.status_report();
  } else {
    r.message = ds.message;
  }
  r.counter_names = design.counters;
  r.counters.resize(r.counter_names.size());
  for (size_t i = 0; i < r.counters.size(); ++i) r.counters[i] = emu.counter(static_cast<int>(i));
  if (options.emulator.thermal.enabled) {
    auto signal = [&emu](const char* name) -> uint64_t {
      const auto id = emu.find_signal(name);
      return id ? emu.read_signal(*id).low() : 0;
    };
    RunReport::Thermal t;
    t.temp_mc = static_cast<int64_t>(signal("thermal.temp_mc"));
    t.peak_mc = static_cast<int64_t>(signal("thermal.peak_mc"));
    t.clamp_events = signal("thermal.clamp_events");
    t.clamped_cycles = signal("thermal.clamped_cycles");
    r.thermal = t;
  }
  for (int s = 0; s < emu::kNumStages; ++s)
    r.rtl_digests[s] = emu.stage_digest(static_cast<emu::Stage>(s));
  r.state_digest = emu.digest();
  // The outputs live in the design's main memory (its first; "dram" on the NPU).
  r.output_digest = emu.memories().empty() ? 0 : emu.memory_digest(emu.memories().front().name);

  r.failures = p.lowering_failures;
  if (r.state != emu::RunState::Finished) {
    r.failures.push_back(std::string(emu::run_state_name(r.state)) + ": " + r.message);
  } else if (design.isa == "npu") {
    // The golden model runs the NPU's ISA: only a design that runs it can be checked against it.
    for (int s = 0; s < emu::kNumStages; ++s) {
      const auto& a = r.rtl_digests[s];
      const auto& g = r.golden_digests[s];
      if (a != g) {
        r.failures.push_back(std::string("stage ") +
                             emu::stage_name(static_cast<emu::Stage>(s)) +
                             ": transactions differ from the golden model (" +
                             std::to_string(a.count) + " vs " + std::to_string(g.count) + ")");
      }
    }
    for (auto& f : check_results(p, emu)) r.failures.push_back(std::move(f));
  }
  r.passed = r.failures.empty();
  return r;
}

std::string start(const PreparedRun& prepared, const RunOptions& options, emu::Emulator& emu) {
  if (auto e = emu.load(prepared.job); !e.empty()) return e;
  for (const auto& f : options.faults)
    if (auto e = emu.add_fault(f); !e.empty()) return e;
  return {};
}

RunReport execute(const PreparedRun& prepared, const RunOptions& options) {
  std::string error;
  auto emu = emu::make_emulator(options.emulator, error);
  if (emu) error = start(prepared, options, *emu);
  if (!error.empty()) {
    const std::string e = error;
    RunReport r;
    r.workload = prepared.workload.name;
    r.array = prepared.program.array;
    r.state = emu::RunState::Error;
    r.message = e;
    r.bad_input = true;
    r.failures.push_back("cannot start: " + e);
    return r;
  }
  return finish(prepared, options, *emu);
}

}  // namespace bud::run
