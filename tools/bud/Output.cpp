#include "tools/bud/Output.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

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
    // The precision mix (docs/workloads.md, "Precision"): layers and useful MACs per mode.
    const uint64_t all = counter(r, isa::Counter::MacsUseful),
                   bf16 = counter(r, isa::Counter::MacsUsefulBf16);
    std::snprintf(buf, sizeof buf,
                  "precision  int8 %zu layer%s, %s MACs; bf16 %zu layer%s, %s MACs\n",
                  r.precisions.size() - bf16_layers, r.precisions.size() - bf16_layers == 1 ? "" : "s",
                  group_digits(all - bf16).c_str(), bf16_layers, bf16_layers == 1 ? "" : "s",
                  group_digits(bf16).c_str());
    o << buf;
    for (const auto& l : r.precisions)
      if (!l.promoted_by.empty())
        o << "  " << l.name << " runs bf16: it reads a tensor with " << l.promoted_by << "\n";
  }
  if (!r.quality.empty()) {
    // Quality against the fp32 network (docs/workloads.md, "Quality and the auto policy").
    std::snprintf(buf, sizeof buf, "quality    vs the fp32 network; guardrail %.1f dB; output %.1f dB\n",
                  r.min_snr_db, r.quality.back().snr_db);
    o << buf;
    std::snprintf(buf, sizeof buf, "  %-20s %-9s %8s %10s %10s\n", "layer", "precision", "SNR dB",
                  "max err", "mean err");
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
      std::snprintf(buf, sizeof buf, "  %-20s %-9s %8.1f %10.4g %10.4g%s\n", q.layer.c_str(),
                    q.host ? "host" : workload::precision_name(q.precision), q.snr_db,
                    q.max_abs_error, q.mean_abs_error, note.c_str());
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
  std::snprintf(buf, sizeof buf, "MAC util   %.1f%% (%s useful of %s issued MACs)\n",
                100.0 * r.mac_utilization(),
                group_digits(counter(r, isa::Counter::MacsUseful)).c_str(),
                group_digits(counter(r, isa::Counter::MacsIssued)).c_str());
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
  if (!r.quality.empty()) {
    Json quality = Json::array();
    for (const auto& q : r.quality)
      quality.push_back(Json{{"layer", q.layer},
                             {"precision", q.host ? "host" : workload::precision_name(q.precision)},
                             {"elements", q.elements},
                             {"snr_db", q.snr_db},
                             {"max_abs_error", q.max_abs_error},
                             {"mean_abs_error", q.mean_abs_error},
                             {"below_guardrail", q.snr_db < r.min_snr_db}});
    Json fallbacks = Json::array();
    for (const auto& f : r.fallbacks)
      fallbacks.push_back(Json{{"layer", f.layer},
                               {"int8_snr_db", f.int8_snr_db},
                               {"min_snr_db", f.min_snr_db},
                               {"readers", f.readers},
                               {"reason", "int8 SNR below the guardrail"}});
    j["quality"] = Json{{"min_snr_db", r.min_snr_db},
                        {"output_snr_db", r.quality.back().snr_db},
                        {"layers", quality},
                        {"fallbacks", fallbacks}};
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

int fail_command(const std::string& command, bool json, int code, const std::string& message) {
  std::cerr << "bud " << command << ": " << message << "\n";
  if (json) {
    const char* kind = code == 2               ? "bad_input"
                       : code == 125           ? "untestable"
                       : code == kExitNotBuilt ? "not_built"
                                               : "error";
    std::cout << error_object(kind, "bud " + command + ": " + message, code)
                     .dump(-1, ' ', false, json::Json::error_handler_t::replace)
              << "\n"
              << std::flush;
  }
  return code;
}

std::string usage_error_json(const std::string& message) {
  return error_object("usage", message, 2)
      .dump(-1, ' ', false, json::Json::error_handler_t::replace);
}

bool write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace bud::cli
