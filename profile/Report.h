// Rendering of a profile for people (tables) and tools (one JSON object): per layer, per layer
// type, top-down, bottleneck ranking and roofline. The layout is documented in docs/profiling.md.
#pragma once

#include <string>

#include "debugger/json/Json.h"
#include "profile/Profile.h"
#include "profile/Roofline.h"

namespace bud::profile {

/// {"array_macs", "cycles", "layers": [...], "types": [...], "model", "tail", "ranking": [...],
///  "roofline": {...}}.
json::Json profile_json(const Profile& p, const Roofline& roofline);

/// The tables: per layer, per type, top-down (drilled past kDrillThresholdBp), ranking, roofline.
std::string profile_text(const Profile& p, const Roofline& roofline);

}  // namespace bud::profile
