#include "debugger/bisect/DiffBisector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "emu/drive/Driver.h"
#include "emu/run/Designs.h"
#include "emu/workload/Quality.h"
#include "replay/CounterMap.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::debugger {

namespace {

/// One side of the comparison: a packet, its run and an emulator positioned in it.
struct Side {
  std::string path;
  std::optional<replay::Packet> packet;
  std::optional<replay::RunSpec> spec;
  std::optional<run::PreparedRun> prepared;
  std::unique_ptr<emu::Emulator> emu;
  std::map<uint64_t, uint64_t> digests;  ///< recorded digest stream
  std::vector<std::string> names;        ///< the design's counters (the order of `counters`)
  replay::CounterMap counters;           ///< which of the design's counters the packet recorded

  std::string open(const std::string& p) {
    path = p;
    std::string error;
    packet = replay::read_packet(p, error);
    if (!packet) return error;
    auto s = replay::spec_from_header(packet->header);
    if (!s) return p + ": " + s.error();
    spec = std::move(s).value();
    emu = emu::make_emulator(spec->options.emulator, error);
    if (!emu) return p + ": " + error;
    names = emu->describe().counters;
    counters = replay::to_current_counters(*packet, names);  // by name: any counter list
    auto pr = replay::prepare_spec(*spec, false);
    if (!pr) return p + ": " + pr.error();
    prepared = std::move(pr).value();
    for (const auto& w : packet->windows)
      for (const auto& d : w.digests()) digests[d.cycle()] = d.digest();
    return {};
  }

  /// Positions the emulator at `cycle` from the latest checkpoint at or before it.
  std::string seek(uint64_t cycle, uint64_t& resimulated) {
    std::string error;
    emu = emu::make_emulator(spec->options.emulator, error);
    if (!emu) return path + ": " + error;
    if (auto e = run::start(*prepared, spec->options, *emu); !e.empty()) return e;
    if (auto ck = packet->checkpoint_at_or_before(cycle)) {
      auto state = packet->checkpoint_state(*ck, error);
      if (!state || !emu->restore(*state, error)) return path + ": " + error;
    }
    if (cycle > emu->cycle()) {
      resimulated += cycle - emu->cycle();
      drive::advance(*emu, cycle);
    }
    return {};
  }
};

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

void compare_state(emu::Emulator& g, emu::Emulator& b, std::vector<StateDifference>& out) {
  const auto& sigs = g.signals();
  for (emu::SignalId id = 0; id < sigs.size() && out.size() < 32; ++id) {
    for (uint32_t e = 0; e < sigs[id].elements; ++e) {
      const auto vg = g.read_signal(id, e), vb = b.read_signal(id, e);
      if (!(vg == vb)) {
        std::string name = sigs[id].name;
        if (sigs[id].elements > 1) name += "[" + std::to_string(e) + "]";
        out.push_back({name, hex(vg.low()), hex(vb.low())});
      }
    }
  }
  for (const auto& m : g.memories()) {
    std::vector<uint8_t> a(std::min<uint64_t>(m.size_bytes, 1u << 24)), c(a.size());
    if (!g.read_memory(m.name, 0, a) || !b.read_memory(m.name, 0, c)) continue;
    int shown = 0;
    for (size_t i = 0; i < a.size() && shown < 8; ++i) {
      if (a[i] != c[i]) {
        out.push_back({m.name + " " + hex(i), std::to_string(static_cast<int>(a[i])),
                       std::to_string(static_cast<int>(c[i]))});
        ++shown;
      }
    }
  }
}

/// One row of the mechanism rule: the counters whose growth (bad minus good) feeds a class, with
/// a weight, by name: "ENGINE.<class>" rows match the cycle class of every engine ("*.stall_mem"),
/// "<prefix>*" rows every counter of a family. A lost scratchpad bank is counted both in
/// `bank_conflicts_<buf>` and in the loser's `stall_mem` (docs/isa.md), so conflicts feed
/// compute-hazard and are taken out of memory.
struct MechanismRow {
  std::string_view pattern;
  Mechanism mechanism;
  double weight;
  bool matches(std::string_view name) const {
    if (pattern.front() == '*')
      return name.size() > pattern.size() - 1 && name.ends_with(pattern.substr(1));
    if (pattern.back() == '*') return name.starts_with(pattern.substr(0, pattern.size() - 1));
    return name == pattern;
  }
};

/// The whole rule, as a table (docs/bisect.md, "Mechanism class"; docs/counters.md).
constexpr MechanismRow kMechanismRules[] = {
    {"*.throttled", Mechanism::Thermal, 1},
    {"*.stall_mem", Mechanism::Memory, 1},
    {"*.stall_dep", Mechanism::Scheduling, 1},
    {"*.starve", Mechanism::Scheduling, 1},
    {"*.stall_out", Mechanism::Scheduling, 1},
    {"bank_conflicts_*", Mechanism::ComputeHazard, 1},
    {"bank_conflicts_*", Mechanism::Memory, -1},
    // The array and the requantiser taking more cycles for the same work.
    {"gemm.active", Mechanism::Compute, 1},
    {"post.active", Mechanism::Compute, 1},
    {"saturations", Mechanism::Precision, 1},
};

/// The precision bisect of two assignments of one workload, as a DiffReport.
DiffReport precision_report(const workload::Workload& good, const workload::Workload& bad,
                            const isa::ArrayConfig& array, const DiffOptions& o) {
  DiffReport r;
  std::string error;
  const double min_snr = o.min_snr_db.value_or(
      good.min_snr_db.value_or(workload::kDefaultMinSnrDb));
  auto p = bisect_precision(good, bad, array, min_snr, error);
  if (!p) return r.message = error, r;
  if (p->regressed) {
    const auto row = std::find_if(p->layers.begin(), p->layers.end(),
                                  [&](const PrecisionRow& l) { return l.layer == *p->culprit; });
    r.verdict = DiffVerdict::Quality;
    r.mechanism = Mechanism::Precision;
    r.message = "layer " + *p->first_layer + " falls below the " + snr_text(min_snr) +
                " guardrail; the change that breaks it: " + *p->culprit + " " +
                workload::precision_name(row->good) + " -> " + workload::precision_name(row->bad);
  } else {
    r.verdict = DiffVerdict::Same;
    r.message = "every layer that meets the " + snr_text(min_snr) +
                " guardrail under the good assignment meets it under the bad one (" +
                std::to_string(p->changed.size()) + " layer(s) change precision)";
  }
  r.precision = std::move(p);
  return r;
}

}  // namespace

DiffReport bisect_assignments(const run::RunOptions& base, const std::string& good,
                              const std::string& bad, const DiffOptions& o) {
  DiffReport r;
  std::string error;
  const auto array = emu::design_array(base.emulator.design, error);
  if (!array) return r.message = error, r;
  auto loaded = run::load_workload(base);
  if (!loaded) return r.message = loaded.error(), r;
  workload::Workload wg = *loaded, wb = std::move(loaded).value();
  run::RunOptions og = base, ob = base;
  og.precision = good;
  ob.precision = bad;
  if (auto a = run::apply_precision(wg, og, *array); !a) return r.message = "--good: " + a.error(), r;
  if (auto a = run::apply_precision(wb, ob, *array); !a) return r.message = "--bad: " + a.error(), r;
  return precision_report(wg, wb, *array, o);
}

const char* mechanism_name(Mechanism m) {
  switch (m) {
    case Mechanism::Thermal: return "thermal";
    case Mechanism::Memory: return "memory";
    case Mechanism::ComputeHazard: return "compute-hazard";
    case Mechanism::Compute: return "compute";
    case Mechanism::Precision: return "precision";
    case Mechanism::Scheduling: return "scheduling";
    case Mechanism::None: return "none";
  }
  return "?";
}

MechanismCall classify_mechanism(const std::vector<std::string>& counters,
                                 const std::vector<double>& growth, double window_cycles,
                                 double tolerance) {
  MechanismCall call;
  const size_t n = std::min(counters.size(), growth.size());
  for (const auto& row : kMechanismRules)
    for (size_t c = 0; c < n; ++c)
      if (row.matches(counters[c]))
        call.score[static_cast<int>(row.mechanism)] += row.weight * growth[c];
  const double threshold = tolerance * std::max(1.0, window_cycles);
  // A cause is a class of the engine's own (throttle, memory, bank conflicts, the array,
  // precision). An engine that waits for another (stall_dep, starve, stall_out) is a consequence
  // of the other's cause, so scheduling is the answer only when no cause grew. Ties go to the
  // earlier class of the enum.
  for (int m = 0; m < static_cast<int>(Mechanism::Scheduling); ++m)
    if (call.score[m] > threshold &&
        (call.mechanism == Mechanism::None || call.score[m] > call.score[static_cast<int>(call.mechanism)]))
      call.mechanism = static_cast<Mechanism>(m);
  if (call.mechanism == Mechanism::None &&
      call.score[static_cast<int>(Mechanism::Scheduling)] > threshold)
    call.mechanism = Mechanism::Scheduling;
  // Evidence: the winning class's score and its counters that grew, largest first.
  char buf[96];
  if (call.mechanism == Mechanism::None) {
    std::snprintf(buf, sizeof buf, "no class grew by more than %.0f cycles (%.0f%% of the window)",
                  threshold, tolerance * 100);
    call.evidence = buf;
    return call;
  }
  // In the design's counter order (engine-major on the NPU), so equal growths list stably.
  std::vector<std::pair<double, size_t>> parts;
  for (size_t c = 0; c < n; ++c) {
    if (growth[c] <= 0) continue;
    for (const auto& row : kMechanismRules) {
      if (row.mechanism == call.mechanism && row.weight > 0 && row.matches(counters[c])) {
        parts.push_back({growth[c], c});
        break;
      }
    }
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::snprintf(buf, sizeof buf, "%s: %+.0f", mechanism_name(call.mechanism),
                call.score[static_cast<int>(call.mechanism)]);
  call.evidence = buf;
  for (size_t i = 0; i < parts.size() && i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%s%s %+.0f", i == 0 ? " (" : ", ",
                  counters[parts[i].second].c_str(), parts[i].first);
    call.evidence += buf;
  }
  if (!parts.empty()) call.evidence += ")";
  if (call.mechanism != Mechanism::Scheduling) {
    std::snprintf(buf, sizeof buf, "; scheduling %+.0f (engines waiting on it)",
                  call.score[static_cast<int>(Mechanism::Scheduling)]);
    call.evidence += buf;
  }
  return call;
}

DiffReport bisect_pair(const std::string& good_path, const std::string& bad_path,
                       const DiffOptions& o) {
  DiffReport r;
  Side good, bad;
  if (auto e = good.open(good_path); !e.empty()) return r.message = e, r;
  if (auto e = bad.open(bad_path); !e.empty()) return r.message = e, r;
  if (!o.allow_revision_mismatch &&
      good.packet->header.model_revision() != bad.packet->header.model_revision()) {
    r.message = "the packets come from model revisions " + good.packet->header.model_revision() +
                " and " + bad.packet->header.model_revision() + " (use --allow-revision-mismatch)";
    return r;
  }
  // One workload under two precision assignments: the precision bisect (its results differ by
  // design, so a functional bisect would only find where the first changed layer starts).
  if (good.spec->workload_text == bad.spec->workload_text &&
      good.spec->options.seed == bad.spec->options.seed &&
      good.spec->options.emulator.design == bad.spec->options.emulator.design &&
      good.prepared->precision != bad.prepared->precision) {
    r = precision_report(good.prepared->workload, bad.prepared->workload,
                         good.prepared->program.array, o);
    r.good_cycles = good.packet->result ? good.packet->result->cycles() : good.packet->last_cycle();
    r.bad_cycles = bad.packet->result ? bad.packet->result->cycles() : bad.packet->last_cycle();
    return r;
  }
  r.good_cycles = good.packet->result ? good.packet->result->cycles() : good.packet->last_cycle();
  r.bad_cycles = bad.packet->result ? bad.packet->result->cycles() : bad.packet->last_cycle();
  const bool same_results = good.packet->result && bad.packet->result &&
                            good.packet->result->output_digest() == bad.packet->result->output_digest() &&
                            good.packet->result->passed() == bad.packet->result->passed();

  // 1. The recorded digest streams: last common cycle where they agree, first where they differ.
  std::optional<uint64_t> first_diff;
  uint64_t last_same = 0;
  bool healed = false;
  for (const auto& [cycle, dg] : good.digests) {
    auto it = bad.digests.find(cycle);
    if (it == bad.digests.end()) continue;
    if (it->second != dg) {
      if (!first_diff) first_diff = cycle;
    } else if (first_diff) {
      healed = true;
    } else {
      last_same = cycle;
    }
  }
  if (!first_diff && r.good_cycles == r.bad_cycles && same_results) {
    r.verdict = DiffVerdict::Same;
    r.message = "the runs agree at every recorded digest point (" +
                std::to_string(good.digests.size()) + ") and finish alike";
    return r;
  }

  if (same_results && r.good_cycles != r.bad_cycles) {
    // 2a. Performance: same results, different timing. First window whose counter deltas differ.
    const auto& gw = good.packet->windows;
    const auto& bw = bad.packet->windows;
    const auto& names = good.names;
    const int num = static_cast<int>(names.size());
    if (bad.names != names) {
      r.verdict = DiffVerdict::Error;
      r.message = "the packets come from designs with different counters (" +
                  good.packet->header.design() + ", " + bad.packet->header.design() + ")";
      return r;
    }
    std::vector<uint64_t> prev_g(names.size(), 0), prev_b(names.size(), 0);
    std::vector<double> growth(names.size());
    for (size_t w = 0; w < std::min(gw.size(), bw.size()); ++w) {
      if (gw[w].counters_size() < num || bw[w].counters_size() < num) break;
      std::fill(growth.begin(), growth.end(), 0.0);
      std::vector<std::string> evidence;
      bool differs = false;
      const double len = static_cast<double>(gw[w].end_cycle() - gw[w].start_cycle());
      for (int c = 0; c < num; ++c) {
        if (!good.counters.has(c) || !bad.counters.has(c)) continue;  // one side predates it
        const double dg = static_cast<double>(gw[w].counters(c) - prev_g[c]);
        const double db = static_cast<double>(bw[w].counters(c) - prev_b[c]);
        growth[c] = db - dg;
        const double change = (db - dg) / std::max(1.0, len);
        if (std::fabs(change) > o.tolerance && names[c] != "cycles") {
          differs = true;
          char buf[128];
          std::snprintf(buf, sizeof buf, "%s: %+.0f per window (good %.0f, bad %.0f)",
                        names[c].c_str(), db - dg, dg, db);
          evidence.push_back(buf);
        }
        prev_g[c] = gw[w].counters(c);
        prev_b[c] = bw[w].counters(c);
      }
      if (differs) {
        r.verdict = DiffVerdict::Performance;
        r.window_start = gw[w].start_cycle();
        r.window_end = gw[w].end_cycle();
        const MechanismCall call = classify_mechanism(names, growth, len, o.tolerance);
        r.mechanism = call.mechanism;
        evidence.insert(evidence.begin(), call.evidence);
        r.evidence = evidence;
        r.message = "same results, " + std::to_string(r.bad_cycles) + " vs " +
                    std::to_string(r.good_cycles) + " cycles; counters first part in window [" +
                    std::to_string(*r.window_start) + ", " + std::to_string(*r.window_end) +
                    "): mechanism " + mechanism_name(call.mechanism);
        return r;
      }
    }
    r.verdict = DiffVerdict::Performance;
    r.message = "same results, different cycle counts, but no window's counters differ beyond the tolerance";
    return r;
  }

  // 2b. Functional: find the exact first cycle, from the last agreeing digest point.
  const uint64_t from = last_same;
  const uint64_t to = first_diff.value_or(std::min(r.good_cycles, r.bad_cycles));
  if (auto e = good.seek(from, r.resimulated_cycles); !e.empty()) return r.message = e, r;
  if (auto e = bad.seek(from, r.resimulated_cycles); !e.empty()) return r.message = e, r;
  uint64_t cycle = from;
  // Lockstep, one cycle at a time: the digests are compared after every edge. One driver per
  // run for the whole walk.
  drive::Driver good_driver(*good.emu), bad_driver(*bad.emu);
  while (cycle < to && good.emu->digest() == bad.emu->digest()) {
    good_driver.run_until(good.emu->cycle() + 1);
    bad_driver.run_until(bad.emu->cycle() + 1);
    r.resimulated_cycles += 2;
    ++cycle;
    if (good.emu->state() != emu::RunState::Ready && bad.emu->state() != emu::RunState::Ready) break;
  }
  r.verdict = DiffVerdict::Diverged;
  r.first_divergence_cycle = cycle;
  r.persistent = !healed;
  compare_state(*good.emu, *bad.emu, r.differences);
  r.message = "the runs' states first differ at cycle " + std::to_string(cycle) +
              (r.persistent ? " and stay different" : " (they agree again later: transient)");
  return r;
}

std::string DiffReport::text() const {
  std::string s = std::string("verdict    ") + diff_verdict_name(verdict) +
                  (message.empty() ? "" : ": " + message) + "\n";
  if (first_divergence_cycle) s += "cycle      " + std::to_string(*first_divergence_cycle) + "\n";
  if (!differences.empty()) {
    s += "first differences (good -> bad)\n";
    for (const auto& d : differences) s += "  " + d.element + ": " + d.good + " -> " + d.bad + "\n";
  }
  if (mechanism) s += "mechanism  " + std::string(mechanism_name(*mechanism)) + "\n";
  for (const auto& e : evidence) s += "  " + e + "\n";
  if (precision) s += precision->text();
  if (good_cycles || bad_cycles)  // (the precision bisect of two assignments runs nothing)
    s += "cycles     good " + std::to_string(good_cycles) + ", bad " + std::to_string(bad_cycles) +
         "; re-simulated " + std::to_string(resimulated_cycles) + "\n";
  return s;
}

json::Json DiffReport::to_json() const {
  json::Json j = json::Json::object();
  j["verdict"] = diff_verdict_name(verdict);
  j["message"] = message;
  j["first_divergence_cycle"] =
      first_divergence_cycle ? json::Json(*first_divergence_cycle) : json::Json();
  j["persistent"] = persistent;
  json::Json d = json::Json::array();
  for (const auto& x : differences) {
    json::Json e = json::Json::object();
    e["element"] = x.element;
    e["good"] = x.good;
    e["bad"] = x.bad;
    d.push_back(e);
  }
  j["differences"] = d;
  j["window_start"] = window_start ? json::Json(*window_start) : json::Json();
  j["window_end"] = window_end ? json::Json(*window_end) : json::Json();
  j["mechanism"] = mechanism ? json::Json(mechanism_name(*mechanism)) : json::Json();
  json::Json ev = json::Json::array();
  for (const auto& e : evidence) ev.push_back(e);
  j["evidence"] = ev;
  j["good_cycles"] = good_cycles;
  j["bad_cycles"] = bad_cycles;
  j["resimulated_cycles"] = resimulated_cycles;
  j["precision"] = precision ? precision->to_json() : json::Json();
  return j;
}

const char* diff_verdict_name(DiffVerdict v) {
  switch (v) {
    case DiffVerdict::Same: return "same";
    case DiffVerdict::Diverged: return "diverged";
    case DiffVerdict::Performance: return "performance";
    case DiffVerdict::Quality: return "quality";
    case DiffVerdict::Error: return "error";
  }
  return "?";
}

}  // namespace bud::debugger
