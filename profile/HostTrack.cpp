#include "profile/HostTrack.h"

#include "emu/isa/Isa.h"
#include "profile/ReadLe.h"

namespace bud::profile {

const char* host_activity_name(HostActivity a) {
  switch (a) {
    case HostActivity::Setup:
      return "setup";
    case HostActivity::Doorbell:
      return "doorbell";
    case HostActivity::Poll:
      return "RING_HEAD poll";
    case HostActivity::Refill:
      return "ring refill";
    case HostActivity::StatusRead:
      return "STATUS read";
    case HostActivity::IrqAck:
      return "IRQ ack";
    case HostActivity::Other:
    case HostActivity::Count:
      break;
  }
  return "CSR access";
}

std::unique_ptr<HostTrack> HostTrack::attach(const emu::Emulator& emu, size_t commands,
                                             std::string& error) {
  std::unique_ptr<HostTrack> t(new HostTrack());
  const std::pair<const char*, Port*> ports[] = {{"csr_valid", &t->valid_},
                                                 {"csr_write", &t->write_},
                                                 {"csr_addr", &t->addr_},
                                                 {"csr_wdata", &t->wdata_},
                                                 {"irq", &t->irq_}};
  for (const auto& [name, port] : ports) {
    const auto id = emu.find_signal(name);
    if (id) port->p = emu.signal_address(*id, 0, port->bytes);
    if (!port->p || port->bytes == 0 || port->bytes > 8) {
      error = std::string("design has no host CSR port signal ") + name + " readable by address";
      return nullptr;
    }
  }
  // Setup (one event), doorbell, per refill a poll run and the tail write, the poll run after
  // the last refill, STATUS, IRQ: at most 2 x commands + a few.
  t->events_.reserve(2 * commands + 16);
  t->interrupts_.reserve(16);
  return t;
}

bool HostTrack::after_cycle(uint64_t cycle) {
  if (read_le(valid_.p, valid_.bytes) != 0) [[unlikely]]
    record(cycle);
  const bool irq = read_le(irq_.p, irq_.bytes) != 0;
  if (irq && !irq_was_) [[unlikely]] {
    if (interrupts_.size() < interrupts_.capacity())
      interrupts_.push_back(cycle);
    else
      ++dropped_;
  }
  irq_was_ = irq;
  return false;
}

void HostTrack::record(uint64_t cycle) {
  using namespace isa::csr;
  ++accesses_;
  const bool write = read_le(write_.p, write_.bytes) != 0;
  const auto addr = static_cast<uint8_t>(read_le(addr_.p, addr_.bytes));
  const auto value = static_cast<uint32_t>(read_le(wdata_.p, wdata_.bytes));
  HostActivity kind = HostActivity::Other;
  if (write && addr == kDoorbell) {
    kind = HostActivity::Doorbell;
    doorbell_seen_ = true;
  } else if (write && addr == kRingTail && doorbell_seen_) {
    kind = HostActivity::Refill;
  } else if (write && addr == kIrq) {
    kind = HostActivity::IrqAck;
  } else if (write && !doorbell_seen_) {
    kind = HostActivity::Setup;
  } else if (!write && addr == kRingHead) {
    kind = HostActivity::Poll;
  } else if (!write && addr == kStatus) {
    kind = HostActivity::StatusRead;
  }
  // Setup writes back to back are one event, and so is a run of polls none of which led to a
  // refill yet (the host polls every poll_interval cycles until the ring has room).
  if (!events_.empty()) {
    HostEvent& last = events_.back();
    const bool extend =
        last.kind == kind &&
        (kind == HostActivity::Poll || (kind == HostActivity::Setup && last.last + 1 == cycle));
    if (extend) {
      last.last = cycle;
      ++last.count;
      last.addr = addr;
      last.value = value;
      return;
    }
  }
  if (events_.size() == events_.capacity()) {
    ++dropped_;
    return;
  }
  events_.push_back({kind, cycle, cycle, 1, addr, value});
}

}  // namespace bud::profile
