#include "debugger/bisect/DiffBisector.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "emu/isa/Isa.h"
#include "emu/npu/NpuEmulator.h"
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
  std::unique_ptr<emu::NpuEmulator> emu;
  std::map<uint64_t, uint64_t> digests;  ///< recorded digest stream
  replay::CounterMap counters;           ///< which of this build's counters the packet recorded

  std::string open(const std::string& p) {
    path = p;
    std::string error;
    packet = replay::read_packet(p, error);
    if (!packet) return error;
    counters = replay::to_current_counters(*packet);  // by name: packets of any counter list
    auto s = replay::spec_from_header(packet->header);
    if (!s) return p + ": " + s.error();
    spec = std::move(s).value();
    auto pr = replay::prepare_spec(*spec, false);
    if (!pr) return p + ": " + pr.error();
    prepared = std::move(pr).value();
    for (const auto& w : packet->windows)
      for (const auto& d : w.digests()) digests[d.cycle()] = d.digest();
    return {};
  }

  /// Positions the emulator at `cycle` from the latest checkpoint at or before it.
  std::string seek(uint64_t cycle, uint64_t& resimulated) {
    emu = std::make_unique<emu::NpuEmulator>(spec->options.npu);
    if (auto e = run::start(*prepared, spec->options, *emu, emu.get()); !e.empty()) return e;
    if (auto ck = packet->checkpoint_at_or_before(cycle)) {
      std::string error;
      auto state = packet->checkpoint_state(*ck, error);
      if (!state || !emu->restore(*state, error)) return path + ": " + error;
    }
    if (cycle > emu->cycle()) {
      resimulated += cycle - emu->cycle();
      emu->step(cycle - emu->cycle());
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

/// Mechanism classes of the counter taxonomy (docs/counters.md).
const char* mechanism_of(int counter) {
  if (counter < isa::kNumEngines * isa::kNumClasses) {
    switch (static_cast<isa::CycleClass>(counter % isa::kNumClasses)) {
      case isa::CycleClass::StallMem: return "memory";
      case isa::CycleClass::StallDep:
      case isa::CycleClass::Starve:
      case isa::CycleClass::StallOut: return "scheduling";
      case isa::CycleClass::Throttled: return "thermal";
      case isa::CycleClass::Active: return "compute";
      default: return nullptr;
    }
  }
  const auto c = static_cast<isa::Counter>(counter);
  if (c == isa::Counter::Saturations) return "precision";
  if (c == isa::Counter::DramRdLatencySum || (c >= isa::Counter::BankConflictsInp &&
                                              c <= isa::Counter::BankConflictsOut))
    return "memory";
  return nullptr;
}

}  // namespace

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
    r.verdict = "same";
    r.message = "the runs agree at every recorded digest point (" +
                std::to_string(good.digests.size()) + ") and finish alike";
    return r;
  }

  if (same_results && r.good_cycles != r.bad_cycles) {
    // 2a. Performance: same results, different timing. First window whose counter deltas differ.
    const auto& gw = good.packet->windows;
    const auto& bw = bad.packet->windows;
    std::vector<uint64_t> prev_g(isa::kNumCounters, 0), prev_b(isa::kNumCounters, 0);
    for (size_t w = 0; w < std::min(gw.size(), bw.size()); ++w) {
      if (gw[w].counters_size() < isa::kNumCounters || bw[w].counters_size() < isa::kNumCounters)
        break;
      std::map<std::string, double> by_class;
      std::vector<std::string> evidence;
      bool differs = false;
      const double len = static_cast<double>(gw[w].end_cycle() - gw[w].start_cycle());
      for (int c = 0; c < isa::kNumCounters; ++c) {
        if (!good.counters.has(c) || !bad.counters.has(c)) continue;  // one side predates it
        const double dg = static_cast<double>(gw[w].counters(c) - prev_g[c]);
        const double db = static_cast<double>(bw[w].counters(c) - prev_b[c]);
        const double change = (db - dg) / std::max(1.0, len);
        if (std::fabs(change) > o.tolerance && static_cast<isa::Counter>(c) != isa::Counter::Cycles) {
          differs = true;
          if (const char* m = mechanism_of(c); m && db > dg) by_class[m] += db - dg;
          char buf[128];
          std::snprintf(buf, sizeof buf, "%s: %+.0f per window (good %.0f, bad %.0f)",
                        isa::counter_name(c).c_str(), db - dg, dg, db);
          evidence.push_back(buf);
        }
        prev_g[c] = gw[w].counters(c);
        prev_b[c] = bw[w].counters(c);
      }
      if (differs) {
        r.verdict = "performance";
        r.window_start = gw[w].start_cycle();
        r.window_end = gw[w].end_cycle();
        // Classify in the order of the counter taxonomy's causes (docs/counters.md): an explicit
        // clamp first, then the memory system's own latency, precision, the array, and what is
        // left is scheduling/synchronisation.
        auto window_delta = [&](bool bad_side, int c) {
          const auto& win = bad_side ? bw[w] : gw[w];
          const uint64_t before = w == 0 ? 0 : (bad_side ? bw[w - 1] : gw[w - 1]).counters(c);
          return static_cast<double>(win.counters(c) - before);
        };
        double thr_g = 0, thr_b = 0;
        for (int e = 0; e < isa::kNumEngines; ++e) {
          const int c = isa::class_counter(static_cast<isa::Engine>(e), isa::CycleClass::Throttled);
          thr_g += window_delta(false, c);
          thr_b += window_delta(true, c);
        }
        auto mean_latency = [&](bool bad_side) {
          const double reqs = window_delta(bad_side, static_cast<int>(isa::Counter::DramRdReqs));
          return reqs > 0 ? window_delta(bad_side, static_cast<int>(isa::Counter::DramRdLatencySum)) / reqs : 0.0;
        };
        const double lat_g = mean_latency(false), lat_b = mean_latency(true);
        const int sat = static_cast<int>(isa::Counter::Saturations);
        const int gemm_active = isa::class_counter(isa::Engine::Gemm, isa::CycleClass::Active);
        const int useful = static_cast<int>(isa::Counter::MacsUseful);
        const double eff_g = window_delta(false, useful) / std::max(1.0, window_delta(false, gemm_active));
        const double eff_b = window_delta(true, useful) / std::max(1.0, window_delta(true, gemm_active));
        char line[160];
        if (thr_b > thr_g * (1 + o.tolerance) + 1) {
          r.mechanism = "thermal";
          std::snprintf(line, sizeof line, "throttled cycles per window: good %.0f, bad %.0f", thr_g, thr_b);
        } else if (lat_b > lat_g * (1 + o.tolerance)) {
          r.mechanism = "memory";
          std::snprintf(line, sizeof line, "mean DRAM read latency: good %.1f, bad %.1f cycles", lat_g, lat_b);
        } else if (window_delta(true, sat) != window_delta(false, sat)) {
          r.mechanism = "precision";
          std::snprintf(line, sizeof line, "saturations per window: good %.0f, bad %.0f",
                        window_delta(false, sat), window_delta(true, sat));
        } else if (eff_b < eff_g * (1 - o.tolerance)) {
          r.mechanism = "compute";
          std::snprintf(line, sizeof line, "useful MACs per active array cycle: good %.1f, bad %.1f", eff_g, eff_b);
        } else {
          std::string best;
          double most = 0;
          for (const auto& [m, v] : by_class)
            if (v > most) most = v, best = m;
          r.mechanism = best.empty() || best == "compute" ? "scheduling" : best;
          std::snprintf(line, sizeof line, "no memory, thermal, precision or array-efficiency change; largest growth: %s",
                        r.mechanism.c_str());
        }
        evidence.insert(evidence.begin(), line);
        r.evidence = evidence;
        r.message = "same results, " + std::to_string(r.bad_cycles) + " vs " +
                    std::to_string(r.good_cycles) + " cycles; counters first part in window [" +
                    std::to_string(*r.window_start) + ", " + std::to_string(*r.window_end) +
                    "): mechanism " + r.mechanism;
        return r;
      }
    }
    r.verdict = "performance";
    r.message = "same results, different cycle counts, but no window's counters differ beyond the tolerance";
    return r;
  }

  // 2b. Functional: find the exact first cycle, from the last agreeing digest point.
  const uint64_t from = last_same;
  const uint64_t to = first_diff.value_or(std::min(r.good_cycles, r.bad_cycles));
  if (auto e = good.seek(from, r.resimulated_cycles); !e.empty()) return r.message = e, r;
  if (auto e = bad.seek(from, r.resimulated_cycles); !e.empty()) return r.message = e, r;
  uint64_t cycle = from;
  while (cycle < to && good.emu->digest() == bad.emu->digest()) {
    good.emu->step(1);
    bad.emu->step(1);
    r.resimulated_cycles += 2;
    ++cycle;
    if (good.emu->state() != emu::RunState::Ready && bad.emu->state() != emu::RunState::Ready) break;
  }
  r.verdict = "diverged";
  r.first_divergence_cycle = cycle;
  r.persistent = !healed;
  compare_state(*good.emu, *bad.emu, r.differences);
  r.message = "the runs' states first differ at cycle " + std::to_string(cycle) +
              (r.persistent ? " and stay different" : " (they agree again later: transient)");
  return r;
}

std::string DiffReport::text() const {
  std::string s = "verdict    " + verdict + (message.empty() ? "" : ": " + message) + "\n";
  if (first_divergence_cycle) s += "cycle      " + std::to_string(*first_divergence_cycle) + "\n";
  if (!differences.empty()) {
    s += "first differences (good -> bad)\n";
    for (const auto& d : differences) s += "  " + d.element + ": " + d.good + " -> " + d.bad + "\n";
  }
  if (!mechanism.empty()) s += "mechanism  " + mechanism + "\n";
  for (const auto& e : evidence) s += "  " + e + "\n";
  s += "cycles     good " + std::to_string(good_cycles) + ", bad " + std::to_string(bad_cycles) +
       "; re-simulated " + std::to_string(resimulated_cycles) + "\n";
  return s;
}

json::Json DiffReport::to_json() const {
  json::Json j = json::Json::object();
  j["verdict"] = verdict;
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
  j["mechanism"] = mechanism;
  json::Json ev = json::Json::array();
  for (const auto& e : evidence) ev.push_back(e);
  j["evidence"] = ev;
  j["good_cycles"] = good_cycles;
  j["bad_cycles"] = bad_cycles;
  j["resimulated_cycles"] = resimulated_cycles;
  return j;
}

}  // namespace bud::debugger
