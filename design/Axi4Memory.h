// The memory behind one AXI4 master port of a design (docs/designs.md, "AXI4 memory"): the
// bytes of the [[memory]] region it reaches, served on the AR/R and AW/W/B channels with timing
// from bud's DRAM model (emu::DramModel, the model behind the NPU's DRAM port).
//
// Each burst is one request to the DRAM model (a read at its AR handshake, a write at its last W
// beat): the model's seeded latency, jitter, max outstanding, bursty back-pressure and reordering
// decide when the burst's data (R) or acknowledgement (B) may go back. On top of that the port
// keeps AXI's ordering rule: a burst never answers before an older burst of the same ID and
// direction, so only bursts of different IDs overtake each other. The R and W channels each carry
// at most `bytes_per_cycle` bytes per cycle on average (a beat of B bytes takes ceil(B /
// bytes_per_cycle) cycles when B is larger).
//
// INCR, FIXED and WRAP bursts with any size up to the bus width, byte strobes, IDs of id_bits.
// A burst that leaves the region, crosses a 4 KiB boundary (INCR), has a reserved burst type, an
// illegal WRAP length or a size wider than the bus, or a W beat whose wlast is wrong, is a run
// error: error() holds one line naming port, channel, address and cycle, and the port stops
// answering. Nothing aborts.
//
// Per cycle the harness calls drive() (before settling the model), sample() (with what the
// design presents after settling, i.e. the handshakes of the coming edge) and tick() (after the
// edge). These never allocate, lock, throw or do I/O.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "emu/core/DramModel.h"

namespace bud::design {

/// Widest data bus served, in bytes (512 bits).
inline constexpr uint32_t kAxiMaxBusBytes = 64;
/// Bursts in flight per port (reads and writes together), the DRAM model's hard limit.
inline constexpr uint32_t kAxiMaxBursts = emu::kDramMaxOutstanding;

/// What the memory drives into the design this cycle (the slave's outputs).
struct Axi4SlaveDrive {
  bool arready = false, awready = false, wready = false;
  bool rvalid = false, rlast = false;
  uint32_t rid = 0;
  uint8_t rresp = 0;
  std::array<uint8_t, kAxiMaxBusBytes> rdata{};  ///< little-endian bus bytes
  bool bvalid = false;
  uint32_t bid = 0;
  uint8_t bresp = 0;
};

/// What the design presents this cycle (the master's outputs), read after settling.
struct Axi4MasterPins {
  bool arvalid = false;
  uint64_t araddr = 0;
  uint32_t arid = 0;
  uint8_t arlen = 0, arsize = 0, arburst = 1;
  bool awvalid = false;
  uint64_t awaddr = 0;
  uint32_t awid = 0;
  uint8_t awlen = 0, awsize = 0, awburst = 1;
  bool wvalid = false, wlast = false;
  uint64_t wstrb = 0;                ///< bit i: byte lane i
  const uint8_t* wdata = nullptr;    ///< bus_bytes little-endian bytes (valid during sample())
  bool bready = false, rready = false;
};

/// Counters since make() (saved and restored with the state).
struct Axi4Stats {
  uint64_t read_bursts = 0, write_bursts = 0;  ///< bursts accepted (AR, AW handshakes)
  uint64_t read_beats = 0, write_beats = 0;    ///< R and W handshakes
  uint64_t bytes_read = 0, bytes_written = 0;  ///< active bytes (writes: strobed bytes)
  /// Sum and maximum over read bursts of (first R beat presented - AR handshake), cycles.
  uint64_t read_latency_sum = 0, read_latency_max = 0;
  uint64_t active_cycles = 0;  ///< cycles with a handshake on any channel
};

class Axi4Memory {
 public:
  struct Config {
    std::string port;               ///< the [[axi4]] name, for messages
    std::string region;             ///< the [[memory]] name
    uint64_t base = 0, size = 0;    ///< the region: bytes [base, base + size)
    uint32_t bus_bytes = 8;         ///< data_bits / 8 (1..64, a power of two)
    uint32_t id_bits = 0;
    emu::DramConfig dram;           ///< timing (size_bytes is ignored); validate()d by make()
  };
  /// A zero-filled region with `cfg`'s timing; `init`, if given, is copied to its start. nullopt
  /// and `error` when the config is unusable or `init` is larger than the region.
  static std::optional<Axi4Memory> make(const Config& cfg, std::span<const uint8_t> init,
                                        std::string& error);

  /// The slave's outputs for this cycle (stable until tick()).
  const Axi4SlaveDrive& drive();
  /// What the last drive() returned: the handshakes sample() will take need these readies.
  const Axi4SlaveDrive& driven() const { return out_; }
  /// The handshakes of this cycle's edge, from what the design presents after settling.
  void sample(const Axi4MasterPins& pins);
  /// Ends the cycle.
  void tick();

  /// No burst in flight and nothing presented: the port is quiet.
  bool idle() const { return used_ == 0; }
  /// The first run error (sticky), or nullptr.
  const char* error() const { return error_[0] ? error_.data() : nullptr; }
  const Axi4Stats& stats() const { return stats_; }
  const emu::DramModel& dram() const { return dram_; }
  const Config& config() const { return cfg_; }
  uint64_t cycle() const { return cycle_; }

  /// Untimed access to the region's bytes at `offset` (from base), for checks and debuggers.
  /// False (nothing copied) when [offset, offset + size) leaves the region.
  bool read(uint64_t offset, std::span<uint8_t> out) const;
  bool write(uint64_t offset, std::span<const uint8_t> in);
  /// The region's bytes.
  std::span<const uint8_t> bytes() const { return mem_; }

  /// Appends the complete state (bursts, channels, DRAM model, stats, error, bytes). Call
  /// between cycles.
  void save(std::vector<uint8_t>& out) const;
  /// Reads a state written by save() of a memory with the same config at in[offset]; on success
  /// replaces the state and advances `offset`. On failure: false, nothing changed, `error` names
  /// the byte offset at fault.
  bool restore(std::span<const uint8_t> in, size_t& offset, std::string& error);

 private:
  enum class Phase : uint8_t { Free, WData, Issued, Done, Answering };
  struct Burst {
    Phase phase = Phase::Free;
    bool write = false;
    uint8_t len = 0, size = 0, burst = 1;
    uint32_t id = 0;
    uint64_t addr = 0;
    uint64_t seq = 0;         // acceptance order (per port)
    uint64_t accept_cycle = 0;
    uint64_t done_cycle = 0;  // the DRAM model answered
    uint32_t beat = 0;        // next beat (W received, R presented)
  };
  Axi4Memory() = default;
  uint64_t beat_addr(const Burst& b, uint32_t beat) const;
  bool check_burst(bool write, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst);
  int pick_answer(bool write) const;
  bool oldest_of_id(const Burst& b) const;
  void present_read_beat();
  void fail(const char* channel, uint64_t addr, const char* what);
  int free_slot() const;

  Config cfg_;
  emu::DramModel dram_;
  std::vector<uint8_t> mem_;
  std::array<Burst, kAxiMaxBursts> bursts_{};
  uint32_t used_ = 0;
  std::array<uint32_t, 2> done_{};  // bursts in Phase::Done: reads, writes (derived, not saved)
  uint64_t next_seq_ = 0, cycle_ = 0;
  int w_slot_ = -1;     // the burst receiving W beats (the oldest in WData), or -1
  int r_slot_ = -1;     // the burst on the R channel, or -1
  int b_slot_ = -1;     // the burst on the B channel, or -1
  uint64_t r_credit_ = 0, w_credit_ = 0;  // R/W channel bytes available (bytes_per_cycle a cycle)
  bool ar_owns_dram_ = true;  // who gets the DRAM model's one accept this cycle, if both want it
  Axi4SlaveDrive out_{};
  Axi4Stats stats_;
  std::array<char, 240> error_{};
};

}  // namespace bud::design
