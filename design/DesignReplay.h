// Replays a design packet (design/DesignPacket.h) from its embedded files alone: they are written
// into a private directory of the design cache, the design file is read from there with the
// recorded --define/--param, its revision is checked against the recorded one, the model is built
// (or found in the cache) and the run is made again with the recorded seed and limits and
// checked against the recorded reference output. Then every recorded digest must come back bit
// for bit: cycles, the final state digest, each stage's transaction count and digest, each sink's
// bytes and the checked bytes. Verdicts and exit codes are those of `bud replay` for NPU packets
// (replay/Replayer.h): reproduced (1), passed (0), diverged or incompatible (125), and with
// --allow-revision-mismatch also fixed (0) and new-symptom (1).
#pragma once

#include <optional>
#include <string>

#include "design/DesignPacket.h"
#include "design/OpenedPacket.h"
#include "replay/PacketReader.h"
#include "replay/Replayer.h"

namespace bud::design {

/// Replays `packet`, whose header has a design_run (models are cached in `cache_dir`, empty: the
/// default). Every refusal (incomplete or corrupt packet, unusable files, another revision) is
/// an Incompatible outcome whose message names the packet and what is wrong.
replay::ReplayOutcome replay_design_packet(const replay::Packet& packet,
                                           const replay::ReplayOptions& options,
                                           const std::string& cache_dir = {});

/// A design packet opened and replayed before a command localises or shrinks its failure (`bud
/// bisect`, `bud minimize`): what is worked on is the failure the packet recorded, reproduced.
struct Reproduction {
  std::optional<OpenedPacket> opened;  ///< set unless the packet is incomplete or unusable
  replay::ReplayOutcome replay;
  /// Reproduced (or, with --allow-revision-mismatch, a new symptom): the command goes on.
  bool fails = false;
  bool passes = false;  ///< passed, or fixed: nothing to work on
  std::string message;  ///< when not `fails`: why (the packet, and the replay's verdict)
};
/// Opens and replays `packet` for `command` ("bisect", "minimize": named in the messages).
Reproduction reproduce(const replay::Packet& packet, const std::string& cache_dir,
                       bool allow_revision_mismatch, const std::string& command);

}  // namespace bud::design
