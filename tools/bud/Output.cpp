#include "tools/bud/Output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "replay/ShardResults.h"

namespace bud::cli {

std::string group_digits(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

ProgressLine::ProgressLine(std::string label)
    : label_(std::move(label)),
      enabled_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(uint64_t cycle) {
  if (!enabled_) return;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r%s: cycle %s (%.2f Mcycles/s)   ", label_.c_str(),
               group_digits(cycle).c_str(), secs > 0 ? cycle / secs / 1e6 : 0.0);
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::finish() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

namespace {

// The NPU's report: its counters by name (0 on a design without them).
uint64_t counter(const run::RunReport& r, int index) { return r.counter(isa::counter_name(index)); }
uint64_t counter(const run::RunReport& r, isa::Counter c) {
  return counter(r, static_cast<int>(c));
}

}  // namespace

std::string report_text(const run::RunReport& r, const run::PreparedRun& p) {
  std::ostringstream o;
  char buf[256];
  const size_t layers = p.program.layers.size();
  o << "workload   " << r.workload << "  (" << layers << (layers == 1 ? " layer" : " layers");
  if (p.program.passes > 1) o << " x " << p.program.passes << " passes";
  o << ", " << r.commands << " commands, seed " << r.seed << ", mem-seed " << r.mem_seed
    << ", model " << r.model_revision;
  // The array variant, when it is not the default one (`--config`, docs/cli.md).
  if (r.array.name != isa::default_array().name)
    o << ", array " << r.array.name << " " << r.array.rows << "x" << r.array.cols;
  o << ")\n";
  o << "cycles     " << group_digits(r.cycles) << "\n";
  if (r.thermal) {
    const auto& t = *r.thermal;
    std::snprintf(buf, sizeof buf,
                  "thermal    peak %.3f C, end %.3f C, %s clamp event%s, %s cycles clamped "
                  "(%.1f%% of the run)\n",
                  t.peak_mc / 1e3, t.temp_mc / 1e3, group_digits(t.clamp_events).c_str(),
                  t.clamp_events == 1 ? "" : "s", group_digits(t.clamped_cycles).c_str(),
                  r.cycles ? 100.0 * t.clamped_cycles / r.cycles : 0.0);
    o << buf;
  }
  const size_t bf16_layers = static_cast<size_t>(std::count_if(
      r.precisions.begin(), r.precisions.end(), [](const auto& l) { return l.precision == "bf16"; }));
  if (bf16_layers > 0 || !r.quality.empty()) {
    // The precision mix (docs/workloads.md, "Precision"): layers, useful MACs and MAC-array
    // cycles per mode.
    const auto mix = r.precision_mix();
    o << "precision ";
    for (int k = 0; k < 2; ++k) {
      std::snprintf(buf, sizeof buf, "%s %s %s layer%s, %s MACs in %s array cycles", k ? ";" : "",
                    k ? "bf16" : "int8", group_digits(mix[k].layers).c_str(),
                    mix[k].layers == 1 ? "" : "s", group_digits(mix[k].macs_useful).c_str(),
                    group_digits(mix[k].array_cycles).c_str());
      o << buf;
    }
    o << "\n";
    for (const auto& l : r.precisions)
      if (!l.promoted_by.empty())
        o << "  " << l.name << " runs bf16: it reads a tensor with " << l.promoted_by << "\n";
  }
  if (!r.quality.empty()) {
    // Quality against the fp32 network (docs/workloads.md, "Quality and the auto policy").
    std::snprintf(buf, sizeof buf,
                  "quality    vs the fp32 network; guardrail %.1f dB; output %.1f dB; top-1 %.1f%%, "
                  "top-5 %.1f%% over %d inputs (%s rows)\n",
                  r.min_snr_db, r.quality.back().snr_db, 100 * r.agreement.top1,
                  100 * r.agreement.top5, r.agreement.inputs,
                  group_digits(r.agreement.rows).c_str());
    o << buf;
    const bool onnx = !r.onnx_quality.empty();
    if (onnx) {
      // An imported model: also against the ONNX model's own fp32 network (its float weights).
      std::snprintf(buf, sizeof buf,
                    "           vs the ONNX model's fp32 network: output %.1f dB; top-1 %.1f%%, "
                    "top-5 %.1f%% over %d inputs (%s rows)\n",
                    r.onnx_quality.back().snr_db, 100 * r.onnx_agreement.top1,
                    100 * r.onnx_agreement.top5, r.onnx_agreement.inputs,
                    group_digits(r.onnx_agreement.rows).c_str());
      o << buf;
    }
    std::snprintf(buf, sizeof buf, "  %-20s %-9s %8s %10s %10s%s\n", "layer", "precision", "SNR dB",
                  "max err", "mean err", onnx ? "    ONNX dB" : "");
    o << buf;
    for (const auto& q : r.quality) {
      std::string note;
      for (const auto& f : r.fallbacks)
        if (f.layer == q.layer) {
          char b2[96];
          std::snprintf(b2, sizeof b2, "  fallback: int8 SNR %.1f dB < %.1f dB", f.int8_snr_db,
                        f.min_snr_db);
          note = b2;
          for (size_t k = 0; k < f.readers.size(); ++k)
            note += (k ? ", " : " (readers ") + f.readers[k] + (k + 1 == f.readers.size() ? " too)" : "");
        }
      if (note.empty() && q.snr_db < r.min_snr_db) note = "  below the guardrail";
      std::string onnx_col;
      for (const auto& oq : r.onnx_quality)
        if (oq.layer == q.layer) {
          char b3[32];
          std::snprintf(b3, sizeof b3, " %10.1f", oq.snr_db);
          onnx_col = b3;
        }
      if (onnx && onnx_col.empty()) onnx_col = std::string(11, ' ');
      std::snprintf(buf, sizeof buf, "  %-20s %-9s %8.1f %10.4g %10.4g%s%s\n", q.layer.c_str(),
                    q.host ? "host" : workload::precision_name(q.precision), q.snr_db,
                    q.max_abs_error, q.mean_abs_error, onnx_col.c_str(), note.c_str());
      o << buf;
    }
  }
  if (!r.host_layers.empty()) {
    // Host fallback (docs/import.md): charged by the cost model, not simulated.
    std::snprintf(buf, sizeof buf,
                  "host       %zu layer%s, %s cycles charged (%.1f%% of %s end-to-end cycles)\n",
                  r.host_layers.size(), r.host_layers.size() == 1 ? "" : "s",
                  group_digits(r.host_cycles).c_str(), 100.0 * r.host_share(),
                  group_digits(r.cycles + r.host_cycles).c_str());
    o << buf;
    for (const auto& h : r.host_layers) {
      std::snprintf(buf, sizeof buf, "  %-20s %-10s %s cycles\n", h.name.c_str(), h.op.c_str(),
                    group_digits(h.cycles).c_str());
      o << buf;
    }
  }
  if (r.passed) {
    o << "result     PASS: every stage (fetch, load, gemm, post, store) and every output tensor "
         "matches the golden model bit-exactly\n";
  } else {
    o << "result     FAIL\n";
    for (const auto& f : r.failures) o << "  - " << f << "\n";
  }
  const uint64_t cycles = std::max<uint64_t>(1, counter(r, isa::Counter::Cycles));
  std::snprintf(buf, sizeof buf, "MAC util   %.1f%% (%s useful of %s issued MACs%s)\n",
                100.0 * r.mac_utilization(),
                group_digits(counter(r, isa::Counter::MacsUseful)).c_str(),
                group_digits(counter(r, isa::Counter::MacsIssued)).c_str(),
                counter(r, isa::Counter::MacsUsefulBf16) ? "; of each precision's peak" : "");
  o << buf;
  const uint64_t rd_reqs = counter(r, isa::Counter::DramRdReqs);
  std::snprintf(buf, sizeof buf,
                "DRAM       read %s B in %s requests (mean latency %.1f cycles), "
                "written %s B in %s requests\n",
                group_digits(counter(r, isa::Counter::DramRdBytes)).c_str(),
                group_digits(rd_reqs).c_str(),
                rd_reqs ? static_cast<double>(counter(r, isa::Counter::DramRdLatencySum)) /
                              static_cast<double>(rd_reqs)
                        : 0.0,
                group_digits(counter(r, isa::Counter::DramWrBytes)).c_str(),
                group_digits(counter(r, isa::Counter::DramWrReqs)).c_str());
  o << buf;
  std::snprintf(buf, sizeof buf, "spad       bank conflicts inp %s wgt %s acc %s out %s; "
                "saturations %s\n",
                group_digits(counter(r, isa::Counter::BankConflictsInp)).c_str(),
                group_digits(counter(r, isa::Counter::BankConflictsWgt)).c_str(),
                group_digits(counter(r, isa::Counter::BankConflictsAcc)).c_str(),
                group_digits(counter(r, isa::Counter::BankConflictsOut)).c_str(),
                group_digits(counter(r, isa::Counter::Saturations)).c_str());
  o << buf;
  o << "\ncycle classes (% of cycles)\n";
  std::snprintf(buf, sizeof buf, "  %-7s", "engine");
  o << buf;
  for (int c = 0; c < isa::kNumClasses; ++c) {
    std::snprintf(buf, sizeof buf, " %9s", isa::class_name(static_cast<isa::CycleClass>(c)));
    o << buf;
  }
  o << "\n";
  for (int e = 0; e < isa::kNumEngines; ++e) {
    std::snprintf(buf, sizeof buf, "  %-7s", isa::engine_name(static_cast<isa::Engine>(e)));
    o << buf;
    for (int c = 0; c < isa::kNumClasses; ++c) {
      const uint64_t v = counter(
          r, isa::class_counter(static_cast<isa::Engine>(e), static_cast<isa::CycleClass>(c)));
      std::snprintf(buf, sizeof buf, " %8.1f%%", 100.0 * static_cast<double>(v) / cycles);
      o << buf;
    }
    o << "\n";
  }
  o << "\nretired    LOAD " << counter(r, isa::Counter::RetiredLoad) << "  GEMM "
    << counter(r, isa::Counter::RetiredGemm) << "  POST " << counter(r, isa::Counter::RetiredPost)
    << "  STORE " << counter(r, isa::Counter::RetiredStore) << "  SYNC "
    << counter(r, isa::Counter::RetiredSync) << "  END " << counter(r, isa::Counter::RetiredEnd)
    << "\n";
  return o.str();
}

Json report_json(const run::RunReport& r) {
  Json j = Json::object();
  j["workload"] = r.workload;
  j["seed"] = r.seed;
  j["mem_seed"] = r.mem_seed;
  j["model_revision"] = r.model_revision;
  j["array"] = {{"name", std::string(r.array.name)},
                {"rows", r.array.rows},
                {"cols", r.array.cols},
                {"macs_per_cycle", r.array.macs()}};
  j["cycles"] = r.cycles;
  j["driven_cycles"] = r.driven_cycles;
  Json host = Json::array();
  for (const auto& h : r.host_layers)
    host.push_back(Json{{"name", h.name}, {"op", h.op}, {"cycles", h.cycles}});
  j["host_layers"] = host;
  Json precisions = Json::array();
  for (const auto& l : r.precisions) {
    Json pj{{"name", l.name}, {"precision", l.precision}, {"out_type", l.out_type}};
    if (!l.promoted_by.empty()) pj["promoted_by"] = l.promoted_by;
    precisions.push_back(pj);
  }
  j["precisions"] = precisions;
  {
    const auto mix = r.precision_mix();
    Json pm = Json::object();
    for (int k = 0; k < 2; ++k)
      pm[k ? "bf16" : "int8"] = Json{{"layers", mix[k].layers},
                                     {"macs_useful", mix[k].macs_useful},
                                     {"macs_issued", mix[k].macs_issued},
                                     {"array_cycles", mix[k].array_cycles}};
    j["precision_mix"] = pm;
  }
  if (!r.quality.empty()) {
    Json quality = Json::array();
    for (const auto& q : r.quality) {
      Json lj{{"layer", q.layer},
              {"precision", q.host ? "host" : workload::precision_name(q.precision)},
              {"elements", q.elements},
              {"snr_db", q.snr_db},
              {"max_abs_error", q.max_abs_error},
              {"mean_abs_error", q.mean_abs_error},
              {"below_guardrail", q.snr_db < r.min_snr_db}};
      for (const auto& oq : r.onnx_quality)
        if (oq.layer == q.layer) {
          lj["onnx_snr_db"] = oq.snr_db;
          lj["onnx_max_abs_error"] = oq.max_abs_error;
        }
      quality.push_back(std::move(lj));
    }
    Json fallbacks = Json::array();
    for (const auto& f : r.fallbacks)
      fallbacks.push_back(Json{{"layer", f.layer},
                               {"int8_snr_db", f.int8_snr_db},
                               {"min_snr_db", f.min_snr_db},
                               {"readers", f.readers},
                               {"reason", "int8 SNR below the guardrail"}});
    j["quality"] = Json{{"min_snr_db", r.min_snr_db},
                        {"output_snr_db", r.quality.back().snr_db},
                        {"agreement", Json{{"inputs", r.agreement.inputs},
                                           {"rows", r.agreement.rows},
                                           {"top1", r.agreement.top1},
                                           {"top5", r.agreement.top5}}},
                        {"layers", quality},
                        {"fallbacks", fallbacks}};
    if (!r.onnx_quality.empty())
      j["quality"]["onnx"] = Json{{"output_snr_db", r.onnx_quality.back().snr_db},
                                  {"agreement", Json{{"inputs", r.onnx_agreement.inputs},
                                                     {"rows", r.onnx_agreement.rows},
                                                     {"top1", r.onnx_agreement.top1},
                                                     {"top5", r.onnx_agreement.top5}}}};
  }
  j["host_cycles"] = r.host_cycles;
  j["host_share"] = r.host_share();
  if (r.thermal)
    j["thermal"] =
        Json{{"temp_mc", r.thermal->temp_mc},
             {"peak_mc", r.thermal->peak_mc},
             {"clamp_events", r.thermal->clamp_events},
             {"clamped_cycles", r.thermal->clamped_cycles},
             {"clamped_fraction",
              r.cycles ? static_cast<double>(r.thermal->clamped_cycles) / r.cycles : 0.0}};
  j["state"] = emu::run_state_name(r.state);
  j["passed"] = r.passed;
  Json failures = Json::array();
  for (const auto& f : r.failures) failures.push_back(f);
  j["failures"] = failures;
  if (!r.message.empty()) j["message"] = r.message;
  j["commands"] = r.commands;
  j["mac_utilization"] = r.mac_utilization();
  Json counters = Json::object();
  for (size_t i = 0; i < r.counters.size() && i < r.counter_names.size(); ++i)
    counters[r.counter_names[i]] = r.counters[i];
  j["counters"] = counters;
  Json stages = Json::object();
  for (int s = 0; s < emu::kNumStages; ++s) {
    Json st = Json::object();
    st["transactions"] = r.rtl_digests[s].count;
    st["golden_transactions"] = r.golden_digests[s].count;
    st["match"] = r.rtl_digests[s] == r.golden_digests[s];
    stages[emu::stage_name(static_cast<emu::Stage>(s))] = st;
  }
  j["stages"] = stages;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r.state_digest));
  j["state_digest"] = std::string(hex);
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r.output_digest));
  j["output_digest"] = std::string(hex);
  return j;
}

int run_exit_code(const run::RunReport& r) {
  if (r.passed) return 0;
  return r.state == emu::RunState::CycleLimit ? 3 : 1;
}

namespace {

json::Json error_object(const char* kind, const std::string& message, int code) {
  json::Json j = json::Json::object();
  j["error"] = kind;
  j["message"] = message;
  j["exit_code"] = code;
  return j;
}

}  // namespace

json::Json error_json(const std::string& command, int code, const std::string& message) {
  const char* kind = code == 2               ? "bad_input"
                     : code == 125           ? "untestable"
                     : code == kExitNotBuilt ? "not_built"
                     : code == 6             ? "rtl_mismatch"   // design::kExitRtlMismatch
                     : code == 7             ? "elaboration"    // design::kExitElaboration
                     : code == 8             ? "model_build"    // design::kExitModelBuild
                     : code == 9             ? "reference_failed"  // design::kExitReference
                     : code == 10            ? "firmware_timeout"  // design::kExitFirmwareTimeout
                     : code == 11            ? "axi_error"         // design::kExitAxiError
                                             : "error";
  return error_object(kind, "bud " + command + ": " + message, code);
}

int fail_command(const std::string& command, bool json, int code, const std::string& message) {
  std::cerr << "bud " << command << ": " << message << "\n";
  if (json)
    std::cout << error_json(command, code, message)
                     .dump(-1, ' ', false, json::Json::error_handler_t::replace)
              << "\n"
              << std::flush;
  return code;
}

std::string usage_error_json(const std::string& message) {
  return error_object("usage", message, 2)
      .dump(-1, ' ', false, json::Json::error_handler_t::replace);
}

bool write_file_atomically(const std::string& path, const std::string& text) {
  return replay::write_file_atomically(path, text).empty();
}

}  // namespace bud::cli
