// JSON for --json output (run reports, debugger results, bisect reports): nlohmann's
// ordered_json, so objects keep insertion order and output stays stable and diffable.
// Render with dump(-1, ' ', false, Json::error_handler_t::replace): strings that are not UTF-8
// (file names are bytes) then come out with U+FFFD instead of throwing.
#pragma once

#include <nlohmann/json.hpp>

namespace bud::json {

/// An ordered JSON value (nlohmann::ordered_json).
using Json = nlohmann::ordered_json;

}  // namespace bud::json
