#include "debugger/bisect/GoldenPrefixChecker.h"

#include "debugger/bisect/DivergenceElement.h"

namespace bud::debugger {

std::unique_ptr<GoldenPrefixChecker> GoldenPrefixChecker::make(
    std::unique_ptr<run::PreparedRun> prepared, const emu::Emulator& emu, std::string& error) {
  std::unique_ptr<GoldenPrefixChecker> c(new GoldenPrefixChecker());
  c->prepared_ = std::move(prepared);
  c->trace_ = std::make_unique<GoldenTrace>(GoldenTrace::build(*c->prepared_));
  if (!c->trace_->error.empty()) {
    error = "golden model: " + c->trace_->error;
    return nullptr;
  }
  std::array<emu::StageDigest, emu::kNumStages> at{};
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto stage = static_cast<emu::Stage>(s);
    at[s] = emu.stage_digest(stage);
    if (!c->before_ && !c->trace_->digest_consistent(stage, at[s])) {
      replay::pb::Symptom sym;
      sym.set_kind(replay::pb::Symptom::STAGE_MISMATCH);
      sym.set_cycle(emu.cycle());
      sym.set_message(std::string("stage ") + emu::stage_name(stage) +
                      " had diverged from the golden model before cycle " +
                      std::to_string(emu.cycle()) + " (" + std::to_string(at[s].count) +
                      " transactions)");
      c->before_ = sym;
    }
  }
  c->checker_ = std::make_unique<TxnChecker>(*c->trace_, at);
  return c;
}

std::optional<replay::pb::Symptom> GoldenPrefixChecker::symptom() const {
  if (before_) return before_;
  // The first divergence by cycle over the stages, the earliest stage on a tie (dataflow order).
  std::optional<Divergence> first;
  for (int s = 0; s < emu::kNumStages; ++s)
    if (auto d = checker_->first_of(static_cast<emu::Stage>(s)); d && (!first || d->cycle < first->cycle))
      first = d;
  if (!first) return std::nullopt;
  replay::pb::Symptom sym;
  sym.set_kind(replay::pb::Symptom::STAGE_MISMATCH);
  sym.set_cycle(first->cycle);
  sym.set_message(render_divergence(*first, *prepared_));
  return sym;
}

replay::PrefixCheck golden_prefix_check() {
  return [](const replay::RunSpec& spec, const emu::Emulator& emu,
            std::string& error) -> std::unique_ptr<replay::PrefixChecker> {
    auto prepared = replay::prepare_spec(spec, true);
    if (!prepared) {
      error = "embedded workload: " + prepared.error();
      return nullptr;
    }
    return GoldenPrefixChecker::make(std::make_unique<run::PreparedRun>(std::move(*prepared)),
                                     emu, error);
  };
}

}  // namespace bud::debugger
