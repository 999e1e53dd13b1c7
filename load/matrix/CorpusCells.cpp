#include "load/matrix/CorpusCells.h"

#include <filesystem>

#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::matrix {

namespace {

struct Outcome {
  bool passed = false;
  std::string failure;
  std::string unusable;
};

/// The packet's run with `config`'s options over its own, on the RTL, checked.
Outcome rerun(const replay::RunSpec& recorded, const Configuration& config,
              const CorpusProgress& progress, const std::string& name) {
  Outcome out;
  replay::RunSpec spec = recorded;
  if (config.overlay)
    if (auto e = config.overlay(spec.options); !e.empty()) {
      out.unusable = config.name + ": " + e;
      return out;
    }
  auto prepared = replay::prepare_spec(spec, true);
  if (!prepared) {
    out.unusable = config.name + ": " + prepared.error();
    return out;
  }
  if (progress.before) progress.before(name + " on " + config.name);
  const run::RunReport r = run::execute(*prepared, spec.options);
  if (progress.after) progress.after(r.cycles);
  out.passed = r.passed;
  if (!r.passed) out.failure = r.failures.empty() ? r.message : r.failures.front();
  return out;
}

}  // namespace

CorpusCell corpus_cell(const std::string& path, const Configuration& base,
                       const Configuration& next, const CorpusProgress& progress) {
  CorpusCell c;
  c.packet = std::filesystem::path(path).filename().string();
  std::string error;
  auto packet = replay::read_packet(path, error);
  if (!packet) {
    c.unusable = error;
    return c;
  }
  c.workload = packet->header.workload().origin();
  c.recorded_failure = packet->symptom.has_value();
  if (!packet->interventions.empty()) {
    c.unusable = "prompt interventions recorded: " + std::to_string(packet->interventions.size()) +
                 "; where they land under another configuration is not defined (replay the "
                 "packet with `bud replay`)";
    return c;
  }
  auto spec = replay::spec_from_header(packet->header);
  if (!spec) {
    c.unusable = spec.error();
    return c;
  }
  const Outcome b = rerun(*spec, base, progress, c.packet);
  if (!b.unusable.empty()) {
    c.unusable = b.unusable;
    return c;
  }
  const Outcome n = rerun(*spec, next, progress, c.packet);
  c.unusable = n.unusable;
  c.base_passed = b.passed;
  c.base_failure = b.failure;
  c.next_passed = n.passed;
  c.next_failure = n.failure;
  return c;
}

}  // namespace bud::matrix
