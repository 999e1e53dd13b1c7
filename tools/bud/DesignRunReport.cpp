#include "tools/bud/DesignRunReport.h"

#include <cstdarg>
#include <cstdio>

namespace bud::cli {

namespace {

__attribute__((format(printf, 2, 3))) void append(std::string& out, const char* fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0) out.append(line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
}

}  // namespace

int design_run_exit_code(const design::RunOutcome& r) {
  if (r.error) return r.error->exit_code;
  if (r.cycle_limit) return 3;
  return r.checked && !r.passed ? 1 : 0;
}

Json design_run_json(const design::RunOutcome& r, uint64_t seed, const std::string& command) {
  Json j = r.error ? error_json(command, r.error->exit_code, r.error->to_string()) : Json::object();
  j["design"] = r.design;
  j["revision"] = r.revision;
  j["seed"] = seed;
  j["cycles"] = r.cycles;
  j["state"] = r.error ? "error" : r.cycle_limit ? "cycle_limit" : "finished";
  j["checked"] = r.checked;
  j["passed"] = r.checked && r.passed;
  if (r.first_mismatch) j["first_mismatch_byte"] = *r.first_mismatch;
  j["message"] = r.message;
  Json streams = Json::array();
  for (const auto& s : r.streams) {
    Json x = Json::object();
    x["name"] = s.name;
    x["beats"] = s.beats;
    x["bytes"] = s.source ? s.sent : s.bytes.size();
    streams.push_back(x);
  }
  j["streams"] = streams;
  Json counters = Json::object();
  for (const auto& [n, v] : r.counters) counters[n] = v;
  j["counters"] = counters;
  Json stages = Json::array();
  for (const auto& s : r.stages) {
    Json x = Json::object();
    x["name"] = s.name;
    x["transactions"] = s.txns;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(s.digest));
    x["digest"] = hex;
    stages.push_back(x);
  }
  j["stages"] = stages;
  Json mems = Json::array();
  for (const auto& m : r.memories) {
    Json x = Json::object();
    x["port"] = m.port;
    x["region"] = m.region;
    x["read_bursts"] = m.stats.read_bursts;
    x["write_bursts"] = m.stats.write_bursts;
    x["bytes_read"] = m.stats.bytes_read;
    x["bytes_written"] = m.stats.bytes_written;
    x["read_latency_mean"] =
        m.stats.read_bursts ? double(m.stats.read_latency_sum) / double(m.stats.read_bursts) : 0.0;
    x["read_latency_max"] = m.stats.read_latency_max;
    mems.push_back(x);
  }
  j["memories"] = mems;
  if (r.has_firmware) j["firmware_accesses"] = r.firmware_accesses;
  return j;
}

std::string design_run_text(const design::RunOutcome& r, uint64_t seed) {
  std::string out;
  append(out, "design     %s (revision %s, seed %llu)\ncycles     %llu\n", r.design.c_str(),
         r.revision.c_str(), static_cast<unsigned long long>(seed),
         static_cast<unsigned long long>(r.cycles));
  for (const auto& s : r.streams)
    append(out, "stream     %-12s %llu beats, %zu bytes\n", s.name.c_str(),
           static_cast<unsigned long long>(s.beats), s.source ? s.sent : s.bytes.size());
  for (const auto& [n, v] : r.counters)
    append(out, "counter    %-18s %llu\n", n.c_str(), static_cast<unsigned long long>(v));
  for (size_t i = 0; i < r.stages.size(); ++i)
    append(out, "stage %zu    %-12s %llu transactions (cycles %llu..%llu) digest %016llx\n", i,
           r.stages[i].name.c_str(), static_cast<unsigned long long>(r.stages[i].txns),
           static_cast<unsigned long long>(r.stages[i].first_cycle),
           static_cast<unsigned long long>(r.stages[i].last_cycle),
           static_cast<unsigned long long>(r.stages[i].digest));
  for (const auto& m : r.memories)
    append(
        out,
        "memory     %-12s via %s: %llu read bursts (%llu bytes, latency mean %.1f max %llu), "
        "%llu write bursts (%llu bytes)\n",
        m.region.c_str(), m.port.c_str(), static_cast<unsigned long long>(m.stats.read_bursts),
        static_cast<unsigned long long>(m.stats.bytes_read),
        m.stats.read_bursts ? double(m.stats.read_latency_sum) / double(m.stats.read_bursts) : 0.0,
        static_cast<unsigned long long>(m.stats.read_latency_max),
        static_cast<unsigned long long>(m.stats.write_bursts),
        static_cast<unsigned long long>(m.stats.bytes_written));
  if (r.has_firmware)
    append(out, "firmware   %llu control-port accesses\n",
           static_cast<unsigned long long>(r.firmware_accesses));
  out += "result     " + r.message + "\n";
  return out;
}

}  // namespace bud::cli
