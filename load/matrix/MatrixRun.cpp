#include "load/matrix/MatrixRun.h"

#include <cmath>

#include "load/matrix/CorpusCells.h"
#include "profile/Compare.h"

namespace bud::matrix {

namespace {

/// One configuration's runs of one workload: a fit cell per memory seed, and the first seed's
/// profile (the mechanism of a moved cell comes from comparing BASE's and NEW's).
struct SeedRuns {
  std::vector<fit::FitCell> cells;
  std::optional<profile::Profile> profile;
};

double figure(const fit::FitCell& c, Metric m) {
  switch (m) {
    case Metric::Cycles:
      return static_cast<double>(c.cycles + c.host_cycles);
    case Metric::PeakFraction:
      return c.flops_fraction;
    case Metric::EnergyUj:
      return static_cast<double>(c.energy_fj) / 1e9;
    case Metric::RequestsPerJoule:
      return c.sustained ? c.sustained->requests_per_joule : 0;
    case Metric::Count:
      break;
  }
  return 0;
}

/// The serving spec of a cell at `sla_us`, its window in cycles of the service's clock (as
/// fit_cell converts it).
load::SweepSpec serving_at(const MatrixSpec& spec, double sla_us, const load::Service& service) {
  load::SweepSpec s = spec.serving.serving;
  s.sla_p99_us = sla_us;
  s.policy.window_cycles =
      static_cast<uint64_t>(std::llround(spec.serving.window_us * service.frequency_mhz));
  return s;
}

class Runner {
 public:
  Runner(const MatrixSpec& spec, const MatrixProgress& progress, Matrix& m)
      : spec_(spec), progress_(progress), m_(m) {}

  /// Every seed of `workload` under `config` at `sla_us` (0 on BASE's first seed with a derived
  /// SLA: it is set from that run, and the run searched again at it).
  workload::Result<SeedRuns> perf(const std::string& workload, const Configuration& config,
                                  WorkloadSla& sla) {
    SeedRuns out;
    for (uint64_t seed : spec_.mem_seeds) {
      fit::FitTarget target{config.name, config.options, config.table};
      target.options.emulator.dram.seed = seed;
      fit::FitSpec at = spec_.serving;
      at.serving.sla_p99_us = sla.p99_us;
      fit::FitEvidence evidence;
      const std::string label =
          workload + " on " + config.name + ", mem seed " + std::to_string(seed);
      auto measured = fit::fit_cell(
          workload, target, at, [&](const std::string&) { note(label); }, &evidence);
      if (!measured)
        return workload::Error{config.name + " (" + config.origin + "): " + measured.error()};
      fit::FitCell cell = std::move(measured).value();
      m_.simulated_cycles += cell.cycles;
      if (cell.passed && sla.p99_us == 0 && evidence.service) {
        // The derived SLA: a multiple of BASE's own time of one inference, so that workloads of
        // very different sizes each get an SLA that BASE meets at some load.
        sla.p99_us = spec_.sla_factor * static_cast<double>(cell.cycles + cell.host_cycles) /
                     evidence.service->frequency_mhz;
        sla.derived = true;
        cell.sla_p99_us = sla.p99_us;
        fit::search_sustained(*evidence.service, serving_at(spec_, sla.p99_us, *evidence.service),
                              spec_.serving.refine_steps, cell);
      }
      if (!out.profile) out.profile = std::move(evidence.profile);
      out.cells.push_back(std::move(cell));
    }
    return out;
  }

  /// One quality run of `model` at `precision` under `config`: its figures, and whether the
  /// RTL matched bit-exactly (`failure` otherwise).
  workload::Result<QualityFigures> quality(const std::string& model, const std::string& precision,
                                           const Configuration& config, bool& passed,
                                           std::string& failure) {
    run::RunOptions o = config.options;
    o.workload = model;
    if (precision != "configured") o.precision = precision;
    note(model + " (" + (o.precision.empty() ? "own precision" : o.precision) + ") on " +
         config.name);
    auto prepared = run::prepare(o);
    if (!prepared)
      return workload::Error{config.name + " (" + config.origin + "): " + prepared.error()};
    const run::RunReport r = run::execute(*prepared, o);
    m_.simulated_cycles += r.cycles;
    passed = r.passed;
    if (!r.passed) failure = r.failures.empty() ? r.message : r.failures.front();
    QualityFigures q;
    // Against the ONNX model's own fp32 network when there is one, else the workload's.
    const bool onnx = !r.onnx_quality.empty();
    const auto& layers = onnx ? r.onnx_quality : r.quality;
    if (!layers.empty()) q.snr_db = layers.back().snr_db;
    q.top1 = onnx ? r.onnx_agreement.top1 : r.agreement.top1;
    return q;
  }

 private:
  void note(const std::string& label) {
    ++m_.rtl_runs;
    if (progress_) progress_(label);
  }

  const MatrixSpec& spec_;
  const MatrixProgress& progress_;
  Matrix& m_;
};

/// The top-down class the two first-seed profiles' comparison names, at the cycles cell's
/// threshold as its tolerance ("" when they are not comparable or do not diverge).
std::optional<profile::TopClass> mechanism(const SeedRuns& base, const SeedRuns& next,
                                           double tolerance) {
  if (!base.profile || !next.profile) return std::nullopt;
  profile::ProfileInput b, n;
  b.profile = *base.profile;
  n.profile = *next.profile;
  if (!profile::check_comparable(b, n).empty()) return std::nullopt;
  const auto c = profile::compare(*base.profile, *next.profile, tolerance);
  if (!c.divergence) return std::nullopt;
  return c.divergence->mechanism;
}

}  // namespace

std::vector<std::string> quality_precisions(const MatrixSpec& spec, const Configuration& base,
                                            const Configuration& next) {
  // The fixed precisions, and each configuration's own when either names one (a precision file
  // is the bounded change then).
  std::vector<std::string> out = spec.precisions;
  if (!base.options.precision.empty() || !next.options.precision.empty())
    out.push_back("configured");
  return out;
}

std::vector<MatrixTask> matrix_tasks(const MatrixSpec& spec, const Configuration& base,
                                     const Configuration& next) {
  std::vector<MatrixTask> tasks;
  for (const auto& w : spec.workloads) tasks.push_back({MatrixTask::Kind::Workload, w, ""});
  for (const auto& model : spec.models)
    for (const auto& precision : quality_precisions(spec, base, next))
      tasks.push_back({MatrixTask::Kind::Quality, model, precision});
  for (const auto& path : spec.corpus) tasks.push_back({MatrixTask::Kind::Corpus, path, ""});
  return tasks;
}

workload::Result<Matrix> run_task(const MatrixTask& task, const Configuration& base,
                                  const Configuration& next, const MatrixSpec& spec,
                                  const MatrixProgress& progress) {
  Matrix m;
  Runner runner(spec, progress, m);
  switch (task.kind) {
    case MatrixTask::Kind::Workload: {
      const std::string& w = task.name;
      WorkloadSla sla{w, spec.serving.serving.sla_p99_us, false};
      auto b = runner.perf(w, base, sla);
      if (!b) return workload::Error{b.error()};
      auto n = runner.perf(w, next, sla);
      if (!n) return workload::Error{n.error()};
      m.slas.push_back(sla);
      CorrectnessCell cc{w, "", true, true, ""};
      for (const auto* runs : {&*n, &*b})
        for (const auto& c : runs->cells) {
          bool& passed = runs == &*b ? cc.base_passed : cc.next_passed;
          if (c.passed) continue;
          passed = false;
          if (cc.failure.empty()) cc.failure = c.failure;
        }
      m.correctness.push_back(cc);
      if (!cc.base_passed || !cc.next_passed) break;  // no figures to compare
      std::optional<profile::TopClass> cls;
      for (int k = 0; k < kNumMetrics; ++k) {
        PerfCell p;
        p.workload = w;
        p.metric = static_cast<Metric>(k);
        for (const auto& c : b->cells) p.base.push_back(figure(c, p.metric));
        for (const auto& c : n->cells) p.next.push_back(figure(c, p.metric));
        classify(p, spec.rule.floor_fraction);
        if (p.metric == Metric::Cycles && p.movement != Movement::Same && p.base_mean > 0)
          cls = mechanism(*b, *n, p.threshold / p.base_mean);
        p.owner = owner_for(p.metric, cls.value_or(profile::TopClass::Unattributed));
        if (p.movement != Movement::Same && cls &&
            (p.metric == Metric::Cycles || p.metric == Metric::PeakFraction))
          p.mechanism = profile::top_class_name(*cls);
        m.performance.push_back(std::move(p));
      }
      break;
    }
    case MatrixTask::Kind::Quality: {
      QualityCell q{task.name, task.precision, {}, {}, false, false};
      CorrectnessCell cc{task.name, task.precision, false, false, ""};
      std::string base_failure, next_failure;
      auto bq = runner.quality(task.name, task.precision, base, cc.base_passed, base_failure);
      if (!bq) return workload::Error{bq.error()};
      auto nq = runner.quality(task.name, task.precision, next, cc.next_passed, next_failure);
      if (!nq) return workload::Error{nq.error()};
      cc.failure = !next_failure.empty() ? next_failure : base_failure;
      q.base = *bq;
      q.next = *nq;
      classify(q, spec.rule);
      m.correctness.push_back(cc);
      m.quality.push_back(q);
      break;
    }
    case MatrixTask::Kind::Corpus: {
      CorpusProgress p;
      p.before = [&](const std::string& label) {
        ++m.rtl_runs;
        if (progress) progress(label);
      };
      p.after = [&](uint64_t cycles) { m.simulated_cycles += cycles; };
      m.corpus.push_back(corpus_cell(task.name, base, next, p));
      break;
    }
  }
  return m;
}

void append_task(Matrix& into, Matrix&& part) {
  const auto move_all = [](auto& to, auto& from) {
    for (auto& x : from) to.push_back(std::move(x));
  };
  move_all(into.correctness, part.correctness);
  move_all(into.corpus, part.corpus);
  move_all(into.quality, part.quality);
  move_all(into.performance, part.performance);
  move_all(into.slas, part.slas);
  into.rtl_runs += part.rtl_runs;
  into.simulated_cycles += part.simulated_cycles;
}

void decide(Matrix& m, const DecisionRule& rule) {
  m.decision = decide(m.correctness, m.quality, m.performance, rule, m.corpus);
}

workload::Result<Matrix> run_matrix(const Configuration& base, const Configuration& next,
                                    const MatrixSpec& spec, const MatrixProgress& progress) {
  Matrix m;
  m.mem_seeds = spec.mem_seeds;
  m.precisions = quality_precisions(spec, base, next);
  for (const auto& task : matrix_tasks(spec, base, next)) {
    auto part = run_task(task, base, next, spec, progress);
    if (!part) return workload::Error{part.error()};
    append_task(m, std::move(part).value());
  }
  decide(m, spec.rule);
  return m;
}

}  // namespace bud::matrix
