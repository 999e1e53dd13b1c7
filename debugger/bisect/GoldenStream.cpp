#include "debugger/bisect/GoldenStream.h"

#include <string>

namespace bud::debugger {

GoldenStream::GoldenStream(const run::PreparedRun& p, Sink sink)
    : prepared_(p), npu_(p.program.dram_bytes, p.program.array), sink_(std::move(sink)) {
  for (const auto& r : p.program.dram_init) npu_.write_dram(r.addr, r.bytes);
  npu_.set_observer(
      [this](const emu::StageTxn& t) { sink_(t, index_[static_cast<size_t>(t.stage)]++); });
  npu_.begin();
}

GoldenStream::Snapshot GoldenStream::snapshot() const {
  Snapshot s;
  npu_.save(s.npu);
  s.result = result_;
  s.index = index_;
  s.next = next_;
  return s;
}

void GoldenStream::restore(const Snapshot& s) {
  npu_.restore(s.npu);
  result_ = s.result;
  index_ = s.index;
  next_ = s.next;
  ended_ = false;
}

bool GoldenStream::step() {
  if (ended_) return false;
  const auto& commands = prepared_.program.commands;
  if (next_ >= commands.size()) {
    ended_ = true;
    result_.error =
        "program ended after " + std::to_string(commands.size()) + " commands without END";
    return false;
  }
  const auto outcome = npu_.step(commands[next_].encode(), next_, result_);
  ++next_;
  if (outcome != golden::GoldenNpu::Step::Next) ended_ = true;
  return true;
}

}  // namespace bud::debugger
