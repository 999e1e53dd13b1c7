#include "design/FirmwareRunner.h"

#include <cinttypes>
#include <cstdio>

#include "design/StateBytes.h"

namespace bud::design {

namespace {
constexpr char kMagic[9] = "BUDFWRN\n";
constexpr uint32_t kVersion = 1;
}  // namespace

FirmwareRunner::FirmwareRunner(FirmwareScript script, uint32_t data_bits)
    : script_(std::move(script)), data_mask_(data_bits >= 64 ? ~0ull : (1ull << data_bits) - 1) {
  if (script_.steps.empty()) status_ = Status::Done;
}

void FirmwareRunner::finish(Status s) { status_ = s; }

void FirmwareRunner::next_step() {
  ++step_;
  phase_ = Phase::Request;
  aw_done_ = w_done_ = false;
  elapsed_ = access_cycles_ = 0;
  if (step_ >= script_.steps.size()) finish(Status::Done);
}

const AxiLiteMasterDrive& FirmwareRunner::drive() {
  out_ = AxiLiteMasterDrive{};
  if (status_ != Status::Running) return out_;
  const FirmwareStep& s = script_.steps[step_];
  switch (s.op) {
    case FirmwareOp::Write:
      if (phase_ == Phase::Request) {
        out_.awvalid = !aw_done_;
        out_.awaddr = s.addr;
        out_.wvalid = !w_done_;
        out_.wdata = s.value;
        out_.wstrb = data_mask_ == ~0ull ? 0xff : 0xf;
      } else {
        out_.bready = true;
      }
      break;
    case FirmwareOp::Read:
    case FirmwareOp::Poll:
      if (phase_ == Phase::Request) {
        out_.arvalid = true;
        out_.araddr = s.addr;
      } else {
        out_.rready = true;
      }
      break;
    case FirmwareOp::WaitIrq:
    case FirmwareOp::Wait:
      break;
  }
  return out_;
}

void FirmwareRunner::sample(const AxiLiteSlavePins& p) {
  if (status_ != Status::Running) return;
  const FirmwareStep& s = script_.steps[step_];
  const char* file = script_.file.c_str();
  const auto hex = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  switch (s.op) {
    case FirmwareOp::Write:
      if (phase_ == Phase::Request) {
        aw_done_ = aw_done_ || (out_.awvalid && p.awready);
        w_done_ = w_done_ || (out_.wvalid && p.wready);
        if (aw_done_ && w_done_) phase_ = Phase::Response;
        if (aw_done_ && w_done_) access_cycles_ = 0;
      } else if (p.bvalid) {
        ++accesses_;
        if (p.bresp != 0) {
          std::snprintf(message_.data(), message_.size(), "%s:%u: write 0x%llx = 0x%llx answered bresp %u (%s)",
                        file, s.line, hex(s.addr), hex(s.value), p.bresp, p.bresp == 2 ? "SLVERR" : "DECERR");
          finish(Status::Error);
          return;
        }
        next_step();
      }
      return;
    case FirmwareOp::Read:
    case FirmwareOp::Poll:
      if (phase_ == Phase::Request) {
        if (p.arready) phase_ = Phase::Response, access_cycles_ = 0;
        return;
      }
      if (!p.rvalid) return;
      ++accesses_;
      last_read_ = p.rdata & data_mask_;
      if (p.rresp != 0) {
        std::snprintf(message_.data(), message_.size(), "%s:%u: %s 0x%llx answered rresp %u (%s)", file, s.line,
                      firmware_op_name(s.op), hex(s.addr), p.rresp, p.rresp == 2 ? "SLVERR" : "DECERR");
        finish(Status::Error);
        return;
      }
      if (s.op == FirmwareOp::Read) {
        if (s.expect && (last_read_ & s.mask) != (s.value & s.mask)) {
          char mask[40] = "";
          if (s.mask != ~0ull) std::snprintf(mask, sizeof mask, " (mask 0x%llx)", hex(s.mask));
          std::snprintf(message_.data(), message_.size(), "%s:%u: read 0x%llx expected 0x%llx%s, got 0x%llx",
                        file, s.line, hex(s.addr), hex(s.value), mask, hex(last_read_));
          finish(Status::Mismatch);
          return;
        }
        next_step();
        return;
      }
      if ((last_read_ & s.mask) == s.value) {
        next_step();
      } else if (elapsed_ >= s.cycles) {
        std::snprintf(message_.data(), message_.size(),
                      "%s:%u: poll 0x%llx & 0x%llx == 0x%llx timed out after %llu cycles (last read 0x%llx)",
                      file, s.line, hex(s.addr), hex(s.mask), hex(s.value), hex(elapsed_), hex(last_read_));
        finish(Status::Timeout);
      } else {
        phase_ = Phase::Request;  // read again
        access_cycles_ = 0;
      }
      return;
    case FirmwareOp::WaitIrq:
      if (p.irq) {
        next_step();
      } else if (elapsed_ >= s.cycles) {
        std::snprintf(message_.data(), message_.size(), "%s:%u: wait_irq timed out after %llu cycles", file,
                      s.line, hex(elapsed_));
        finish(Status::Timeout);
      }
      return;
    case FirmwareOp::Wait:
      if (elapsed_ + 1 >= s.cycles) next_step();
      return;
  }
}

void FirmwareRunner::tick() {
  if (status_ != Status::Running) return;
  ++elapsed_;
  ++access_cycles_;
  const FirmwareStep& s = script_.steps[step_];
  const bool access = s.op == FirmwareOp::Write || s.op == FirmwareOp::Read || s.op == FirmwareOp::Poll;
  if (access && access_cycles_ >= kFirmwareAccessTimeout) {
    std::snprintf(message_.data(), message_.size(),
                  "%s:%u: %s 0x%llx: the control port did not %s within %llu cycles", script_.file.c_str(),
                  s.line, firmware_op_name(s.op), static_cast<unsigned long long>(s.addr),
                  phase_ == Phase::Request ? "accept the request" : "respond",
                  static_cast<unsigned long long>(kFirmwareAccessTimeout));
    finish(Status::Timeout);
  }
}

void FirmwareRunner::save(std::vector<uint8_t>& out) const {
  StateWriter w{out};
  w.header(kMagic, kVersion);
  w.u64(script_.steps.size());
  w.u64(step_);
  w.u8(static_cast<uint8_t>(phase_));
  w.u8(aw_done_);
  w.u8(w_done_);
  w.u64(elapsed_);
  w.u64(access_cycles_);
  w.u64(last_read_);
  w.u64(accesses_);
  w.u8(static_cast<uint8_t>(status_));
  w.bytes(message_.data(), message_.size());
}

bool FirmwareRunner::restore(std::span<const uint8_t> in, size_t& offset, std::string& error) {
  StateReader r{in, offset, "firmware", {}};
  r.header(kMagic, kVersion);
  if (r.u64() != script_.steps.size() && r.ok()) r.fail("the state is of another script");
  const uint64_t step = r.u64();
  const uint8_t phase = r.u8();
  const bool aw = r.u8() != 0, wd = r.u8() != 0;
  const uint64_t elapsed = r.u64(), access = r.u64(), last = r.u64(), accesses = r.u64();
  const uint8_t status = r.u8();
  std::array<char, 320> msg{};
  r.bytes(msg.data(), msg.size());
  if (r.ok() && (step > script_.steps.size() || phase > 1 || status > static_cast<uint8_t>(Status::Error)))
    r.fail("bad step, phase or status");
  if (!r.ok()) {
    error = r.err;
    return false;
  }
  step_ = step;
  phase_ = static_cast<Phase>(phase);
  aw_done_ = aw;
  w_done_ = wd;
  elapsed_ = elapsed;
  access_cycles_ = access;
  last_read_ = last;
  accesses_ = accesses;
  status_ = static_cast<Status>(status);
  message_ = msg;
  message_.back() = 0;
  offset = r.pos;
  return true;
}

}  // namespace bud::design
