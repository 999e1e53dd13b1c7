// The good side of a design packet as `bud bisect P.bpk` and `bud minimize P.bpk` take it
// (--good, --good-define, --good-param, --design-cache; design/GoodSide.h) and show it in JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "design/GoodSide.h"
#include "replay/PacketReader.h"

namespace bud::cli {

struct GoodSideArgs {
  std::string packet;                        ///< --good G.bpk
  std::vector<std::string> defines, params;  ///< --good-define, --good-param
  std::string cache_dir;                     ///< --design-cache
};

/// The request `args` make; --good is read into `storage` (which must outlive the request).
/// "" or the error reading --good (the command's exit 125).
std::string good_side_request(const GoodSideArgs& args, std::optional<replay::Packet>& storage,
                              design::GoodSideRequest& request);
/// {kind, description, packet (null unless --good), defines, params}.
json::Json good_side_json(const design::GoodSide& good);

}  // namespace bud::cli
