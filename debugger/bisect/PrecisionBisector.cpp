#include "debugger/bisect/PrecisionBisector.h"

#include <cstdio>

#include "emu/workload/Quality.h"
#include "emu/workload/Reference.h"

namespace bud::debugger {

namespace {

using workload::LayerQuality;
using workload::Precision;
using workload::Workload;

/// Whether `a` and `b` are one workload (names, kinds, shapes, data seed and explicit input), so
/// that only their precisions can tell them apart. The mismatch, or empty.
std::string compare_workloads(const Workload& a, const Workload& b) {
  if (a.layers.size() != b.layers.size())
    return "the two runs have " + std::to_string(a.layers.size()) + " and " +
           std::to_string(b.layers.size()) + " layers: not one workload";
  if (a.seed != b.seed)
    return "the two runs use data seeds " + std::to_string(a.seed) + " and " +
           std::to_string(b.seed) + ": their quality does not compare";
  if (!(a.input == b.input) || a.input_data != b.input_data)
    return "the two runs have different inputs";
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const auto& la = a.layers[i];
    const auto& lb = b.layers[i];
    if (la.name != lb.name || la.kind != lb.kind || !(la.out_shape == lb.out_shape))
      return "layer " + std::to_string(i) + " is '" + la.name + "' in one run and '" + lb.name +
             "' in the other: not one workload";
  }
  return {};
}

/// Indices of the layers below the guardrail in `q` that meet it in `base`.
std::vector<size_t> broken(const std::vector<LayerQuality>& q, const std::vector<LayerQuality>& base,
                           double min_snr_db) {
  std::vector<size_t> out;
  for (size_t i = 0; i < q.size() && i < base.size(); ++i)
    if (q[i].snr_db < min_snr_db && base[i].snr_db >= min_snr_db) out.push_back(i);
  return out;
}

std::string precision_file(const Workload& w, const std::string& header) {
  std::string s = "# " + header + "\n";
  for (const auto& l : w.layers)
    if (l.kind != workload::LayerKind::Host)
      s += l.name + " " + workload::precision_name(l.precision) + "\n";
  return s;
}

/// "int8", or "int8/bf16" for a layer that computes int8 and writes bf16.
std::string types(workload::Precision p, workload::Precision out) {
  std::string s = workload::precision_name(p);
  if (out != p) s += std::string("/") + workload::precision_name(out);
  return s;
}

}  // namespace

std::string snr_text(double db) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f dB", db);
  return b;
}

std::optional<PrecisionBisect> bisect_precision(const Workload& good, const Workload& bad,
                                                const isa::ArrayConfig& array, double min_snr_db,
                                                std::string& error) {
  error = compare_workloads(good, bad);
  if (!error.empty()) return std::nullopt;
  PrecisionBisect r;
  r.min_snr_db = min_snr_db;
  // One fp32 network serves every assignment: the numbers are the same.
  const auto fp32 = workload::float_network(good);
  auto evaluate = [&](const Workload& w) {
    ++r.evaluations;
    return workload::network_quality(w, workload::run_reference(w, array), fp32);
  };
  const auto qg = evaluate(good);
  const auto qb = evaluate(bad);
  std::vector<size_t> diff;
  for (size_t i = 0; i < good.layers.size(); ++i) {
    const auto& lg = good.layers[i];
    PrecisionRow row{lg.name,          lg.kind == workload::LayerKind::Host,
                     lg.precision,     bad.layers[i].precision,
                     lg.out_type,      bad.layers[i].out_type,
                     qg[i].snr_db,     qb[i].snr_db};
    if (!row.host && row.good != row.bad) {
      diff.push_back(i);
      r.changed.push_back(row.layer);
    }
    r.layers.push_back(row);
  }
  const auto broken_bad = broken(qb, qg, min_snr_db);
  if (broken_bad.empty()) return r;
  r.regressed = true;
  r.first_layer = good.layers[broken_bad.front()].name;
  r.persistent = !qb.empty() && qb.back().snr_db < min_snr_db;

  // The good assignment with the first k changes applied (the readers' union applied again).
  auto hybrid = [&](size_t k) {
    Workload w = good;
    for (size_t j = 0; j < k; ++j) w.layers[diff[j]].precision = bad.layers[diff[j]].precision;
    workload::resolve_precisions(w);
    return w;
  };
  if (diff.empty()) {  // equal assignments evaluate equally: only different numbers get here
    error = "the runs differ in quality but not in any layer's precision";
    return std::nullopt;
  }
  // Invariant: hybrid(lo) meets the guardrail where good does, hybrid(hi) does not.
  size_t lo = 0, hi = diff.size();
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (broken(evaluate(hybrid(mid)), qg, min_snr_db).empty()) lo = mid;
    else hi = mid;
  }
  const size_t culprit = diff[hi - 1];
  r.culprit = good.layers[culprit].name;
  // The reproducer: good plus the culprit's change alone, else (it breaks the guardrail only
  // with earlier changes) the hybrid the bisection ended on.
  Workload repro = good;
  repro.layers[culprit].precision = bad.layers[culprit].precision;
  workload::resolve_precisions(repro);
  auto qr = evaluate(repro);
  auto br = broken(qr, qg, min_snr_db);
  r.reproducer_alone = !br.empty();
  if (!r.reproducer_alone) {
    repro = hybrid(hi);
    qr = evaluate(repro);
    br = broken(qr, qg, min_snr_db);  // not empty: the bisection found it so
  }
  const size_t at = br.empty() ? broken_bad.front() : br.front();
  r.reproducer_layer = repro.layers[at].name;
  r.reproducer_snr_db = qr[at].snr_db;
  if (repro.layers[at].out_type != good.layers[at].out_type)
    r.reproducer_layer_out = repro.layers[at].out_type;
  r.reproducer = precision_file(
      repro, std::string("bud bisect: the good assignment with ") +
                 (r.reproducer_alone ? "" : "the changes up to and including ") + *r.culprit +
                 " " + workload::precision_name(bad.layers[culprit].precision) +
                 "; breaks the guardrail at " + r.reproducer_layer);
  return r;
}

std::string PrecisionBisect::text() const {
  std::string s;
  char buf[200];
  std::snprintf(buf, sizeof buf, "%-16s %-9s %-9s %10s %10s\n", "layer", "good", "bad",
                "good SNR", "bad SNR");
  s += buf;
  for (const auto& l : layers) {
    const bool below = l.bad_snr_db < min_snr_db && l.good_snr_db >= min_snr_db;
    std::snprintf(buf, sizeof buf, "%-16s %-9s %-9s %10s %10s%s%s\n", l.layer.c_str(),
                  l.host ? "host" : types(l.good, l.good_out).c_str(),
                  l.host ? "host" : types(l.bad, l.bad_out).c_str(), snr_text(l.good_snr_db).c_str(),
                  snr_text(l.bad_snr_db).c_str(), l.good != l.bad ? "  changed" : "",
                  below ? "  < guardrail" : "");
    s += buf;
  }
  s += "(compute/output type where they differ)\n";
  s += "guardrail  " + snr_text(min_snr_db) + "; " + std::to_string(changed.size()) +
       " layer(s) change precision; " + std::to_string(evaluations) + " networks evaluated\n";
  if (!regressed) return s;
  s += "culprit    " + *culprit + " (its precision change breaks the guardrail";
  if (reproducer_layer_out && reproducer_layer != *culprit)
    s += ": " + *culprit + " reads " + reproducer_layer + "'s output, which becomes " +
         workload::precision_name(*reproducer_layer_out);
  s += ")\n";
  s += "first      " + *first_layer + " (first layer below the guardrail" +
       (persistent ? ", persists to the output)\n" : "; the output recovers: transient)\n");
  s += std::string("reproduce  good + ") + (reproducer_alone ? "" : "the changes up to ") +
       *culprit + ": " + reproducer_layer + " at " + snr_text(reproducer_snr_db) + "\n";
  return s;
}

json::Json PrecisionBisect::to_json() const {
  json::Json j = json::Json::object();
  j["regressed"] = regressed;
  j["min_snr_db"] = min_snr_db;
  json::Json ls = json::Json::array();
  for (const auto& l : layers) {
    json::Json e = json::Json::object();
    e["layer"] = l.layer;
    e["good"] = l.host ? "host" : workload::precision_name(l.good);
    e["bad"] = l.host ? "host" : workload::precision_name(l.bad);
    e["good_out"] = workload::precision_name(l.good_out);
    e["bad_out"] = workload::precision_name(l.bad_out);
    e["good_snr_db"] = l.good_snr_db;
    e["bad_snr_db"] = l.bad_snr_db;
    ls.push_back(e);
  }
  j["layers"] = ls;
  j["changed"] = changed;
  j["culprit"] = culprit ? json::Json(*culprit) : json::Json();
  j["first_layer"] = first_layer ? json::Json(*first_layer) : json::Json();
  j["persistent"] = persistent;
  j["reproducer"] = reproducer;
  j["reproducer_alone"] = reproducer_alone;
  j["reproducer_layer"] = reproducer_layer;
  j["reproducer_layer_out"] =
      reproducer_layer_out ? json::Json(workload::precision_name(*reproducer_layer_out)) : json::Json();
  j["reproducer_snr_db"] = reproducer_snr_db;
  j["evaluations"] = evaluations;
  return j;
}

}  // namespace bud::debugger
