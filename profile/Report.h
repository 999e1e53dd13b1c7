// Rendering of a profile for people (tables) and tools (one JSON object): per layer, per layer
// type, top-down, bottleneck ranking and roofline. The layout is documented in docs/profiling.md.
#pragma once

#include <cstdint>
#include <string>

#include "debugger/json/Json.h"
#include "profile/Profile.h"
#include "profile/Roofline.h"

namespace bud::profile {

/// {"array_macs", "cycles", "layers": [...], "types": [...], "model", "tail", "ranking": [...],
///  "roofline": {...}}.
json::Json profile_json(const Profile& p, const Roofline& roofline);

/// The bottleneck ranking: [{"layer", "lost_cycles", "dominant", "dominant_sub", "rule",
///  "advice", "evidence": {counter: value}}], largest loss first.
json::Json ranking_json(const Profile& p);
/// The ranking as numbered lines; with `details` each layer's advice and evidence too.
std::string ranking_text(const Profile& p, bool details);

/// `v` with thousands separators: "12,345,678".
std::string grouped(uint64_t v);
/// One number through a printf format ("%+.1f%%").
std::string fmt(const char* format, double v);

/// The tables: per layer, per type, top-down (drilled past kDrillThresholdBp), ranking, roofline.
std::string profile_text(const Profile& p, const Roofline& roofline);

}  // namespace bud::profile
