// Runs a firmware script (FirmwareScript.h) against a design's AXI4-Lite control slave, cycle by
// cycle, as an AXI4-Lite master: a write presents AW and W together (each held until its
// handshake, wstrb all ones, prot 0) then takes B; a read presents AR then takes R. One access
// at a time, in script order. A `read ... expect` mismatch ends the script as Mismatch (the run
// FAILs); a poll or wait_irq past its timeout, or an access the slave leaves unanswered for
// kFirmwareAccessTimeout cycles, as Timeout; a non-OKAY response as Error. message() is then
// one line, "SCRIPT:LINE: ...".
//
// Per cycle: drive() before settling the model, sample() after (the edge's handshakes and the
// interrupt), tick() after the edge. These never allocate, lock, throw or do I/O.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "design/FirmwareScript.h"

namespace bud::design {

/// Cycles a single access may wait for the slave's handshakes before it is a Timeout.
inline constexpr uint64_t kFirmwareAccessTimeout = 100'000;

/// What the firmware (the master) drives this cycle.
struct AxiLiteMasterDrive {
  bool awvalid = false, wvalid = false, bready = false, arvalid = false, rready = false;
  uint64_t awaddr = 0, wdata = 0, wstrb = 0, araddr = 0;
};

/// What the design (the slave) presents after settling, and its interrupt output.
struct AxiLiteSlavePins {
  bool awready = false, wready = false, bvalid = false, arready = false, rvalid = false;
  uint8_t bresp = 0, rresp = 0;
  uint64_t rdata = 0;
  bool irq = false;
};

class FirmwareRunner {
 public:
  enum class Status : uint8_t { Running, Done, Mismatch, Timeout, Error };
  /// Where the current step is: issuing the request, or waiting for the response.
  enum class Phase : uint8_t { Request, Response };

  /// Runs `script` on a port of `data_bits` (32 or 64) data bits.
  FirmwareRunner(FirmwareScript script, uint32_t data_bits);

  const AxiLiteMasterDrive& drive();
  void sample(const AxiLiteSlavePins& pins);
  void tick();

  Status status() const { return status_; }
  bool finished() const { return status_ != Status::Running; }
  /// One line when the status is Mismatch, Timeout or Error, else "".
  const char* message() const { return message_.data(); }
  /// The 1-based script line being executed (0 once the script is done).
  uint32_t current_line() const { return step_ < script_.steps.size() ? script_.steps[step_].line : 0; }
  /// Index of the current step in script().steps (== steps.size() once done).
  size_t current_step() const { return step_; }
  Phase phase() const { return phase_; }
  /// Cycles spent in the current step so far.
  uint64_t step_cycles() const { return elapsed_; }
  /// The last value read (reads and polls).
  uint64_t last_read() const { return last_read_; }
  uint64_t accesses() const { return accesses_; }
  const FirmwareScript& script() const { return script_; }

  /// Appends the state (step, phase, handshake progress, status, message). Call between cycles.
  void save(std::vector<uint8_t>& out) const;
  /// Reads a state written by save() of a runner of the same script; see Axi4Memory::restore.
  bool restore(std::span<const uint8_t> in, size_t& offset, std::string& error);

 private:
  void next_step();
  void finish(Status s);

  FirmwareScript script_;
  uint64_t data_mask_ = ~0ull;
  size_t step_ = 0;
  Phase phase_ = Phase::Request;
  bool aw_done_ = false, w_done_ = false;
  uint64_t elapsed_ = 0;  // cycles in this step
  uint64_t access_cycles_ = 0;  // cycles in this access
  uint64_t last_read_ = 0, accesses_ = 0;
  Status status_ = Status::Running;
  AxiLiteMasterDrive out_{};
  std::array<char, 320> message_{};
};

}  // namespace bud::design
