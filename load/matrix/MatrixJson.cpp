#include "load/matrix/MatrixJson.h"

namespace bud::matrix {

namespace {

using json::Json;

Json config_json(const Configuration& c) {
  return {{"origin", c.origin}, {"flags", c.flags}, {"energy_table", c.table.file}};
}

Json quality_json(const QualityFigures& q) { return {{"snr_db", q.snr_db}, {"top1", q.top1}}; }

/// Reads members of one JSON object, remembering the first problem (by its path).
class Reader {
 public:
  Reader(const Json& j, std::string path, std::string& error)
      : j_(j), path_(std::move(path)), error_(error) {
    if (!j_.is_object()) problem("", "not an object");
  }
  template <typename T>
  T get(const char* key, T fallback = T{}) {
    if (!error_.empty() || !j_.is_object()) return fallback;
    const auto it = j_.find(key);
    if (it == j_.end()) {
      problem(key, "missing");
      return fallback;
    }
    try {
      return it->template get<T>();
    } catch (const std::exception& e) {
      problem(key, e.what());
      return fallback;
    }
  }
  template <typename T>
  T optional(const char* key, T fallback = T{}) {
    if (!j_.is_object() || !j_.contains(key) || j_.at(key).is_null()) return fallback;
    return get<T>(key, fallback);
  }
  void problem(const std::string& key, const std::string& what) {
    if (!error_.empty()) return;
    error_ = path_;
    if (!key.empty()) error_ += "." + key;
    error_ += ": " + what;
  }

 private:
  const Json j_;  // a copy: callers pass temporaries
  std::string path_;
  std::string& error_;
};

/// The enum value whose name is `text`, by trying each value below `count`.
template <typename E, typename NameOf>
bool enum_named(const std::string& text, int count, NameOf name_of, E& out) {
  for (int k = 0; k < count; ++k)
    if (text == name_of(static_cast<E>(k))) {
      out = static_cast<E>(k);
      return true;
    }
  return false;
}

const Json& array_member(const Json& j, const char* key, std::string& error) {
  static const Json empty = Json::array();
  if (!j.contains(key) || !j.at(key).is_array()) {
    if (error.empty()) error = std::string(key) + ": missing or not an array";
    return empty;
  }
  return j.at(key);
}

}  // namespace

Json header_json(const Configuration& base, const Configuration& next, const MatrixSpec& spec) {
  Json h = Json::object();
  h["base"] = config_json(base);
  h["new"] = config_json(next);
  h["workloads"] = spec.workloads;
  h["models"] = spec.models;
  h["quality_precisions"] = spec.precisions;
  h["corpus"] = spec.corpus;
  h["mem_seeds"] = spec.mem_seeds;
  h["rule"] = {{"floor_fraction", spec.rule.floor_fraction},
               {"rollout_limit", spec.rule.rollout_limit},
               {"snr_tolerance_db", spec.rule.snr_tolerance_db},
               {"top1_tolerance", spec.rule.top1_tolerance}};
  const auto& s = spec.serving.serving;
  h["serving"] = {{"requests", s.arrivals.count},        {"arrival_seed", s.arrivals.seed},
                  {"max_batch", s.policy.max_batch},     {"queue_bound", s.policy.queue_bound},
                  {"window_us", spec.serving.window_us}, {"sla_p99_us", s.sla_p99_us},
                  {"sla_factor", spec.sla_factor}};
  return h;
}

Json cells_json(const Matrix& m) {
  Json j = Json::object();
  Json slas = Json::array();
  for (const auto& x : m.slas)
    slas.push_back({{"workload", x.workload}, {"p99_us", x.p99_us}, {"derived", x.derived}});
  j["slas"] = std::move(slas);
  Json correctness = Json::array();
  for (const auto& c : m.correctness) {
    Json x = {{"workload", c.workload},
              {"precision", c.precision.empty() ? Json(nullptr) : Json(c.precision)},
              {"base_passed", c.base_passed},
              {"new_passed", c.next_passed},
              {"regressed", c.regressed()}};
    if (!c.failure.empty()) x["failure"] = c.failure;
    correctness.push_back(std::move(x));
  }
  j["correctness"] = std::move(correctness);
  Json corpus = Json::array();
  for (const auto& c : m.corpus) {
    Json x = {{"packet", c.packet},
              {"workload", c.workload},
              {"recorded_failure", c.recorded_failure},
              {"regressed", c.regressed()},
              {"fixed", c.fixed()}};
    if (c.unusable.empty()) {
      x["base_passed"] = c.base_passed;
      x["new_passed"] = c.next_passed;
      if (!c.base_failure.empty()) x["base_failure"] = c.base_failure;
      if (!c.next_failure.empty()) x["new_failure"] = c.next_failure;
    } else {
      x["unusable"] = c.unusable;
    }
    corpus.push_back(std::move(x));
  }
  j["corpus"] = std::move(corpus);
  Json quality = Json::array();
  for (const auto& q : m.quality)
    quality.push_back({{"model", q.model},
                       {"precision", q.precision},
                       {"base", quality_json(q.base)},
                       {"new", quality_json(q.next)},
                       {"snr_dropped", q.snr_dropped},
                       {"top1_dropped", q.top1_dropped}});
  j["quality"] = std::move(quality);
  Json performance = Json::array();
  for (const auto& p : m.performance) {
    Json x = {{"workload", p.workload},
              {"metric", metric_name(p.metric)},
              {"base", p.base},
              {"new", p.next},
              {"base_mean", p.base_mean},
              {"new_mean", p.next_mean},
              {"band", p.band},
              {"threshold", p.threshold},
              {"change", p.change},
              {"movement", movement_name(p.movement)},
              {"owner", owner_name(p.owner)},
              {"mechanism", p.mechanism.empty() ? Json(nullptr) : Json(p.mechanism)}};
    performance.push_back(std::move(x));
  }
  j["performance"] = std::move(performance);
  j["runs"] = {{"rtl_runs", m.rtl_runs}, {"simulated_cycles", m.simulated_cycles}};
  return j;
}

workload::Result<Matrix> cells_from_json(const Json& j) {
  Matrix m;
  std::string error;
  if (!j.is_object()) return workload::Error{"cells: not an object"};
  size_t i = 0;
  for (const auto& x : array_member(j, "slas", error)) {
    Reader r(x, "slas[" + std::to_string(i++) + "]", error);
    m.slas.push_back(
        {r.get<std::string>("workload"), r.get<double>("p99_us"), r.get<bool>("derived")});
  }
  i = 0;
  for (const auto& x : array_member(j, "correctness", error)) {
    Reader r(x, "correctness[" + std::to_string(i++) + "]", error);
    m.correctness.push_back({r.get<std::string>("workload"), r.optional<std::string>("precision"),
                             r.get<bool>("base_passed"), r.get<bool>("new_passed"),
                             r.optional<std::string>("failure")});
  }
  i = 0;
  for (const auto& x : array_member(j, "corpus", error)) {
    Reader r(x, "corpus[" + std::to_string(i++) + "]", error);
    CorpusCell c;
    c.packet = r.get<std::string>("packet");
    c.workload = r.get<std::string>("workload");
    c.recorded_failure = r.get<bool>("recorded_failure");
    c.unusable = r.optional<std::string>("unusable");
    if (c.unusable.empty()) {
      c.base_passed = r.get<bool>("base_passed");
      c.next_passed = r.get<bool>("new_passed");
    }
    c.base_failure = r.optional<std::string>("base_failure");
    c.next_failure = r.optional<std::string>("new_failure");
    m.corpus.push_back(std::move(c));
  }
  i = 0;
  for (const auto& x : array_member(j, "quality", error)) {
    const std::string at = "quality[" + std::to_string(i++) + "]";
    Reader r(x, at, error);
    QualityCell q;
    q.model = r.get<std::string>("model");
    q.precision = r.get<std::string>("precision");
    for (auto [key, figures] : {std::pair{"base", &q.base}, std::pair{"new", &q.next}}) {
      Reader f(x.is_object() && x.contains(key) ? x.at(key) : Json(), at + "." + key, error);
      figures->snr_db = f.get<double>("snr_db");
      figures->top1 = f.get<double>("top1");
    }
    q.snr_dropped = r.get<bool>("snr_dropped");
    q.top1_dropped = r.get<bool>("top1_dropped");
    m.quality.push_back(std::move(q));
  }
  i = 0;
  for (const auto& x : array_member(j, "performance", error)) {
    const std::string at = "performance[" + std::to_string(i++) + "]";
    Reader r(x, at, error);
    PerfCell p;
    p.workload = r.get<std::string>("workload");
    if (const auto t = r.get<std::string>("metric");
        error.empty() && !enum_named(t, kNumMetrics, metric_name, p.metric))
      r.problem("metric", "unknown '" + t + "'");
    p.base = r.get<std::vector<double>>("base");
    p.next = r.get<std::vector<double>>("new");
    p.base_mean = r.get<double>("base_mean");
    p.next_mean = r.get<double>("new_mean");
    p.band = r.get<double>("band");
    p.threshold = r.get<double>("threshold");
    p.change = r.get<double>("change");
    if (const auto t = r.get<std::string>("movement");
        error.empty() && !enum_named(t, 3, movement_name, p.movement))
      r.problem("movement", "unknown '" + t + "'");
    if (const auto t = r.get<std::string>("owner");
        error.empty() && !enum_named(t, 4, owner_name, p.owner))
      r.problem("owner", "unknown '" + t + "'");
    p.mechanism = r.optional<std::string>("mechanism");
    m.performance.push_back(std::move(p));
  }
  if (error.empty()) {
    Reader r(j.contains("runs") ? j.at("runs") : Json(), "runs", error);
    m.rtl_runs = r.get<uint32_t>("rtl_runs");
    m.simulated_cycles = r.get<uint64_t>("simulated_cycles");
  }
  if (!error.empty()) return workload::Error{error};
  return m;
}

Json matrix_json(const Matrix& m, const Json& header) {
  Json j = header;
  j["precisions"] = m.precisions;
  const Json cells = cells_json(m);
  for (const auto& [key, value] : cells.items()) j[key] = value;
  Json moved = Json::array();
  for (const auto& p : m.performance)
    if (p.movement != Movement::Same)
      moved.push_back({{"workload", p.workload},
                       {"metric", metric_name(p.metric)},
                       {"movement", movement_name(p.movement)},
                       {"change", p.change},
                       {"owner", owner_name(p.owner)},
                       {"mechanism", p.mechanism.empty() ? Json(nullptr) : Json(p.mechanism)}});
  j["moved"] = std::move(moved);
  const Decision& d = m.decision;
  j["decision"] = {{"verdict", verdict_name(d.verdict)},
                   {"reasons", d.reasons},
                   {"better", d.better},
                   {"worse", d.worse},
                   {"worst_regression", d.worst_regression}};
  return j;
}

}  // namespace bud::matrix
