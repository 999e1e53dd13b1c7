#include "tools/bud/DesignBisectReport.h"

#include <cstdarg>
#include <cstdio>

namespace bud::cli {

namespace {

using json::Json;
using ull = unsigned long long;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list a, b;
  va_start(a, fmt);
  va_copy(b, a);
  const int n = std::vsnprintf(nullptr, 0, fmt, a);
  va_end(a);
  std::string s(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  std::vsnprintf(s.data(), s.size() + 1, fmt, b);
  va_end(b);
  return s;
}

}  // namespace

Json design_bisect_json(const design::BisectOutcome& r, const std::string& design, uint64_t seed) {
  Json j = Json::object();
  j["design"] = design;
  j["seed"] = seed;
  j["good"] = {{"revision", r.good_revision}, {"cycles", r.good_cycles}, {"state", r.good_state}};
  j["bad"] = {{"revision", r.bad_revision}, {"cycles", r.bad_cycles}, {"state", r.bad_state}};
  Json stages = Json::array();
  for (const auto& s : r.stages) {
    Json x = Json::object();
    x["name"] = s.name;
    x["good_transactions"] = s.good_txns;
    x["bad_transactions"] = s.bad_txns;
    x["differs"] = s.first_difference.has_value();
    if (s.first_difference) {
      x["first_difference"] = *s.first_difference;
      x["good_cycle"] = s.good_cycle;
      x["bad_cycle"] = s.bad_cycle;
      Json v = Json::array();
      for (const auto& val : s.values)
        v.push_back({{"signal", val.signal}, {"good", val.good}, {"bad", val.bad}});
      x["values"] = v;
    }
    stages.push_back(x);
  }
  j["stages"] = stages;
  if (r.first_failing) j["first_failing_stage"] = r.stages[*r.first_failing].name;
  else j["first_failing_stage"] = nullptr;
  j["persistent"] = r.persistent;
  j["ending_differs"] = r.ending_differs;
  j["simulated_cycles"] = r.simulated_cycles;
  j["message"] = r.message;
  return j;
}

std::string design_bisect_text(const design::BisectOutcome& r, const std::string& good_name,
                               const std::string& bad_name) {
  std::string s;
  s += format("good       %s (revision %s): %llu cycles, %s\n", good_name.c_str(),
              r.good_revision.c_str(), static_cast<ull>(r.good_cycles), r.good_state.c_str());
  s += format("bad        %s (revision %s): %llu cycles, %s\n", bad_name.c_str(),
              r.bad_revision.c_str(), static_cast<ull>(r.bad_cycles), r.bad_state.c_str());
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const auto& st = r.stages[i];
    s += format("stage %zu    %-12s %llu / %llu transactions  ", i, st.name.c_str(),
                static_cast<ull>(st.good_txns), static_cast<ull>(st.bad_txns));
    if (!st.first_difference) {
      s += "same\n";
      continue;
    }
    s += format("differs from #%llu (cycle %llu good, %llu bad)\n",
                static_cast<ull>(*st.first_difference), static_cast<ull>(st.good_cycle),
                static_cast<ull>(st.bad_cycle));
    for (const auto& v : st.values)
      s += format("             %-20s good %s  bad %s\n", v.signal.c_str(), v.good.c_str(),
                  v.bad.c_str());
  }
  s += "result     " + r.message + "\n";
  return s;
}

}  // namespace bud::cli
