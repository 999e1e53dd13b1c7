#include "debugger/session/Breakpoints.h"

#include <algorithm>
#include <cstring>

#include "emu/isa/Isa.h"

namespace bud::debugger {

namespace {

std::string hex(const emu::SignalValue& v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v.low()));
  return buf;
}

}  // namespace

const char* break_kind_name(BreakKind k) {
  switch (k) {
    case BreakKind::Cycle: return "cycle";
    case BreakKind::Condition: return "condition";
    case BreakKind::Command: return "command";
    case BreakKind::WatchSignal:
    case BreakKind::WatchMemory: return "watch";
  }
  return "?";
}

int Breakpoints::add_cycle(uint64_t cycle, std::string& error) {
  if (cycle <= emu_.cycle()) {
    error = "cycle " + std::to_string(cycle) + " is not in the future (now " +
            std::to_string(emu_.cycle()) + ")";
    return 0;
  }
  Breakpoint b;
  b.id = next_id_++;
  b.kind = BreakKind::Cycle;
  b.cycle = cycle;
  b.spec = "cycle " + std::to_string(cycle);
  bps_.push_back(b);
  return b.id;
}

int Breakpoints::add_condition(const std::string& text, std::string& error) {
  EmulatorResolver resolver(emu_);
  auto r = compile(text, resolver);
  if (!r) {
    error = r.error.to_string();
    return 0;
  }
  Breakpoint b;
  b.id = next_id_++;
  b.kind = BreakKind::Condition;
  b.cond = std::make_shared<Expr>(std::move(*r.expr));
  b.spec = "if " + b.cond->to_string();
  bps_.push_back(b);
  return b.id;
}

int Breakpoints::add_command(const CommandMatch& m, const std::string& spec, std::string&) {
  Breakpoint b;
  b.id = next_id_++;
  b.kind = BreakKind::Command;
  b.match = m;
  b.spec = spec;
  bps_.push_back(b);
  return b.id;
}

int Breakpoints::add_watch_signal(const std::string& name, std::string& error) {
  // name may carry an index: "tokens[2]"
  std::string base = name;
  uint32_t element = 0;
  if (auto lb = name.find('['); lb != std::string::npos && name.back() == ']') {
    base = name.substr(0, lb);
    element = static_cast<uint32_t>(std::strtoul(name.c_str() + lb + 1, nullptr, 0));
  }
  auto id = emu_.find_signal(base);
  if (!id) {
    error = "unknown signal '" + base + "'";
    return 0;
  }
  if (element >= emu_.signals()[*id].elements) {
    error = "index " + std::to_string(element) + " out of range for " + base;
    return 0;
  }
  Breakpoint b;
  b.id = next_id_++;
  b.kind = BreakKind::WatchSignal;
  b.signal = *id;
  b.element = element;
  b.last_value = emu_.read_signal(*id, element);
  b.spec = "watch " + name;
  bps_.push_back(b);
  return b.id;
}

int Breakpoints::add_watch_memory(const std::string& memory, uint64_t offset, uint32_t width,
                                  std::string& error) {
  if (width == 0 || width > 8) {
    error = "watch width must be 1..8 bytes";
    return 0;
  }
  Breakpoint b;
  b.id = next_id_++;
  b.kind = BreakKind::WatchMemory;
  b.memory = memory;
  b.offset = offset;
  b.width = width;
  if (!emu_.read_memory(memory, offset, std::span<uint8_t>(b.last_bytes.data(), width))) {
    error = "address 0x" + [&] {
      char buf[24];
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(offset));
      return std::string(buf);
    }() + " is outside memory '" + memory + "'";
    --next_id_;
    return 0;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "watch %s[0x%llx]", memory.c_str(),
                static_cast<unsigned long long>(offset));
  b.spec = buf;
  bps_.push_back(b);
  return b.id;
}

bool Breakpoints::set_filter(int id, const std::string& text, std::string& error) {
  Breakpoint* bp = nullptr;
  for (auto& b : bps_)
    if (b.id == id) bp = &b;
  if (!bp) {
    error = "no breakpoint " + std::to_string(id);
    return false;
  }
  if (text.find_first_not_of(" \t") == std::string::npos) {
    bp->filter.reset();
    return true;
  }
  EmulatorResolver resolver(emu_);
  auto r = compile(text, resolver);
  if (!r) {
    error = r.error.to_string();
    return false;
  }
  if (r.expr->stateful()) {
    // A windowed function would need its history on every cycle, which a filter only
    // evaluated on hits does not have.
    error = "condition " + std::to_string(id) + ": windowed functions (rate, delta, ...) are not "
            "allowed in a breakpoint condition; use `break if` for them";
    return false;
  }
  bp->filter = std::make_shared<Expr>(std::move(*r.expr));
  return true;
}

bool Breakpoints::set_commands(int id, std::vector<std::string> commands) {
  for (auto& b : bps_) {
    if (b.id == id) {
      b.commands = std::move(commands);
      return true;
    }
  }
  return false;
}

bool Breakpoints::set_temporary(int id, bool temporary) {
  for (auto& b : bps_) {
    if (b.id == id) {
      b.temporary = temporary;
      return true;
    }
  }
  return false;
}

bool Breakpoints::set_spec(int id, std::string spec) {
  for (auto& b : bps_) {
    if (b.id == id) {
      b.spec = std::move(spec);
      return true;
    }
  }
  return false;
}

void Breakpoints::remove_internal(int id) {
  if (remove(id) && id == next_id_ - 1) --next_id_;
}

const Breakpoint* Breakpoints::find(int id) const {
  for (const auto& b : bps_)
    if (b.id == id) return &b;
  return nullptr;
}

bool Breakpoints::passes(Breakpoint& b) {
  return !b.filter || b.filter->eval(sampler_).truthy();
}

bool Breakpoints::remove(int id) {
  for (auto it = bps_.begin(); it != bps_.end(); ++it) {
    if (it->id == id) {
      bps_.erase(it);
      return true;
    }
  }
  return false;
}

void Breakpoints::remove_all() { bps_.clear(); }

bool Breakpoints::set_enabled(int id, bool enabled) {
  for (auto& b : bps_) {
    if (b.id == id) {
      b.enabled = enabled;
      return true;
    }
  }
  return false;
}

bool Breakpoints::set_hits(int id, uint64_t hits) {
  for (auto& b : bps_) {
    if (b.id == id) {
      b.hits = hits;
      return true;
    }
  }
  return false;
}

bool Breakpoints::any_enabled() const {
  for (const auto& b : bps_)
    if (b.enabled) return true;
  return false;
}

void Breakpoints::arm() {
  hits_.clear();
  pending_cmd_hit_ = false;
  pending_cmd_ids_.clear();
  pending_cmd_details_.clear();
  hits_.reserve(bps_.size() + 4);
  pending_cmd_ids_.reserve(bps_.size());
  pending_cmd_details_.reserve(bps_.size());
  fast_.clear();
  slow_.clear();
  for (auto& b : bps_) {
    if (b.kind == BreakKind::Condition && b.enabled)
      if (auto s = b.cond->simple_compare()) fast_.push_back({*s, &b});
    if (fast_.empty() || fast_.back().bp != &b) slow_.push_back(static_cast<size_t>(&b - bps_.data()));
    switch (b.kind) {
      case BreakKind::Condition:
        // A condition stops when it becomes true. A stateless one that already holds must first
        // turn false; a windowed one starts its windows now and counts as false.
        b.cond->arm(sampler_);
        b.was_true = !b.cond->stateful() && Expr(*b.cond).eval(sampler_).truthy();
        break;
      case BreakKind::WatchSignal:
        b.last_value = emu_.read_signal(b.signal, b.element);
        break;
      case BreakKind::WatchMemory:
        emu_.read_memory(b.memory, b.offset, std::span<uint8_t>(b.last_bytes.data(), b.width));
        break;
      default:
        break;
    }
  }
}

void Breakpoints::on_txn(const emu::StageTxn& txn) {
  if (txn.stage != emu::Stage::Fetch) return;
  std::array<uint64_t, 4> w{};
  std::memcpy(w.data(), txn.data.data(), 32);
  const auto cmd = isa::Command::decode(w);
  for (const auto& b : bps_) {
    if (!b.enabled || b.kind != BreakKind::Command) continue;
    const auto& m = b.match;
    if (m.opcode && *m.opcode != cmd.raw_opcode) continue;
    if (m.cmd_id && *m.cmd_id != cmd.cmd_id) continue;
    if (m.layer && *m.layer != cmd.layer) continue;
    pending_cmd_hit_ = true;
    pending_cmd_ids_.push_back(b.id);
    pending_cmd_details_.push_back("dispatched " + cmd.to_string());
  }
}

bool Breakpoints::after_cycle(uint64_t cycle) {
  bool stop = false;
  for (const Fast& f : fast_) {
    int64_t v;
    std::memcpy(&v, f.cmp.direct, 8);
    const bool now = f.cmp.test(v);
    if (now && !f.bp->was_true && passes(*f.bp)) [[unlikely]] {
      ++f.bp->hits;
      hits_.push_back({f.bp->id, f.bp->cond->to_string()});
      stop = true;
    }
    f.bp->was_true = now;
  }
  for (const size_t i : slow_) {
    Breakpoint& b = bps_[i];
    if (!b.enabled) {
      // Disabled conditions still advance their windows so re-enabling sees a coherent history.
      if (b.kind == BreakKind::Condition) b.cond->eval(sampler_);
      continue;
    }
    switch (b.kind) {
      case BreakKind::Cycle:
        if (cycle == b.cycle && passes(b)) {
          ++b.hits;
          hits_.push_back({b.id, "reached cycle " + std::to_string(cycle)});
          stop = true;
        }
        break;
      case BreakKind::Condition: {
        const bool now = b.cond->eval(sampler_).truthy();
        if (now && !b.was_true && passes(b)) {
          ++b.hits;
          hits_.push_back({b.id, b.cond->to_string()});
          stop = true;
        }
        b.was_true = now;
        break;
      }
      case BreakKind::WatchSignal: {
        const auto v = emu_.read_signal(b.signal, b.element);
        if (!(v == b.last_value)) {
          if (!passes(b)) {
            b.last_value = v;
            break;
          }
          ++b.hits;
          hits_.push_back({b.id, emu_.signals()[b.signal].name + ": " + hex(b.last_value) +
                                     " -> " + hex(v)});
          b.last_value = v;
          stop = true;
        }
        break;
      }
      case BreakKind::WatchMemory: {
        std::array<uint8_t, 8> now{};
        emu_.read_memory(b.memory, b.offset, std::span<uint8_t>(now.data(), b.width));
        if (std::memcmp(now.data(), b.last_bytes.data(), b.width) != 0) {
          if (!passes(b)) {
            b.last_bytes = now;
            break;
          }
          uint64_t before = 0, after = 0;
          std::memcpy(&before, b.last_bytes.data(), b.width);
          std::memcpy(&after, now.data(), b.width);
          char buf[96];
          std::snprintf(buf, sizeof buf, "%s[0x%llx]: 0x%llx -> 0x%llx", b.memory.c_str(),
                        static_cast<unsigned long long>(b.offset),
                        static_cast<unsigned long long>(before),
                        static_cast<unsigned long long>(after));
          ++b.hits;
          hits_.push_back({b.id, buf});
          b.last_bytes = now;
          stop = true;
        }
        break;
      }
      case BreakKind::Command:
        break;
    }
  }
  if (stop && !fast_.empty() && hits_.size() > 1)  // report in breakpoint order, as listed
    std::stable_sort(hits_.begin(), hits_.end(),
                     [](const Hit& a, const Hit& b) { return a.id < b.id; });
  if (pending_cmd_hit_) {
    bool any = false;
    for (size_t i = 0; i < pending_cmd_ids_.size(); ++i) {
      bool pass = true;
      for (auto& b : bps_)
        if (b.id == pending_cmd_ids_[i]) {
          pass = passes(b);
          if (pass) ++b.hits;
        }
      if (!pass) continue;
      any = true;
      hits_.push_back({pending_cmd_ids_[i], pending_cmd_details_[i]});
    }
    pending_cmd_hit_ = false;
    pending_cmd_ids_.clear();
    pending_cmd_details_.clear();
    stop |= any;
  }
  return stop;
}

emu::CycleHook* BreakpointParticipant::cycle_hook() { return &b_; }
emu::TxnObserver* BreakpointParticipant::txn_observer() { return &b_; }

void BreakpointParticipant::on_start(uint64_t) {
  if (!armed_) b_.arm();
  armed_ = true;
}

void BreakpointParticipant::on_rewind(uint64_t) { b_.arm(); }

drive::PauseAction BreakpointParticipant::on_pause(uint64_t) {
  return b_.hits().empty() ? drive::PauseAction::Continue : drive::PauseAction::Halt;
}

}  // namespace bud::debugger
