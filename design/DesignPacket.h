// A design run as a self-contained replay packet (docs/designs.md, "Recording and replaying a
// design"; docs/packets.md, format 2.4): `bud design run FILE --record P.bpk` writes the design
// file, every source and include file, the firmware script, the stimulus and memory-init files,
// the reference's output, the --define/--param/--seed it ran with, the design revision and what
// the run ended with (verdict, cycles, per-stage transaction digests, final state digest, sink
// hashes). design/DesignReplay.h replays it from those files alone, from any directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/DesignRun.h"
#include "replay/packet.pb.h"

namespace bud::design {

/// Largest total of file bytes a design packet embeds (the files are meant to be small).
inline constexpr uint64_t kMaxBundleBytes = 64ull << 20;

/// The files a run of a design reads, by path relative to one directory.
struct DesignBundle {
  struct File {
    std::string path;  ///< relative to the root, '/'-separated, no ".."
    std::string bytes;
  };
  std::string root;         ///< absolute: the deepest directory holding every file
  std::string design_file;  ///< the design file's path among `files`
  std::vector<File> files;  ///< sorted by path, each once

  /// XXH3-64 over every path and its bytes, in order: names a copy of the bundle.
  uint64_t hash() const;
};

/// Collects what a run of `spec` reads: the design file, its sources, the files below its
/// include directories, the firmware script, the sources' stimulus and the memories' initial
/// contents. nullopt and `error` when a file cannot be read or they exceed kMaxBundleBytes.
std::optional<DesignBundle> collect_bundle(const DesignSpec& spec, DesignError& error);

/// How a recorded run was made: what `bud design run` was given beyond the file.
struct RecordedRun {
  std::vector<std::string> defines, params;  ///< the --define/--param texts, in order
  uint64_t seed = 1;
  uint64_t max_cycles = 0;
  uint64_t quiet_cycles = 0;
};

/// The packet's records, built from a finished run (the packet bytes depend on nothing else:
/// no clock, no unordered iteration).
struct DesignPacketRecords {
  replay::pb::Header header;
  replay::pb::DesignFiles files;
  std::optional<replay::pb::Symptom> symptom;  ///< FAIL or cycle limit
  replay::pb::Result result;
};
DesignPacketRecords design_packet_records(const DesignBundle& bundle, const RecordedRun& run,
                                          const RunOutcome& outcome, const DesignSpec& spec);
/// The Result (and its DesignOutcome) of a finished run; replay compares two of these.
replay::pb::Result design_result(const RunOutcome& outcome);

/// What write_design_packet() wrote.
struct WrittenPacket {
  uint64_t bytes = 0;
  size_t files = 0;
  uint64_t file_bytes = 0;  ///< raw bytes of the embedded files
};
/// Writes the packet of a finished run of `spec` to `path`. nullopt and `error` (naming the
/// file at fault) when a file cannot be read or the packet cannot be written.
/// `notes` are annotations (cycle, text) the packet carries, e.g. the trigger hits that asked for
/// it (`bud run --design F --triggers T`).
std::optional<WrittenPacket> write_design_packet(
    const std::string& path, const DesignSpec& spec, const RecordedRun& run,
    const RunOutcome& outcome, std::string& error,
    const std::vector<std::pair<uint64_t, std::string>>& notes = {});
/// The same with the files given (a reduced copy of a packet's, `bud minimize`) instead of
/// collected from `spec`'s paths; `bundle.root` is recorded as the tree they came from.
std::optional<WrittenPacket> write_design_packet(
    const std::string& path, const DesignBundle& bundle, const DesignSpec& spec,
    const RecordedRun& run, const RunOutcome& outcome, std::string& error,
    const std::vector<std::pair<uint64_t, std::string>>& notes = {});

/// The embedded files of a design packet, inflated and checked (sizes, hashes, paths: relative,
/// no "..", each once, the design file among them). nullopt and `error` naming the problem.
std::optional<DesignBundle> bundle_of(const replay::pb::DesignFiles& files,
                                      const replay::pb::DesignRun& run, std::string& error);
/// The reference output a design packet holds (nullopt: none, or `error` when corrupt).
std::optional<std::string> expected_of(const replay::pb::DesignFiles& files, std::string& error);

}  // namespace bud::design
