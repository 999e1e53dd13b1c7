// The intervention plan of `bud serve-load --sweep` and `bud profile --sweep` rendered for the
// user (docs/serving.md, "The intervention plan"): JSON for tools and the ranked text table, each
// change against the baseline (before/after).
#pragma once

#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "load/Sweep.h"
#include "tools/bud/ServeLoadCommand.h"

namespace bud::cli {

/// The plan as JSON (one object per intervention, best first) and as the text table; each row
/// against the baseline's (before/after).
json::Json interventions_json(const std::vector<load::Intervention>& plan);
std::string interventions_text(const std::vector<load::Intervention>& plan,
                               const load::SweepSpec& spec);

/// The plan of `served` for a report beside another (`bud profile --sweep`): the workload, SLA,
/// arrivals, baseline policy and the interventions, as JSON and as text (the baseline's
/// sustained point, then the ranked table).
json::Json plan_json(const Served& served, const ServeLoadOptions& options);
std::string plan_text(const Served& served, const ServeLoadOptions& options);

}  // namespace bud::cli
