// The design harness's AXI side (docs/designs.md, "AXI4 memory" and "Firmware scripts"): one
// Axi4Memory per [[axi4]] master port and a FirmwareRunner on the [control] AXI4-Lite slave,
// bound to a loaded model's signals. DesignHarness calls drive() before settling the model,
// sample() after it and tick() after the edge; these never allocate, lock, throw or do I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "design/Axi4Memory.h"
#include "design/DesignFile.h"
#include "design/FirmwareRunner.h"
#include "design/LoadedModel.h"
#include "emu/core/DramModel.h"

namespace bud::design {

class AxiPorts {
 public:
  /// Binds every [[axi4]] port (its region's bytes from `init`, timing from `dram` with the
  /// port's overrides, seeded from `seed` and the port's index) and the [control] port (its
  /// firmware script parsed) to `model`. nullopt and one line in `error` when something does not
  /// bind, a region cannot be read, or the script does not parse (FILE:LINE:COL).
  static std::optional<AxiPorts> make(const DesignSpec& spec, LoadedModel& model,
                                      const emu::DramConfig& dram, uint64_t seed, std::string& error);

  /// Drives the slaves' outputs and the firmware's requests for this cycle.
  void drive(LoadedModel& model);
  /// Takes this cycle's handshakes from the settled model. True if anything moved.
  bool sample(const LoadedModel& model);
  /// Ends the cycle.
  void tick();
  /// Holds every input bud drives low (during reset).
  void idle(LoadedModel& model) const;

  /// The firmware (if any) has finished and no burst is in flight.
  bool quiet() const;
  /// The run cannot go on: a memory's run error, or the firmware failed (mismatch, timeout,
  /// error response).
  bool stopped() const;
  /// The first memory run error, or nullptr.
  const char* memory_error() const;

  const std::vector<Axi4Memory>& memories() const { return memories_; }
  /// The memory serving region `name`, or nullptr.
  const Axi4Memory* memory(const std::string& name) const;
  Axi4Memory* memory(const std::string& name);
  const std::optional<FirmwareRunner>& firmware() const { return firmware_; }

  /// Appends every memory's and the firmware's state, in declaration order.
  void save(std::vector<uint8_t>& out) const;
  /// Reads what save() wrote at in[offset] (same design file); nothing changes on failure.
  bool restore(std::span<const uint8_t> in, size_t& offset, std::string& error);

 private:
  struct MemPins {  // model signal indices of one AXI4 master port
    size_t arvalid, araddr, arlen, arsize, arburst, arready, rvalid, rdata, rresp, rlast, rready;
    size_t awvalid, awaddr, awlen, awsize, awburst, awready, wvalid, wdata, wstrb, wlast, wready;
    size_t bvalid, bresp, bready;
    std::optional<size_t> arid, rid, awid, bid;
  };
  struct LitePins {
    size_t awaddr, awvalid, awready, wdata, wstrb, wvalid, wready, bresp, bvalid, bready;
    size_t araddr, arvalid, arready, rdata, rresp, rvalid, rready;
    std::optional<size_t> irq;
  };
  // The same signals' storage, read and written every cycle without the port table.
  struct MemRefs {
    PortRef arvalid, araddr, arlen, arsize, arburst, arready, rvalid, rdata, rresp, rlast, rready;
    PortRef awvalid, awaddr, awlen, awsize, awburst, awready, wvalid, wdata, wstrb, wlast, wready;
    PortRef bvalid, bresp, bready;
    PortRef arid, rid, awid, bid;
    bool ids = false;
  };
  struct LiteRefs {
    PortRef awaddr, awvalid, awready, wdata, wstrb, wvalid, wready, bresp, bvalid, bready;
    PortRef araddr, arvalid, arready, rdata, rresp, rvalid, rready, irq;
    bool has_irq = false;
  };
  AxiPorts() = default;
  std::vector<Axi4Memory> memories_;
  std::vector<MemPins> mem_pins_;
  std::vector<MemRefs> mem_refs_;
  std::optional<FirmwareRunner> firmware_;
  LitePins lite_{};
  LiteRefs lite_refs_{};
};

}  // namespace bud::design
