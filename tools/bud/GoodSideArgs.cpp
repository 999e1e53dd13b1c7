#include "tools/bud/GoodSideArgs.h"

namespace bud::cli {

std::string good_side_request(const GoodSideArgs& args, std::optional<replay::Packet>& storage,
                              design::GoodSideRequest& request) {
  if (!args.packet.empty()) {
    std::string error;
    storage = replay::read_packet(args.packet, error);
    if (!storage) return "--good " + error;
  }
  request.packet = storage ? &*storage : nullptr;
  request.overrides = !args.defines.empty() || !args.params.empty();
  request.defines = args.defines;
  request.params = args.params;
  request.cache_dir = args.cache_dir;
  return {};
}

json::Json good_side_json(const design::GoodSide& g) {
  using json::Json;
  return {{"kind", design::good_kind_name(g.kind)},
          {"description", g.description},
          {"packet", g.packet.empty() ? Json() : Json(g.packet)},
          {"defines", g.defines},
          {"params", g.params}};
}

}  // namespace bud::cli
