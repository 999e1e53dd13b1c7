// The host side of a run: puts the program's data and command ring into DRAM, programs the CSRs,
// rings the doorbell, refills the ring as the NPU consumes it, and waits for the interrupt. It
// talks to the design only through the CSR port (one access per cycle), like firmware would.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bud::emu {

class DramModel;

/// Everything the host needs to run one program.
struct HostJob {
  struct Region {
    uint32_t addr = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<std::array<uint64_t, 4>> commands;  ///< encoded commands, program order
  std::vector<Region> image;                      ///< initial DRAM contents
  uint32_t ring_base = 0;                         ///< byte address of the ring (32-aligned)
  uint32_t ring_entries = 2048;                   ///< commands the ring holds
  uint32_t poll_interval = 64;                    ///< cycles between RING_HEAD polls
  /// Hash of the job's content, so a restored state can check it belongs to this job.
  uint64_t fingerprint() const;
};

/// One CSR access driven in a cycle.
struct CsrAccess {
  bool valid = false;
  bool write = false;
  uint8_t addr = 0;
  uint32_t wdata = 0;
};

/// Host driver state machine. drive() gives this cycle's CSR access; sample() takes the read data
/// and interrupt line of the same cycle. No allocation after start().
class HostDriver {
 public:
  enum class Phase : uint8_t { Idle, Setup, Running, Ack, Done };

  /// Writes the image and the first ring window into `dram` (backdoor) and plans the CSR setup.
  /// Returns an error message if the job does not fit the ring or DRAM.
  std::string start(const HostJob& job, DramModel& dram);

  CsrAccess drive();
  void sample(uint32_t csr_rdata, bool irq, DramModel& dram);

  Phase phase() const { return phase_; }
  bool finished() const { return phase_ == Phase::Done; }
  /// STATUS read after the interrupt (docs/isa.md): bit1 done, bit2 error.
  uint32_t final_status() const { return final_status_; }
  /// Commands written into the ring so far.
  uint64_t pushed() const { return pushed_; }

  void save(std::vector<uint8_t>& out) const;
  bool restore(std::span<const uint8_t> in, size_t& offset, std::string& error);

 private:
  void push_commands(uint32_t head, DramModel& dram);

  const HostJob* job_ = nullptr;
  Phase phase_ = Phase::Idle;
  // Setup: a fixed list of CSR writes.
  std::array<CsrAccess, 8> setup_{};
  uint32_t setup_len_ = 0, setup_pos_ = 0;
  // Running.
  uint64_t pushed_ = 0;         ///< commands written to the ring
  uint32_t tail_ = 0;           ///< ring index one past the last written
  bool tail_dirty_ = false;     ///< RING_TAIL must be written
  uint32_t poll_countdown_ = 0;
  uint8_t last_read_ = 0;       ///< CSR read this cycle (0 = none)
  uint32_t final_status_ = 0;
  bool status_read_ = false;
  uint64_t fingerprint_ = 0;
};

}  // namespace bud::emu
