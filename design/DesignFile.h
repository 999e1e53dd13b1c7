// A design file (docs/designs.md): the TOML description of a user's Verilated accelerator that
// lets bud build, run, check and debug it with no C++ from the user. parse_design_file() reads
// and validates the file on its own (types, required keys, ranges, names); check_design()
// (DesignCheck.h) then checks it against the RTL's ports.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bud::design {

/// Where a key or value is in its file, for "FILE:LINE:COL: ..." messages.
struct Where {
  std::string file;
  uint32_t line = 0, column = 0;
  /// "FILE:LINE:COL" (or "FILE" when the position is unknown).
  std::string to_string() const;
};

/// Exit statuses of `bud design` and of every command given `--design FILE` (docs/cli.md).
inline constexpr int kExitBadDesignFile = 2;  ///< unreadable, not TOML, or a bad key/value
inline constexpr int kExitRtlMismatch = 6;    ///< the file names ports/signals the RTL lacks
inline constexpr int kExitElaboration = 7;    ///< Verilator cannot read/elaborate the sources

/// One error: where, and what (naming the key and, for RTL problems, the signal).
struct DesignError {
  Where where;
  std::string message;
  int exit_code = kExitBadDesignFile;
  /// "FILE:LINE:COL: MESSAGE".
  std::string to_string() const;
};

/// A single-bit control signal: clock or reset.
struct ControlSignal {
  std::string name;
  bool active_low = false;  ///< reset only
  uint32_t cycles = 0;      ///< reset only: cycles held active after power-on
  Where where;
};

/// An AXI4 master port of the design, served by bud's DRAM timing model.
struct Axi4Port {
  std::string name;
  std::string prefix;  ///< e.g. "m_axi_": signals m_axi_awaddr, m_axi_rdata, ...
  uint32_t data_bits = 64, addr_bits = 32, id_bits = 0;
  std::string memory;  ///< the [[memory]] region it reaches
  /// Overrides of the DRAM timing model's config (emu/core/DramModel.h) for this port: cycles
  /// from request to earliest answer, extra random cycles, channel bytes per cycle, bursts in
  /// flight, and whether answers of different IDs may overtake each other.
  std::optional<uint32_t> latency, jitter, bytes_per_cycle, max_outstanding;
  std::optional<bool> reorder;
  Where where;
};

/// A memory region bud models (what AXI4 masters read and write), with initial contents.
struct MemoryRegion {
  std::string name;
  uint64_t base = 0, size = 0;
  std::string init;  ///< file with the initial bytes at `base` (resolved path), or empty
  Where where;
};

/// The AXI4-Lite control slave, driven by a firmware script.
struct ControlPort {
  std::string prefix;  ///< e.g. "s_axil_"
  uint32_t addr_bits = 12, data_bits = 32;
  std::string firmware;   ///< the firmware script (resolved path)
  std::string interrupt;  ///< an interrupt output the script may wait for, or empty
  Where where;
};

/// An AXI-Stream port: a source bud feeds from a file, or a sink bud collects into one.
struct StreamPort {
  enum class Direction : uint8_t { Source, Sink };
  std::string name;
  std::string prefix;  ///< e.g. "s_axis_": tdata, tvalid, tready, optional tlast
  Direction direction = Direction::Source;
  uint32_t data_bits = 8;
  std::string file;  ///< source: the bytes to send (resolved path); sink: where to write them
  /// Seeded back-pressure: a source offers a beat on a cycle with this probability, a sink is
  /// ready with this probability (1: never throttled).
  double rate = 1.0;
  Where where;
};

/// A counter: a design signal read as it is, or a count of the cycles where `when` holds.
struct CounterSpec {
  std::string name;
  std::string signal;  ///< read from this signal, or
  std::string when;    ///< counted by bud: cycles where this expression (docs/expressions.md) holds
  Where where;
  Where expr_where;  ///< where `when` (or `signal`) starts, for column-exact errors
};

/// A stage: a handshake interface in pipeline order; each accepted transfer is a transaction.
struct StageSpec {
  std::string name;
  std::string valid, ready;
  std::vector<std::string> payload;  ///< signals hashed into each transaction
  std::string axi4, channel;  ///< set when the stage is a channel ("ar", "r", "aw", "w", "b") of an [[axi4]] port
  Where where;
};

/// The output check: expected bytes of a sink stream or memory range, from a reference command.
struct OutputCheck {
  std::string sink;    ///< a sink stream's name, or
  std::string memory;  ///< a memory region's name with `offset` and `length`
  uint64_t offset = 0, length = 0;
  /// argv of the reference; "{input:NAME}" is replaced by a source stream's or a region's
  /// initial file, "{expected}" by the file the command must write. Run without a shell.
  std::vector<std::string> reference;
  Where where;
};

/// A parsed design file.
struct DesignSpec {
  std::string file;  ///< the design file as given
  std::string dir;   ///< its directory: relative paths in it are relative to this
  std::string name, top;
  std::vector<std::string> sources, include_dirs;  ///< resolved paths
  std::map<std::string, std::string> defines, parameters;  ///< ordered: deterministic flags
  ControlSignal clock, reset;
  bool has_reset = false;
  std::vector<MemoryRegion> memories;
  std::vector<Axi4Port> axi4;
  std::optional<ControlPort> control;
  std::vector<StreamPort> streams;
  std::vector<CounterSpec> counters;
  std::vector<StageSpec> stages;
  std::optional<OutputCheck> check;
  Where top_where, clock_where;
};

/// Reads and validates a design file. Errors name FILE:LINE:COL and the key.
struct ParseResult {
  std::optional<DesignSpec> spec;
  DesignError error;
  bool ok() const { return spec.has_value(); }
};
ParseResult parse_design_file(const std::string& path);
/// A design's directory tree copied elsewhere (a replay packet's files, design/DesignReplay.h):
/// an absolute path in the design file below `from` names the same file below `to`.
struct Relocation {
  std::string from, to;  ///< absolute directories
};
/// The same for text already in memory (`path` names it and resolves relative paths).
ParseResult parse_design_text(const std::string& text, const std::string& path,
                              const std::optional<Relocation>& relocation = std::nullopt);

}  // namespace bud::design
