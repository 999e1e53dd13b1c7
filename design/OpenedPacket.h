// A design packet (design/DesignPacket.h) opened to be run again: its embedded files written
// into a private directory of the design cache (materialise), the design file read from there
// with absolute paths below the recorded tree mapped into the copy, and the run it recorded
// (overrides, seed, limits). What `bud replay`, `bud bisect`, `bud minimize` and `bud debug
// --packet` start from for a design packet.
#pragma once

#include <optional>
#include <string>

#include "design/DesignPacket.h"
#include "design/DesignTarget.h"
#include "replay/PacketReader.h"

namespace bud::design {

/// Writes `bundle`'s files below `<cache>/packets/<name>-<bundle hash>/` (cache: `cache_dir`,
/// or the model cache's default, ModelBuild.h), or finds them there already: the directory is
/// made whole in a temporary directory and renamed into place. Its path, or nullopt and `error`.
std::optional<std::string> materialise(const DesignBundle& bundle, const std::string& name,
                                       const std::string& cache_dir, std::string& error);

/// The design file of `bundle`, copied into `dir`, read from there (absolute paths below the
/// bundle's recorded root mapped into `dir`) with `overrides`' --define/--param applied.
/// nullopt and `error` ("the embedded design: FILE:LINE:COL: ..." or "OVERRIDES_LABEL: ...")
/// when it does not parse or an override is malformed.
std::optional<DesignSpec> spec_in(const DesignBundle& bundle, const std::string& dir,
                                  const TargetOptions& overrides, std::string& error,
                                  const std::string& overrides_label = "the recorded overrides");

/// Points `spec`'s inputs at `inputs`': each source stream's file, each memory region's initial
/// contents (matched by name) and the firmware script, so both run the same stimulus. What has
/// no counterpart of the same name keeps its own.
void use_inputs_of(DesignSpec& spec, const DesignSpec& inputs);

struct OpenedPacket {
  std::string name;      ///< the packet as named in messages
  std::string design;    ///< the design's name (Header.design "design:NAME")
  std::string revision;  ///< the model revision it was recorded with
  DesignBundle bundle;
  std::string dir;  ///< where the bundle's files are (materialised)
  RecordedRun run;  ///< the recorded --define/--param, seed and limits
  std::optional<std::string> expected;  ///< the reference output it recorded
  std::optional<replay::pb::Symptom> symptom;

  /// The design as recorded (its overrides); `TargetOptions` for prepare_spec() follow.
  std::optional<DesignSpec> recorded_spec(std::string& error) const;
  /// --define/--param, seed and quiet cycles of the recorded run, models in `cache_dir`.
  TargetOptions target_options(const std::string& cache_dir) const;
  /// "--define BUG_NO_SATURATE --param N=4", or "" without overrides.
  std::string overrides_text() const;
};

/// Opens `packet` (a design packet: Header.design_run): checks its files (bundle_of) and
/// materialises them. nullopt and `error` naming the packet and what is wrong.
std::optional<OpenedPacket> open_packet(const replay::Packet& packet, const std::string& cache_dir,
                                        std::string& error);

}  // namespace bud::design
