#include "debugger/bisect/Bisector.h"

#include <algorithm>
#include <functional>

#include "bud/ModelRevision.h"
#include "debugger/bisect/DivergenceElement.h"
#include "debugger/bisect/ResultCheck.h"
#include "debugger/bisect/StageLadder.h"
#include "emu/drive/Driver.h"
#include "emu/drive/Intervention.h"
#include "emu/run/Designs.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::debugger {

namespace {

/// How often a re-execution past the end of the first divergent window checks whether the
/// divergence is pinned yet.
constexpr uint64_t kRecheckCycles = 64;

// The rungs between lowering and the results are the dataflow stages, in the same order.
static_assert(static_cast<int>(Rung::Store) - static_cast<int>(Rung::Fetch) + 1 == emu::kNumStages);

/// The failure kind of a recorded symptom (a trigger halt or the cycle limit: Mismatch, as for
/// a live run that hit its cycle limit).
FailureKind failure_kind_of(const replay::pb::Symptom& s) {
  switch (s.kind()) {
    case replay::pb::Symptom::ASSERTION: return FailureKind::Assertion;
    case replay::pb::Symptom::HANG: return FailureKind::Hang;
    case replay::pb::Symptom::DESIGN_ERROR: return FailureKind::Error;
    default: return FailureKind::Mismatch;
  }
}

void write_wave(const BisectOptions& o, BisectReport& r, emu::Emulator& emu,
                const std::function<bool()>& rewind, uint64_t run_end,
                drive::Participant* actor = nullptr) {
  if (o.wave_file.empty() || !r.first_divergence_cycle) return;
  if (!rewind()) return;
  const uint64_t div = *r.first_divergence_cycle;
  const uint64_t from = div > o.wave_radius ? div - o.wave_radius : 0;
  const uint64_t start = emu.cycle();
  if (from > start) drive::advance(emu, from, {actor});
  if (!emu.wave_open(o.wave_file).empty()) return;
  const uint64_t to = std::min(run_end, div + o.wave_radius);
  if (to > emu.cycle()) drive::advance(emu, to, {actor});
  emu.wave_close();
  r.wave_file = o.wave_file;
  r.resimulated_cycles += emu.cycle() - start;
}

}  // namespace

BisectReport bisect_run(const run::PreparedRun& p, const run::RunOptions& options,
                        const BisectOptions& bopts) {
  BisectReport r;
  r.ladder.push_back("ingress: the workload is valid");
  if (!p.lowering_failures.empty()) {
    r.verdict = BisectVerdict::Fail;
    r.first_failing_stage = Rung::Lowering;
    r.persistent = true;
    r.message = p.lowering_failures.front();
    r.ladder.push_back("lowering: FAILS (" + r.message + ")");
    return r;
  }
  const GoldenTrace trace = GoldenTrace::build(p);
  if (!trace.error.empty()) {
    r.verdict = BisectVerdict::Fail;
    r.first_failing_stage = Rung::Lowering;
    r.message = "the golden model rejects the command stream: " + trace.error;
    r.ladder.push_back("lowering: FAILS (" + r.message + ")");
    return r;
  }
  r.ladder.push_back("lowering: the golden model's command stream matches the direct reference");
  auto made = emu::make_emulator(options.emulator, r.message);
  if (!made) return r;
  emu::Emulator& emu = *made;
  if (auto e = run::start(p, options, emu); !e.empty()) {
    r.message = e;
    return r;
  }
  TxnChecker chk(trace, std::array<emu::StageDigest, emu::kNumStages>{});
  drive::HookParticipant checking(nullptr, &chk);
  drive::advance(emu, options.max_cycles, {&checking});
  chk.finish(emu.cycle());
  r.run_cycles = emu.cycle();
  r.resimulated_cycles = emu.cycle();
  std::string detail;
  const bool failed = final_state_failed(p, trace, emu, detail);
  r.symptom = failed ? detail : "";
  r.failure = failed ? failure_kind_of(emu.state()) : FailureKind::None;
  RunEnd end;
  end.cycle = emu.cycle();
  end.stopped = emu.state() != emu::RunState::Finished;
  end.hang = emu.state() == emu::RunState::Hang || emu.state() == emu::RunState::Ready;
  end.assertion = emu.assertion();
  end.hang_cycles = options.emulator.hang_cycles;
  end.engines = emu.engines();
  conclude(r, chk, p, failed, detail, end);
  if (r.first_failing_stage == Rung::Result && emu.state() == emu::RunState::Finished) {
    if (auto addr = first_wrong_output_byte(p, trace, emu)) {
      const uint64_t run_end = emu.cycle();
      auto read = [&](uint32_t a, uint8_t* b, uint32_t n) {
        return emu.read_memory("dram", a, {b, n});
      };
      complete_result_verdict(r, p, trace, *addr, read, [&](uint32_t a, uint8_t want) {
        if (!run::start(p, options, emu).empty()) return std::optional<uint64_t>();
        r.resimulated_cycles += run_end;
        return date_wrong_byte(emu, a, want, run_end, nullptr);
      });
    }
  }
  write_wave(bopts, r, emu, [&] {
    return run::start(p, options, emu).empty();
  }, r.run_cycles);
  return r;
}

BisectReport bisect_packet(const replay::Packet& packet, const BisectOptions& bopts) {
  BisectReport r;
  if (!packet.complete) {
    r.message = packet.name + ": incomplete packet (" + packet.incomplete +
                "); bisect needs a finished recording";
    return r;
  }
  auto spec = replay::spec_from_header(packet.header);
  if (!spec) {
    r.message = packet.name + ": " + spec.error();
    return r;
  }
  // The revision this bud has for the packet's design (an array variant's own revision).
  std::string design_error;
  const std::string revision = emu::packet_design_revision(packet.header.design(), design_error);
  if (revision.empty()) {
    r.message = packet.name + ": " + design_error;
    return r;
  }
  if (!bopts.allow_revision_mismatch && packet.header.model_revision() != revision) {
    r.message = packet.name + " was recorded with model revision " +
                packet.header.model_revision() + ", this is " + revision +
                " (use --allow-revision-mismatch)";
    return r;
  }
  // A packet whose embedded run cannot be prepared here is unusable (exit 125), never a verdict
  // about the design.
  auto prepared = replay::prepare_spec(*spec, true);
  if (!prepared) {
    r.message = packet.name + ": unusable packet: " + prepared.error();
    r.ladder.push_back("ingress: cannot prepare the packet's run (" + prepared.error() + ")");
    return r;
  }
  const auto& p = *prepared;
  r.ladder.push_back("ingress: the workload is valid");
  if (!p.lowering_failures.empty()) {
    r.verdict = BisectVerdict::Fail;
    r.first_failing_stage = Rung::Lowering;
    r.persistent = true;
    r.message = p.lowering_failures.front();
    r.ladder.push_back("lowering: FAILS (" + r.message + ")");
    return r;
  }
  const GoldenTrace trace = GoldenTrace::build(p);
  r.ladder.push_back("lowering: the golden model's command stream matches the direct reference");
  r.run_cycles = packet.last_cycle();
  if (packet.symptom) {
    r.symptom = replay::symptom_kind_name(packet.symptom->kind()) + std::string(" at cycle ") +
                std::to_string(packet.symptom->cycle()) + ": " + packet.symptom->message();
    r.failure = failure_kind_of(*packet.symptom);
  }

  // 1. The recorded windows, checked against the golden prefix digests without simulating.
  const auto& windows = packet.windows;
  auto totals = [](const replay::pb::StageTotals& t) {
    emu::StageDigest d;
    d.count = t.count();
    d.sum = t.sum();
    d.open_cmd = t.open_cmd();
    d.open_count = t.open_count();
    d.open_sum = t.open_sum();
    return d;
  };
  std::vector<bool> ok(windows.size(), true);
  for (size_t w = 0; w < windows.size(); ++w) {
    for (int s = 0; s < emu::kNumStages && s < windows[w].stages_size(); ++s)
      if (!trace.digest_consistent(static_cast<emu::Stage>(s), totals(windows[w].stages(s))))
        ok[w] = false;
  }
  r.windows_checked = windows.size();
  // First window of the all-divergent suffix; a clean window before it is a safe start.
  size_t first_bad = windows.size();
  while (first_bad > 0 && !ok[first_bad - 1]) --first_bad;
  // 2. Re-execute from the checkpoint at the start of that window (or the latest before it).
  uint64_t from_cycle = first_bad < windows.size() ? windows[first_bad].start_cycle()
                                                    : (windows.empty() ? 0 : windows.back().start_cycle());
  auto ck = packet.checkpoint_at_or_before(from_cycle);
  // The stage digests at a checkpoint come from the window that ends there.
  auto digests_at = [&](uint64_t cycle) {
    std::array<emu::StageDigest, emu::kNumStages> out{};
    for (const auto& w : windows)
      if (w.end_cycle() == cycle)
        for (int s = 0; s < emu::kNumStages && s < w.stages_size(); ++s) out[s] = totals(w.stages(s));
    return out;
  };
  auto made = emu::make_emulator(spec->options.emulator, r.message);
  if (!made) return r;
  emu::Emulator& emu = *made;
  if (auto e = run::start(p, spec->options, emu); !e.empty()) {
    r.message = e;
    return r;
  }
  uint64_t start_cycle = 0;
  auto rewind = [&]() -> bool {
    if (auto e = run::start(p, spec->options, emu); !e.empty()) return false;
    if (ck && packet.checkpoints[*ck].cycle() > 0) {
      std::string error;
      auto state = packet.checkpoint_state(*ck, error);
      if (!state || !emu.restore(*state, error)) {
        r.message = "checkpoint at cycle " + std::to_string(packet.checkpoints[*ck].cycle()) +
                    ": " + error;
        return false;
      }
    }
    return true;
  };
  const uint64_t stop_at = first_bad < windows.size() ? windows[first_bad].end_cycle() : UINT64_MAX;
  const uint64_t limit = spec->options.max_cycles;
  // The packet's interventions (deposits and forces made at a prompt) happen again.
  std::vector<drive::Intervention> log;
  for (const auto& rec : packet.interventions) {
    std::string error;
    auto iv = replay::intervention_from(rec, emu, error);
    if (!iv) {
      r.message = packet.name + ": " + error;
      return r;
    }
    log.push_back(std::move(*iv));
  }
  drive::InterventionActor actor(emu, log);
  std::optional<TxnChecker> checker;
  // Runs through the first divergent window, and on (to the end, if need be) until a divergence
  // is pinned, or until the checker finds the start caught a command mid-way.
  struct Pinned final : drive::Participant {
    std::optional<TxnChecker>* checker = nullptr;
    uint64_t stop_at = 0;
    emu::TxnObserver* txn_observer() override { return &**checker; }
    // Every few cycles: a start that caught a command mid-way is abandoned as soon as the
    // command closes, and past the window's end a divergence the checker can only judge when its
    // command closes is pinned as soon as it closes, not at the end of the run.
    uint64_t next_pause(uint64_t now) const override {
      return now < stop_at ? std::min(stop_at, now + kRecheckCycles) : now + kRecheckCycles;
    }
    drive::PauseAction on_pause(uint64_t cycle) override {
      const bool pinned = cycle >= stop_at && (*checker)->divergence_count() > 0;
      return pinned || (*checker)->before_start() ? drive::PauseAction::Halt
                                                  : drive::PauseAction::Continue;
    }
  } pinned;
  pinned.checker = &checker;
  pinned.stop_at = stop_at;
  for (;;) {
    if (!rewind()) return r;
    start_cycle = emu.cycle();
    checker.emplace(trace, start_cycle > 0 ? digests_at(start_cycle)
                                           : std::array<emu::StageDigest, emu::kNumStages>{});
    drive::advance(emu, limit, {&actor, &pinned});
    if (emu.state() != emu::RunState::Ready) checker->finish(emu.cycle());
    // A command caught mid-way at the checkpoint had produced wrong transactions before it: the
    // divergence lies earlier. Start again one checkpoint back (the reset at the latest).
    if (!checker->before_start() || !ck || packet.checkpoints[*ck].cycle() == 0) break;
    r.resimulated_cycles += emu.cycle() - start_cycle;
    // The divergence lies before this checkpoint: from the one before, the checkpoint just left
    // is the window's end.
    pinned.stop_at = std::min(pinned.stop_at, packet.checkpoints[*ck].cycle());
    ck = *ck > 0 ? std::optional<size_t>(*ck - 1) : std::nullopt;
  }
  const TxnChecker& chk = *checker;
  r.resimulated_cycles += emu.cycle() - start_cycle;
  // 3. Persistence from what the run itself recorded.
  bool failed = false;
  std::string detail;
  if (packet.symptom) {
    const auto kind = packet.symptom->kind();
    if (kind != replay::pb::Symptom::RESULT_MISMATCH) {
      failed = true;
      detail = r.symptom;
    }
    for (const auto& d : packet.symptom->details())
      if (d.rfind("outputs:", 0) == 0 || d.rfind("lowering:", 0) == 0) {
        failed = true;
        detail = d;
      }
  }
  RunEnd end;
  end.cycle = emu.cycle();
  end.stopped = emu.state() != emu::RunState::Ready && emu.state() != emu::RunState::Finished;
  end.hang = emu.state() == emu::RunState::Hang;
  end.assertion = emu.assertion();
  end.hang_cycles = spec->options.emulator.hang_cycles;
  end.engines = emu.engines();
  conclude(r, chk, p, failed, detail, end);
  if (r.first_failing_stage == Rung::Result && emu.state() == emu::RunState::Finished) {
    if (auto addr = first_wrong_output_byte(p, trace, emu)) {
      const uint64_t run_end = emu.cycle();
      auto read = [&](uint32_t a, uint8_t* b, uint32_t n) {
        return emu.read_memory("dram", a, {b, n});
      };
      complete_result_verdict(r, p, trace, *addr, read, [&](uint32_t a, uint8_t want) {
        // From the latest checkpoint at which the byte still held the golden value (the reset
        // if none did), cycle by cycle.
        std::optional<size_t> start;
        for (size_t i = packet.checkpoints.size(); i-- > 0;) {
          ck = i;
          uint8_t b = 0;
          if (rewind() && emu.read_memory("dram", a, {&b, 1}) && b == want) {
            start = i;
            break;
          }
        }
        ck = start;
        if (!rewind()) return std::optional<uint64_t>();
        const uint64_t from = emu.cycle();
        const auto c = date_wrong_byte(emu, a, want, run_end, &actor);
        r.resimulated_cycles += emu.cycle() - from;
        return c;
      });
    }
  }
  // Downstream stages also from the recorded end totals (no simulation needed).
  if (!windows.empty() && r.verdict == BisectVerdict::Fail) {
    const auto& last = windows.back();
    for (int s = 0; s < emu::kNumStages && s < last.stages_size(); ++s) {
      const Rung name = rung_of(static_cast<emu::Stage>(s));
      emu::StageDigest d{last.stages(s).count(), last.stages(s).sum()};
      const bool same = d == trace.stream(static_cast<emu::Stage>(s)).total;
      if (!same && name != r.first_failing_stage &&
          std::find(r.downstream_stages.begin(), r.downstream_stages.end(), name) ==
              r.downstream_stages.end() &&
          name > *r.first_failing_stage)
        r.downstream_stages.insert(r.downstream_stages.end() - 1, name);
    }
  }
  write_wave(bopts, r, emu, rewind, r.run_cycles, &actor);
  return r;
}

}  // namespace bud::debugger
