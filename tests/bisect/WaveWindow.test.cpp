// `bud bisect --wave`: the waveform window is right from its first cycle. Every signal of the FST
// bisect writes (packet and live, several faults and windows) is compared, at every cycle of the
// window, with the FST of the same window written by a fresh emulator run from reset to the
// window's start; and every debug-visible signal is compared with the emulator's own read at
// that cycle (what `bud debug` prints after `goto C`) at a sample of cycles including the first.
#include <map>
#include <sstream>

#include "BisectTestSupport.h"
#include "emu/npu/NpuEmulator.h"

using namespace bud;

namespace {

/// A VCD as fst2vcd writes it: per signal (full dotted name, "[i]" for array words), its value
/// changes in time order.
struct Vcd {
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> changes;
  uint64_t first = UINT64_MAX, last = 0;

  /// The value at `time` ("" before the first change).
  std::string at(const std::string& name, uint64_t time) const {
    const auto it = changes.find(name);
    if (it == changes.end()) return "<absent>";
    std::string v;
    for (const auto& [t, val] : it->second) {
      if (t > time) break;
      v = val;
    }
    return v;
  }
};

Vcd read_vcd(const std::string& fst) {
  const std::string vcd = fst + ".vcd";
  const std::string cmd = "fst2vcd " + test::q(fst) + " > " + test::q(vcd) + " 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::istringstream in(test::slurp(vcd));
  Vcd v;
  std::vector<std::string> scope;
  std::map<std::string, std::vector<std::string>> by_code;  // one code may name several signals
  std::string line;
  uint64_t now = 0;
  bool defs = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (defs) {
      std::istringstream w(line);
      std::string tok;
      w >> tok;
      if (tok == "$scope") {
        std::string kind, name;
        w >> kind >> name;
        scope.push_back(name);
      } else if (tok == "$upscope") {
        scope.pop_back();
      } else if (tok == "$var") {
        std::string type, width, code, name, index;
        w >> type >> width >> code >> name >> index;
        std::string full;
        for (const auto& s : scope) full += s + ".";
        full += name;
        // "accum[3]" names an array word; a trailing "[31:0]" is only the bit range.
        if (!index.empty() && index != "$end" && index.find(':') == std::string::npos) full += index;
        by_code[code].push_back(full);
      } else if (tok == "$enddefinitions") {
        defs = false;
      }
      continue;
    }
    if (line[0] == '#') {
      now = std::stoull(line.substr(1));
      v.first = std::min(v.first, now);
      v.last = std::max(v.last, now);
      continue;
    }
    if (line[0] == '$') continue;  // $dumpvars / $end
    std::string value, code;
    if (line[0] == 'b' || line[0] == 'r') {
      const auto sp = line.find(' ');
      value = line.substr(1, sp - 1);
      code = line.substr(sp + 1);
    } else {
      value = line.substr(0, 1);
      code = line.substr(1);
    }
    // Leading zeros are not significant in VCD vectors.
    const auto nz = value.find_first_not_of('0');
    value = nz == std::string::npos ? "0" : value.substr(nz);
    for (const auto& name : by_code[code]) v.changes[name].push_back({now, value});
  }
  std::remove(vcd.c_str());
  return v;
}

/// Binary text of a signal value's low `width` bits, without leading zeros (as in read_vcd).
std::string binary(const emu::SignalValue& v, uint32_t width) {
  std::string s;
  for (uint32_t b = width; b-- > 0;) s += ((v.words[b / 64] >> (b % 64)) & 1) ? '1' : '0';
  const auto nz = s.find_first_not_of('0');
  return nz == std::string::npos ? "0" : s.substr(nz);
}

/// The FST of cycles [from, to] written by a fresh emulator run from reset.
std::string reference_wave(const run::RunOptions& options, uint64_t from, uint64_t to,
                           const std::string& path) {
  auto prepared = run::prepare(options);
  REQUIRE(prepared);
  emu::NpuEmulator emu(options.emulator);
  REQUIRE(run::start(*prepared, options, emu).empty());
  emu.step(from);
  REQUIRE(emu.cycle() == from);
  REQUIRE(emu.wave_open(path).empty());
  emu.step(to - from);
  emu.wave_close();
  return path;
}

/// The FST's leaf name of a debug-visible signal ("compute.accum" -> "accum" in scope
/// "...u_compute"), found by suffix; empty when the FST names it otherwise.
std::string fst_name(const Vcd& v, const std::string& debug_name, uint32_t element,
                     uint32_t elements) {
  const auto dot = debug_name.rfind('.');
  const std::string unit = dot == std::string::npos ? "" : debug_name.substr(0, dot);
  const std::string leaf = dot == std::string::npos ? debug_name : debug_name.substr(dot + 1);
  std::string want = leaf + (elements > 1 ? "[" + std::to_string(element) + "]" : "");
  std::string found;
  for (const auto& [name, _] : v.changes) {
    const bool leaf_ok = name.size() > want.size() &&
                         name.compare(name.size() - want.size(), want.size(), want) == 0 &&
                         name[name.size() - want.size() - 1] == '.';
    if (!leaf_ok) continue;
    if (!unit.empty() && name.find("u_" + unit + ".") == std::string::npos &&
        name.find("." + unit + ".") == std::string::npos)
      continue;
    if (!found.empty()) return "";  // ambiguous
    found = name;
  }
  return found;
}

}  // namespace

TEST_CASE("bisect --wave windows equal a fresh run's, every signal from the first cycle",
          "[bisect][wave]") {
  if (std::system("command -v fst2vcd >/dev/null 2>&1") != 0)
    FAIL("fst2vcd (gtkwave) is not installed; run tools/setup-deps.sh");
  const auto dir = test::temp_dir("wave_window");
  struct Case {
    const char* workload;
    const char* fault;
    uint64_t radius;
    uint32_t checkpoint_interval;
  };
  for (const Case& c : {Case{"gemm_small", "flip:compute.accum[3][5]@700", 60, 0},
                        Case{"gemm_small", "flip:compute.shift[1]@800", 100, 0},
                        Case{"gemm_small", "memflip:dram:0x10000[3]@10", 40, 0},
                        Case{"conv", "flip:compute.accum[0][20]@9000", 80, 4096}}) {
    for (const bool live : {false, true}) {
      DYNAMIC_SECTION(c.workload << " " << c.fault << (live ? " live" : " packet")) {
        const auto options = test::options_with(c.workload, {c.fault});
        const std::string fst = (dir / "bisect.fst").string();
        debugger::BisectOptions bo;
        bo.wave_file = fst;
        bo.wave_radius = c.radius;
        debugger::BisectReport r;
        if (live) {
          r = test::bisect_live(options, bo);
        } else {
          const std::string packet = (dir / "bad.bpk").string();
          replay::RecordConfig rc;
          if (c.checkpoint_interval) {
            rc.digest_interval = 1024;
            rc.checkpoint_interval = c.checkpoint_interval;
          }
          test::record(packet, options, rc);
          r = debugger::bisect_packet(test::read(packet), bo);
        }
        INFO(r.text());
        REQUIRE(r.first_divergence_cycle);
        REQUIRE(r.wave_file == fst);
        const Vcd got = read_vcd(fst);
        const uint64_t from = got.first, to = got.last;
        REQUIRE(from < to);
        CHECK(to - from <= 2 * c.radius);
        const Vcd want = read_vcd(reference_wave(options, from, to, (dir / "ref.fst").string()));
        REQUIRE(want.changes.size() == got.changes.size());
        REQUIRE(want.changes.size() > 100);
        size_t wrong = 0;
        std::string first_wrong;
        for (const auto& [name, _] : want.changes) {
          for (uint64_t t = from; t <= to; ++t) {
            if (want.at(name, t) != got.at(name, t)) {
              if (!wrong++) first_wrong = name + " at cycle " + std::to_string(t) + ": fresh " +
                                          want.at(name, t) + ", bisect " + got.at(name, t);
              break;
            }
          }
        }
        INFO(first_wrong);
        CHECK(wrong == 0);

        // Debug-visible signals against the emulator's read at sampled cycles (`goto C; print`).
        auto prepared = run::prepare(options);
        REQUIRE(prepared);
        emu::NpuEmulator emu(options.emulator);
        REQUIRE(run::start(*prepared, options, emu).empty());
        size_t compared = 0;
        for (uint64_t t : {from, from + 1, from + 2, from + 5, from + 17, from + 33, (from + to) / 2, to}) {
          if (t > to) continue;
          emu.step(t - emu.cycle());
          REQUIRE(emu.cycle() == t);
          const auto& sigs = emu.signals();
          for (emu::SignalId id = 0; id < sigs.size(); ++id) {
            // pmu.<counter> are views of pmu.cnt[<index>] (compared as pmu.cnt); the RTL's
            // own wires of the same leaf name are other signals.
            if (sigs[id].name.rfind("pmu.", 0) == 0 && sigs[id].name != "pmu.cnt") continue;
            for (uint32_t e = 0; e < sigs[id].elements && e < 64; ++e) {
              const std::string name = fst_name(got, sigs[id].name, e, sigs[id].elements);
              if (name.empty()) continue;
              ++compared;
              INFO(sigs[id].name << "[" << e << "] = " << name << " at cycle " << t);
              CHECK(got.at(name, t) == binary(emu.read_signal(id, e), sigs[id].width));
            }
          }
        }
        CHECK(compared > 50);
      }
    }
  }
}
