#include "debugger/bisect/BisectReport.h"

#include <cstdio>

namespace bud::debugger {

std::string BisectReport::text() const {
  std::string s;
  s += std::string("verdict    ") + bisect_verdict_name(verdict) +
       (message.empty() ? "" : ": " + message) + "\n";
  if (first_failing_stage)
    s += std::string("first failing stage  ") + rung_name(*first_failing_stage) + "\n";
  if (first_divergence_cycle) s += "cycle      " + std::to_string(*first_divergence_cycle) + "\n";
  if (command_index)
    s += "command    " + command +
         (layer.empty() ? "" : "  [layer " + layer + "]") + "\n";
  if (!element.empty()) s += "element    " + element + "\n";
  if (!expected.empty() || !actual.empty())
    s += "expected   " + expected + "\nactual     " + actual + "\n";
  if (!downstream_stages.empty()) {
    s += "downstream ";
    for (size_t i = 0; i < downstream_stages.size(); ++i)
      s += std::string(i ? ", " : "") + rung_name(downstream_stages[i]);
    s += "\n";
  }
  if (verdict == BisectVerdict::Fail) s += std::string("persistent ") + (persistent ? "yes" : "no") + "\n";
  for (const auto& t : transients)
    s += std::string("transient  ") + emu::stage_name(t.stage) + " at cycle " + std::to_string(t.cycle) + ": " + t.detail + "\n";
  if (!symptom.empty()) s += "symptom    " + symptom + "\n";
  s += "cost       re-simulated " + std::to_string(resimulated_cycles) + " of " +
       std::to_string(run_cycles) + " cycles";
  if (run_cycles) {
    char b[32];
    std::snprintf(b, sizeof b, " (%.3f)", static_cast<double>(resimulated_cycles) / run_cycles);
    s += b;
  }
  if (windows_checked) s += "; " + std::to_string(windows_checked) + " recorded windows checked without simulating";
  s += "\n";
  if (!wave_file.empty()) s += "waveform   " + wave_file + "\n";
  s += "ladder\n";
  for (const auto& l : ladder) s += "  " + l + "\n";
  return s;
}

json::Json BisectReport::to_json() const {
  json::Json j = json::Json::object();
  j["verdict"] = bisect_verdict_name(verdict);
  j["message"] = message;
  j["first_failing_stage"] =
      first_failing_stage ? json::Json(rung_name(*first_failing_stage)) : json::Json();
  j["first_divergence_cycle"] =
      first_divergence_cycle ? json::Json(*first_divergence_cycle) : json::Json();
  j["persistent"] = persistent;
  j["command_index"] =
      command_index ? json::Json(static_cast<uint64_t>(*command_index)) : json::Json();
  j["command"] = command;
  j["layer"] = layer;
  j["element"] = element;
  j["expected"] = expected;
  j["actual"] = actual;
  j["divergence_kind"] = divergence_kind ? Divergence::kind_name(*divergence_kind) : "";
  json::Json ds = json::Json::array();
  for (const auto& d : downstream_stages) ds.push_back(rung_name(d));
  j["downstream_stages"] = ds;
  json::Json ts = json::Json::array();
  for (const auto& t : transients) {
    json::Json x = json::Json::object();
    x["stage"] = emu::stage_name(t.stage);
    x["cycle"] = t.cycle;
    x["detail"] = t.detail;
    ts.push_back(x);
  }
  j["transients"] = ts;
  j["symptom"] = symptom;
  j["run_cycles"] = run_cycles;
  j["resimulated_cycles"] = resimulated_cycles;
  j["resimulated_fraction"] =
      run_cycles ? static_cast<double>(resimulated_cycles) / static_cast<double>(run_cycles) : 0.0;
  j["windows_checked"] = windows_checked;
  j["wave_file"] = wave_file.empty() ? json::Json() : json::Json(wave_file);
  json::Json l = json::Json::array();
  for (const auto& x : ladder) l.push_back(x);
  j["ladder"] = l;
  return j;
}

const char* bisect_verdict_name(BisectVerdict v) {
  switch (v) {
    case BisectVerdict::Fail: return "fail";
    case BisectVerdict::Pass: return "pass";
    case BisectVerdict::Transient: return "transient";
    case BisectVerdict::Error: return "error";
  }
  return "?";
}

const char* rung_name(Rung r) {
  switch (r) {
    case Rung::Ingress: return "ingress";
    case Rung::Lowering: return "lowering";
    case Rung::Result: return "result";
    default:
      return emu::stage_name(
          static_cast<emu::Stage>(static_cast<int>(r) - static_cast<int>(Rung::Fetch)));
  }
}

Rung rung_of(emu::Stage s) {
  return static_cast<Rung>(static_cast<int>(Rung::Fetch) + static_cast<int>(s));
}

const char* failure_kind_name(FailureKind k) {
  switch (k) {
    case FailureKind::None: return "none";
    case FailureKind::Mismatch: return "mismatch";
    case FailureKind::Assertion: return "assertion";
    case FailureKind::Hang: return "hang";
    case FailureKind::Error: return "error";
  }
  return "?";
}

FailureKind failure_kind_of(emu::RunState state) {
  switch (state) {
    case emu::RunState::Assertion: return FailureKind::Assertion;
    case emu::RunState::Hang: return FailureKind::Hang;
    case emu::RunState::Error: return FailureKind::Error;
    default: return FailureKind::Mismatch;
  }
}


}  // namespace bud::debugger
