#include "emu/core/HostDriver.h"

#include <cstdio>
#include <cstring>

#include "emu/core/DramModel.h"
#include "emu/core/Hash.h"
#include "emu/isa/Isa.h"

namespace bud::emu {

namespace {

std::string hex_addr(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

template <typename T>
void put(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

template <typename T>
bool get(std::span<const uint8_t> in, size_t& off, T& v) {
  if (off + sizeof(T) > in.size()) return false;
  std::memcpy(&v, in.data() + off, sizeof(T));
  off += sizeof(T);
  return true;
}

constexpr uint32_t kSaveMagic = 0x48535431;  // "HST1": fingerprints are XXH3

}  // namespace

uint64_t HostJob::fingerprint() const {
  Hasher h;
  h.add_u64(commands.size());
  for (const auto& c : commands)
    for (uint64_t w : c) h.add_u64(w);
  for (const auto& r : image) {
    h.add_u64(r.addr).add_u64(r.bytes.size());
    h.add(r.bytes);
  }
  return h.add_u64(ring_base).add_u64(ring_entries).add_u64(poll_interval).digest();
}

std::string HostDriver::start(const HostJob& job, DramModel& dram) {
  if (job.ring_entries < 2 || job.ring_entries > 65535)
    return "ring must hold 2..65535 commands, not " + std::to_string(job.ring_entries);
  if (job.ring_base % isa::kCommandBytes != 0) return "ring base must be 32-byte aligned";
  const uint64_t ring_end = uint64_t{job.ring_base} + uint64_t{job.ring_entries} * isa::kCommandBytes;
  if (ring_end > dram.size()) return "command ring does not fit in DRAM";
  for (const auto& r : job.image) {
    if (uint64_t{r.addr} + r.bytes.size() > dram.size())
      return "DRAM image region at " + hex_addr(r.addr) + " does not fit in DRAM";
    if (r.addr < ring_end && r.addr + r.bytes.size() > job.ring_base)
      return "DRAM image region overlaps the command ring";
    dram.write(r.addr, r.bytes);
  }
  if (job.commands.empty()) return "the program has no commands";

  job_ = &job;
  fingerprint_ = job.fingerprint();
  pushed_ = 0;
  tail_ = 0;
  push_commands(0, dram);
  tail_dirty_ = false;
  using namespace isa::csr;
  setup_len_ = 0;
  auto wr = [&](uint32_t addr, uint32_t v) { setup_[setup_len_++] = {true, true, uint8_t(addr), v}; };
  wr(kPmuCtrl, kPmuEnable | kPmuClear);
  wr(kRingBase, job.ring_base);
  wr(kRingSize, job.ring_entries);
  wr(kHeadReset, 1);
  wr(kCtrl, 1);  // interrupt enable
  wr(kRingTail, tail_);
  wr(kDoorbell, 1);
  setup_pos_ = 0;
  poll_countdown_ = job.poll_interval;
  final_status_ = 0;
  status_read_ = false;
  last_read_ = 0;
  phase_ = Phase::Setup;
  return {};
}

void HostDriver::push_commands(uint32_t head, DramModel& dram) {
  const uint32_t n = job_->ring_entries;
  // Free slots: one is kept empty so that head == tail means empty.
  const uint32_t used = (tail_ + n - head) % n;
  uint32_t free_slots = n - 1 - used;
  while (free_slots > 0 && pushed_ < job_->commands.size()) {
    std::array<uint8_t, isa::kCommandBytes> bytes;
    std::memcpy(bytes.data(), job_->commands[pushed_].data(), bytes.size());
    dram.write(job_->ring_base + tail_ * isa::kCommandBytes, bytes);
    tail_ = (tail_ + 1) % n;
    ++pushed_;
    --free_slots;
    tail_dirty_ = true;
  }
}

CsrAccess HostDriver::drive() {
  using namespace isa::csr;
  last_read_ = 0;
  switch (phase_) {
    case Phase::Setup:
      return setup_[setup_pos_];
    case Phase::Running:
      if (tail_dirty_) return {true, true, uint8_t(kRingTail), tail_};
      if (poll_countdown_ == 0 && pushed_ < job_->commands.size()) {
        last_read_ = kRingHead;
        return {true, false, uint8_t(kRingHead), 0};
      }
      return {};
    case Phase::Ack:
      if (!status_read_) {
        last_read_ = kStatus;
        return {true, false, uint8_t(kStatus), 0};
      }
      return {true, true, uint8_t(kIrq), 1};
    default:
      return {};
  }
}

void HostDriver::sample(uint32_t csr_rdata, bool irq, DramModel& dram) {
  using namespace isa::csr;
  switch (phase_) {
    case Phase::Setup:
      if (++setup_pos_ == setup_len_) phase_ = Phase::Running;
      break;
    case Phase::Running:
      if (tail_dirty_) {
        tail_dirty_ = false;
      } else if (last_read_ == kRingHead) {
        push_commands(csr_rdata, dram);
        poll_countdown_ = job_->poll_interval;
      } else if (poll_countdown_ > 0) {
        --poll_countdown_;
      }
      if (irq) phase_ = Phase::Ack;
      break;
    case Phase::Ack:
      if (last_read_ == kStatus) {
        final_status_ = csr_rdata;
        status_read_ = true;
      } else {
        phase_ = Phase::Done;  // the interrupt has been acknowledged
      }
      break;
    default:
      break;
  }
}

void HostDriver::save(std::vector<uint8_t>& out) const {
  put(out, kSaveMagic);
  put(out, fingerprint_);
  put(out, static_cast<uint8_t>(phase_));
  put(out, setup_pos_);
  put(out, pushed_);
  put(out, tail_);
  put(out, static_cast<uint8_t>(tail_dirty_));
  put(out, poll_countdown_);
  put(out, last_read_);
  put(out, final_status_);
  put(out, static_cast<uint8_t>(status_read_));
}

bool HostDriver::restore(std::span<const uint8_t> in, size_t& offset, std::string& error) {
  const size_t start = offset;
  uint32_t magic = 0;
  uint64_t fp = 0;
  uint8_t phase = 0, dirty = 0, status_read = 0;
  HostDriver next = *this;
  if (!get(in, offset, magic) || magic != kSaveMagic) {
    error = "host driver state: bad magic at byte " + std::to_string(start);
    return false;
  }
  if (!get(in, offset, fp) || !get(in, offset, phase) || !get(in, offset, next.setup_pos_) ||
      !get(in, offset, next.pushed_) || !get(in, offset, next.tail_) || !get(in, offset, dirty) ||
      !get(in, offset, next.poll_countdown_) || !get(in, offset, next.last_read_) ||
      !get(in, offset, next.final_status_) || !get(in, offset, status_read)) {
    error = "host driver state: truncated at byte " + std::to_string(offset);
    return false;
  }
  if (fp != fingerprint_) {
    error = "host driver state at byte " + std::to_string(start) +
            " belongs to another program (job fingerprint differs)";
    return false;
  }
  if (phase > static_cast<uint8_t>(Phase::Done) || next.setup_pos_ > setup_len_) {
    error = "host driver state: invalid phase at byte " + std::to_string(start);
    return false;
  }
  // Every field indexes or bounds something once running: the setup list, the job's commands,
  // the ring. A state that contradicts the job it claims to belong to is refused.
  const auto p = static_cast<Phase>(phase);
  const bool started = job_ != nullptr;
  const uint32_t ring = started ? job_->ring_entries : 0;
  const char* bad = nullptr;
  if (!started && p != Phase::Idle)
    bad = "a running driver, but no job is loaded";
  else if (p == Phase::Setup && next.setup_pos_ >= setup_len_)
    bad = "setup step past the end of the setup list";
  else if (started && next.pushed_ > job_->commands.size())
    bad = "more commands pushed than the job has";
  else if (started && (next.tail_ >= ring || next.tail_ != next.pushed_ % ring))
    bad = "ring tail inconsistent with the commands pushed";
  else if (started && next.poll_countdown_ > job_->poll_interval)
    bad = "poll countdown longer than the poll interval";
  else if (next.last_read_ != 0 && next.last_read_ != isa::csr::kRingHead &&
           next.last_read_ != isa::csr::kStatus)
    bad = "last CSR read is not one the driver makes";
  else if (dirty > 1 || status_read > 1)
    bad = "a flag is neither 0 nor 1";
  if (bad) {
    error = "host driver state at byte " + std::to_string(start) + ": " + bad;
    return false;
  }
  next.phase_ = static_cast<Phase>(phase);
  next.tail_dirty_ = dirty != 0;
  next.status_read_ = status_read != 0;
  *this = next;
  return true;
}

}  // namespace bud::emu
