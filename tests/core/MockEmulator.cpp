#include "tests/core/MockEmulator.h"

#include <algorithm>
#include <cstring>

#include "emu/core/Hash.h"

namespace bud::emu {

namespace {

constexpr char kMagic[8] = {'B', 'U', 'D', 'M', 'O', 'C', 'K', '2'};  // 2: XXH3 checksum

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

}  // namespace

MockEmulator::MockEmulator(const MockConfig& config) : config_(config) {
  s_.lfsr = config.seed ? config.seed : 1;
  signals_ = {
      {"cycle", 64, 1, SignalKind::Counter, false, "cycles since reset"},
      {"lfsr", 32, 1, SignalKind::State, true, "Galois LFSR (taps 0x80200003)"},
      {"acc", 64, 1, SignalKind::State, true, "accumulator: += (lfsr & 0xff) | 1 per cycle"},
      {"regs", 16, 4, SignalKind::State, true, "regs[cycle % 4] += lfsr >> 16"},
      {"done", 1, 1, SignalKind::Port, false, "program finished"},
  };
  memories_ = {{"ram", kRamBytes, 8}};
  info_.name = "mock";
  info_.counters = {"cycles", "transactions"};
  info_.stages.assign(kNumStages, "");
  info_.stages[static_cast<int>(Stage::Load)] = "ram";
  info_.stages[static_cast<int>(Stage::Gemm)] = "acc";
}

std::string MockEmulator::load(const HostJob& job) {
  if (job.commands.empty()) return "mock: the job has no commands";
  s_ = State{};
  const uint32_t seed =
      (config_.seed ? config_.seed : 1) ^ static_cast<uint32_t>(job.fingerprint());
  s_.lfsr = seed ? seed : 1;
  for (const auto& r : job.image)
    for (size_t i = 0; i < r.bytes.size(); ++i) s_.ram[(r.addr + i) % kRamBytes] ^= r.bytes[i];
  config_.length = 64 * job.commands.size();
  faults_.clear();
  return {};
}

std::string MockEmulator::add_fault(const FaultSpec& f) {
  if (f.kind == FaultKind::Flip) {
    const auto id = find_signal(f.target);
    if (!id || !signals_[*id].writable)
      return "fault " + f.to_string() + ": no writable signal " + f.target;
    if (f.element >= signals_[*id].elements || f.bit >= signals_[*id].width)
      return "fault " + f.to_string() + ": element or bit out of range";
  } else if (f.kind == FaultKind::MemFlip) {
    if (f.target != "ram" || f.addr >= kRamBytes || f.bit > 7)
      return "fault " + f.to_string() + ": not a byte of ram";
  } else {
    return "fault " + f.to_string() + ": the mock has no " + fault_kind_name(f.kind) + " faults";
  }
  faults_.push_back(f);
  return {};
}

void MockEmulator::apply_faults() {
  for (const auto& f : faults_) {
    if (f.cycle != s_.cycle) continue;
    if (f.kind == FaultKind::MemFlip) {
      s_.ram[f.addr] ^= static_cast<uint8_t>(1u << f.bit);
      continue;
    }
    const SignalId id = *find_signal(f.target);
    SignalValue v = read_signal(id, f.element);
    v.words[f.bit / 64] ^= uint64_t{1} << (f.bit % 64);
    write(id, f.element, v);
  }
}

void MockEmulator::emit(Stage stage, uint32_t addr, std::span<const uint8_t> data) {
  txn_.stage = stage;
  txn_.buffer = 0;
  txn_.size = static_cast<uint16_t>(data.size());
  txn_.cmd_id = static_cast<uint32_t>(s_.cycle / 16);
  txn_.addr = addr;
  txn_.cycle = s_.cycle;
  txn_.data.fill(0);
  std::copy(data.begin(), data.end(), txn_.data.begin());
  s_.digests[static_cast<int>(stage)].add(txn_);
  ++s_.counters[1];
  if (observer_) observer_->on_txn(txn_);
}

void MockEmulator::tick() {
  // Transactions are sampled before the edge, like the NPU's observation ports; they carry the
  // cycle of the edge they take effect at.
  if (!faults_.empty()) apply_faults();
  const uint32_t bit = s_.lfsr & 1u;
  uint32_t next = s_.lfsr >> 1;
  if (bit) next ^= 0x80200003u;
  const uint32_t addr = static_cast<uint32_t>((s_.cycle * 7) % kRamBytes);
  ++s_.cycle;
  s_.lfsr = next;
  s_.acc += (next & 0xffu) | 1u;
  auto& reg = s_.regs[s_.cycle % 4];
  reg = static_cast<uint16_t>(reg + (next >> 16));
  s_.ram[addr] ^= static_cast<uint8_t>(next);
  ++s_.counters[0];
  if ((next & 3u) == 0) {
    const uint32_t base = addr & ~7u;
    emit(Stage::Load, base, std::span<const uint8_t>(s_.ram.data() + base, 8));
  }
  if (s_.cycle % 8 == 0) {
    std::array<uint8_t, 8> a;
    std::memcpy(a.data(), &s_.acc, 8);
    emit(Stage::Gemm, static_cast<uint32_t>(s_.cycle / 8), a);
  }
  for (uint32_t i = 0; i < s_.num_forces; ++i)
    write(s_.forces[i].id, s_.forces[i].element, s_.forces[i].value);
  if (s_.cycle >= config_.length) s_.state = RunState::Finished;
}

StepResult MockEmulator::step(uint64_t max_cycles) {
  StepResult r;
  const uint64_t start = s_.cycle;
  while (s_.state == RunState::Ready && s_.cycle - start < max_cycles) {
    tick();
    if (s_.state != RunState::Ready) break;
    if (hook_ && hook_->after_cycle(s_.cycle)) {
      r.hook_stop = true;
      break;
    }
  }
  r.cycles = s_.cycle - start;
  r.state = s_.state;
  r.reached_limit = s_.state == RunState::Ready && !r.hook_stop;
  return r;
}

void MockEmulator::save(std::vector<uint8_t>& out) const {
  const size_t start = out.size();
  out.insert(out.end(), kMagic, kMagic + 8);
  put(out, config_.seed);
  put(out, config_.length);
  put(out, s_.cycle);
  put(out, s_.lfsr);
  put(out, s_.acc);
  put(out, s_.regs);
  put(out, static_cast<uint8_t>(s_.state));
  for (const auto& d : s_.digests) {
    put(out, d.count);
    put(out, d.sum);
  }
  put(out, s_.counters);
  put(out, s_.ram);
  put(out, s_.num_forces);
  for (uint32_t i = 0; i < s_.num_forces; ++i) {
    put(out, s_.forces[i].id);
    put(out, s_.forces[i].element);
    put(out, s_.forces[i].value.width);
    put(out, s_.forces[i].value.words);
  }
  put(out, hash64(std::span<const uint8_t>(out.data() + start, out.size() - start)));
}

bool MockEmulator::restore(std::span<const uint8_t> in, std::string& error) {
  if (in.size() < 8 || std::memcmp(in.data(), kMagic, 8) != 0) {
    error = "not a mock state (bad magic at byte 0)";
    return false;
  }
  if (in.size() < 16) {
    error = "mock state truncated at byte " + std::to_string(in.size());
    return false;
  }
  // Parse into a temporary; commit only when everything checked out.
  size_t off = 8;
  State s;
  MockConfig c;
  uint8_t state = 0;
  bool ok = get(in, off, c.seed) && get(in, off, c.length);
  const size_t config_end = off;
  ok = ok && get(in, off, s.cycle) && get(in, off, s.lfsr) && get(in, off, s.acc) &&
       get(in, off, s.regs) && get(in, off, state);
  for (auto& d : s.digests) ok = ok && get(in, off, d.count) && get(in, off, d.sum);
  ok = ok && get(in, off, s.counters) && get(in, off, s.ram) && get(in, off, s.num_forces);
  if (ok && s.num_forces > kMaxForces) {
    error = "mock state: " + std::to_string(s.num_forces) + " forces at byte " +
            std::to_string(off - 4) + " (at most " + std::to_string(kMaxForces) + ")";
    return false;
  }
  for (uint32_t i = 0; ok && i < s.num_forces; ++i) {
    auto& f = s.forces[i];
    ok = get(in, off, f.id) && get(in, off, f.element) && get(in, off, f.value.width) &&
         get(in, off, f.value.words);
  }
  const size_t body_end = off;
  uint64_t sum = 0;
  if (!ok || !get(in, off, sum)) {
    error = "mock state truncated at byte " + std::to_string(in.size());
    return false;
  }
  if (sum != hash64(in.subspan(0, body_end))) {
    error = "mock state checksum mismatch at byte " + std::to_string(body_end);
    return false;
  }
  if (off != in.size()) {
    error = "mock state has " + std::to_string(in.size() - off) + " extra bytes at byte " +
            std::to_string(off);
    return false;
  }
  if (c.seed != config_.seed || c.length != config_.length) {
    error = "mock state at byte 8..." + std::to_string(config_end) +
            " belongs to another configuration";
    return false;
  }
  if (state > static_cast<uint8_t>(RunState::Error)) {
    error = "mock state: invalid run state at byte 8";
    return false;
  }
  for (uint32_t i = 0; i < s.num_forces; ++i) {
    if (s.forces[i].id >= kNumSignals || !signals_[s.forces[i].id].writable ||
        s.forces[i].element >= signals_[s.forces[i].id].elements) {
      error = "mock state: force " + std::to_string(i) + " names no writable signal";
      return false;
    }
  }
  s.state = static_cast<RunState>(state);
  s_ = s;
  return true;
}

uint64_t MockEmulator::digest() {
  // The architectural state: registers, RAM and time (not digests, counters or forces).
  std::vector<uint8_t> b;
  put(b, s_.cycle);
  put(b, s_.lfsr);
  put(b, s_.acc);
  put(b, s_.regs);
  put(b, static_cast<uint8_t>(s_.state));
  put(b, s_.ram);
  return hash64(b);
}

std::optional<SignalId> MockEmulator::find_signal(std::string_view name) const {
  for (SignalId i = 0; i < signals_.size(); ++i)
    if (signals_[i].name == name) return i;
  return std::nullopt;
}

SignalValue MockEmulator::read_signal(SignalId id, uint32_t element) const {
  SignalValue v;
  if (id >= kNumSignals || element >= signals_[id].elements) return v;
  v.width = signals_[id].width;
  switch (id) {
    case kCycle:
      v.words[0] = s_.cycle;
      break;
    case kLfsr:
      v.words[0] = s_.lfsr;
      break;
    case kAcc:
      v.words[0] = s_.acc;
      break;
    case kRegs:
      v.words[0] = s_.regs[element];
      break;
    case kDone:
      v.words[0] = s_.state == RunState::Finished ? 1 : 0;
      break;
    default:
      break;
  }
  return v;
}

void MockEmulator::write(SignalId id, uint32_t element, const SignalValue& v) {
  switch (id) {
    case kLfsr:
      s_.lfsr = static_cast<uint32_t>(v.words[0]);
      break;
    case kAcc:
      s_.acc = v.words[0];
      break;
    case kRegs:
      s_.regs[element] = static_cast<uint16_t>(v.words[0]);
      break;
    default:
      break;
  }
}

bool MockEmulator::deposit_signal(SignalId id, uint32_t element, const SignalValue& v) {
  if (id >= kNumSignals || element >= signals_[id].elements || !signals_[id].writable) return false;
  write(id, element, v);
  return true;
}

bool MockEmulator::force_signal(SignalId id, uint32_t element, const SignalValue& v) {
  if (!deposit_signal(id, element, v)) return false;
  for (uint32_t i = 0; i < s_.num_forces; ++i) {
    if (s_.forces[i].id == id && s_.forces[i].element == element) {
      s_.forces[i].value = v;
      return true;
    }
  }
  if (s_.num_forces == kMaxForces) return false;
  s_.forces[s_.num_forces++] = {id, element, v};
  return true;
}

void MockEmulator::release_signal(SignalId id, uint32_t element) {
  for (uint32_t i = 0; i < s_.num_forces; ++i) {
    if (s_.forces[i].id == id && s_.forces[i].element == element) {
      s_.forces[i] = s_.forces[--s_.num_forces];
      return;
    }
  }
}

bool MockEmulator::read_memory(std::string_view memory, uint64_t offset,
                               std::span<uint8_t> out) const {
  if (memory != "ram" || offset > kRamBytes || out.size() > kRamBytes - offset) return false;
  std::memcpy(out.data(), s_.ram.data() + offset, out.size());
  return true;
}

bool MockEmulator::write_memory(std::string_view memory, uint64_t offset,
                                std::span<const uint8_t> in) {
  if (memory != "ram" || offset > kRamBytes || in.size() > kRamBytes - offset) return false;
  std::memcpy(s_.ram.data() + offset, in.data(), in.size());
  return true;
}

uint64_t MockEmulator::counter(int index) const {
  return index >= 0 && index < kNumCounters ? s_.counters[static_cast<size_t>(index)] : 0;
}

}  // namespace bud::emu
