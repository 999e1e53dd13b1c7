// Rendering of trigger results for people and tools: every hit (cycle, trigger, state path,
// values at the hit, files captured) and coverage (which triggers and conditions fired vs armed).
#pragma once

#include <string>

#include "debugger/json/Json.h"
#include "debugger/trigger/TriggerEngine.h"

namespace bud::debugger {

/// The hits and the coverage as text lines (a section of the run report).
std::string trigger_report_text(TriggerEngine& engine);
/// {"hits": [...], "coverage": [...], "dropped_hits": N, "history": {...}}
json::Json trigger_report_json(TriggerEngine& engine);
/// One hit as one line: "cycle 1234: mem_burst hit 1 (armed) rate(...) > 0.7 -> capture ...".
std::string describe_hit(const TriggerHit& hit);
/// JSON of one hit.
json::Json hit_json(const TriggerHit& hit);

}  // namespace bud::debugger
