// `bud bisect P.bpk` on a design packet (docs/designs.md, "Bisecting a design packet"): the
// packet's files are materialised, its run is replayed first (a packet that does not reproduce
// bit for bit is not bisected: one that passes is reported as such, one that diverges or cannot
// be used is an error), then the recorded ("bad") design, with its recorded overrides and seed,
// is compared with the good side (design/GoodSide.h) stage by stage (design/DesignBisect.h).
#pragma once

#include <optional>
#include <string>

#include "design/DesignBisect.h"
#include "design/GoodSide.h"
#include "replay/PacketReader.h"
#include "replay/Replayer.h"

namespace bud::design {

/// What bisect concluded, as `bud bisect`'s verdicts for NPU packets (docs/cli.md).
enum class PacketBisectVerdict : uint8_t {
  Fail,   ///< a stage differs, or the runs end differently (exit 1)
  Pass,   ///< the packet's run passes, or no stage differs and the runs end alike (exit 0)
  Error,  ///< the packet, or the good side, cannot be used (exit 125, 2 or a design exit code)
};
/// "fail", "pass", "error".
const char* packet_bisect_verdict_name(PacketBisectVerdict v);

struct PacketBisectOptions {
  std::string cache_dir;  ///< models and materialised files (empty: the default)
  bool allow_revision_mismatch = false;
  GoodSideRequest good;
};

struct PacketBisectResult {
  PacketBisectVerdict verdict = PacketBisectVerdict::Error;
  int exit_code = 125;
  std::string message;  ///< one line: the verdict, or what is wrong
  std::string packet, design;
  std::string overrides;  ///< the recorded --define/--param ("" without)
  uint64_t seed = 1;
  std::optional<replay::pb::Symptom> symptom;  ///< what the packet recorded
  /// The reproduction check (bud replay's verdict and message); Incompatible when not reached.
  replay::Verdict replay = replay::Verdict::Incompatible;
  std::string replay_message;
  std::optional<GoodSide> good;
  std::string bad_revision;
  std::optional<BisectOutcome> outcome;  ///< set when both sides ran
};

/// Bisects `packet` (a design packet: Header.design_run).
PacketBisectResult bisect_design_packet(const replay::Packet& packet,
                                        const PacketBisectOptions& options);

}  // namespace bud::design
