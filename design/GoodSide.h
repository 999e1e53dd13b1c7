// The good run a design packet's failure is compared with, by `bud bisect P.bpk` and `bud
// minimize P.bpk` (docs/designs.md, "Bisecting a design packet"). In order of precedence:
//
//   --good G.bpk         another design packet of the same design (same design name and design
//                        file name, same [[stage]] list): its files and its overrides
//   --good-define/-param the packet's own design file with exactly these overrides
//   (default)            the packet's own design file without the overrides it recorded
//
// Whichever it is, the good side runs the bad side's inputs (source streams, memory contents,
// firmware: use_inputs_of), with the packet's seed and limits, so that any difference is the
// design's. A packet recorded without overrides has no default good side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "design/OpenedPacket.h"

namespace bud::design {

struct GoodSideRequest {
  const replay::Packet* packet = nullptr;  ///< --good G.bpk (read); or
  bool overrides = false;                  ///< --good-define/--good-param given:
  std::vector<std::string> defines, params;
  std::string cache_dir;  ///< where G's files are materialised
};

enum class GoodKind : uint8_t {
  Packet,     ///< --good G.bpk
  Overrides,  ///< the packet's design with --good-define/--good-param
  Unchanged,  ///< the packet's design without its recorded overrides
};
/// "packet", "overrides", "unchanged" (the `good_side.kind` of the commands' JSON).
const char* good_kind_name(GoodKind k);

struct GoodSide {
  GoodKind kind = GoodKind::Unchanged;
  DesignSpec spec;  ///< overridden, its inputs the bad side's
  std::vector<std::string> defines, params;  ///< the good side's overrides
  std::string packet;                        ///< with GoodKind::Packet: its name
  std::string description;                   ///< one phrase, for the reports
};

/// The good side of `bad` (whose recorded spec is `bad_spec`). nullopt and `error` (exit 2,
/// kExitBadDesignFile) when there is none to take (no overrides recorded and none asked for),
/// when --good is not a design packet, is one of another design or with other [[stage]]s
/// (naming both), or when the good design file or overrides do not read; exit 125 when --good's
/// files are corrupt.
std::optional<GoodSide> good_side(const OpenedPacket& bad, const DesignSpec& bad_spec,
                                  const GoodSideRequest& request, DesignError& error);

}  // namespace bud::design
