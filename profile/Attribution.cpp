#include "profile/Attribution.h"

#include "profile/ReadLe.h"

namespace bud::profile {

namespace {

// The signals that say what each holder holds: a state that is non-zero while it holds a
// command, and the id of that command (NpuEmulator::engines() reads the same signals). Fetch
// "holds" the ring entry it dispatches next (head_q) while the program runs; the lowering
// places command i at ring index i.
struct HolderSignals {
  const char* state;
  const char* id;
};
constexpr std::array<HolderSignals, kNumHolders> kHolderSignals = {{
    {"fetch.running_q", "fetch.head_q"},
    {"load.state", "load.id_q"},
    {"compute.state", "compute.id_q"},
    {"store.state", "store.id_q"},
}};

}  // namespace

const char* holder_name(Holder h) {
  switch (h) {
    case Holder::Fetch:
      return "fetch";
    case Holder::Load:
      return "load";
    case Holder::Compute:
      return "compute";
    case Holder::Store:
      return "store";
    case Holder::Count:
      break;
  }
  return "?";
}

Holder holder_of(isa::Engine e) {
  switch (e) {
    case isa::Engine::Fetch:
      return Holder::Fetch;
    case isa::Engine::Load:
      return Holder::Load;
    case isa::Engine::Gemm:
    case isa::Engine::Post:
      return Holder::Compute;
    case isa::Engine::Store:
      return Holder::Store;
  }
  return Holder::Fetch;
}

Holder holder_of(isa::Opcode op) {
  switch (op) {
    case isa::Opcode::Load:
      return holder_of(isa::Engine::Load);
    case isa::Opcode::Gemm:
      return holder_of(isa::Engine::Gemm);
    case isa::Opcode::Post:
      return holder_of(isa::Engine::Post);
    case isa::Opcode::Store:
      return holder_of(isa::Engine::Store);
    default:
      return Holder::Fetch;
  }
}

std::unique_ptr<Attribution> Attribution::attach(emu::Emulator& emu,
                                                 const workload::Program& program,
                                                 std::string& error) {
  const emu::DesignInfo& design = emu.describe();
  if (design.isa != "npu") {
    error = "design '" + design.name + "' does not run the NPU ISA (profiling reads its engines)";
    return nullptr;
  }
  std::unique_ptr<Attribution> a(new Attribution());
  for (int h = 0; h < kNumHolders; ++h) {
    Probe& p = a->probes_[h];
    const auto state = emu.find_signal(kHolderSignals[h].state);
    const auto id = emu.find_signal(kHolderSignals[h].id);
    if (!state || !id) {
      error = std::string("design has no signal ") +
              (state ? kHolderSignals[h].id : kHolderSignals[h].state);
      return nullptr;
    }
    p.state = emu.signal_address(*state, 0, p.state_bytes);
    p.id = emu.signal_address(*id, 0, p.id_bytes);
    if (!p.state || !p.id || p.state_bytes > 8 || p.id_bytes > 8) {
      error = std::string("design cannot expose ") + kHolderSignals[h].state + " / " +
              kHolderSignals[h].id + " by address";
      return nullptr;
    }
  }
  // Each counter that one holder's commands move, by name (positions are the design's).
  auto track = [&](Holder h, int slot, const std::string& name) {
    const auto index = design.find_counter(name);
    const void* addr = index ? emu.counter_address(*index) : nullptr;
    if (!addr) {
      error = "design has no counter " + name + " readable by address";
      return false;
    }
    a->tracked_[static_cast<int>(h)].push_back({slot, addr});
    a->slot_counter_[slot] = addr;
    return true;
  };
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto engine = static_cast<isa::Engine>(e);
    for (int c = 0; c < isa::kNumClasses; ++c) {
      const std::string name =
          std::string(isa::kEngineNames[e]) + "." + std::string(isa::kClassNames[c]);
      if (!track(holder_of(engine), class_slot(engine, static_cast<isa::CycleClass>(c)), name))
        return nullptr;
    }
  }
  if (!track(Holder::Compute, static_cast<int>(Slot::MacsIssued), "macs_issued") ||
      !track(Holder::Compute, static_cast<int>(Slot::MacsUseful), "macs_useful") ||
      !track(Holder::Store, static_cast<int>(Slot::DramWrBytes), "dram_wr_bytes") ||
      !track(Holder::Load, static_cast<int>(Slot::BankConflictsInp), "bank_conflicts_inp") ||
      !track(Holder::Load, static_cast<int>(Slot::BankConflictsWgt), "bank_conflicts_wgt") ||
      !track(Holder::Load, static_cast<int>(Slot::BankConflictsAcc), "bank_conflicts_acc") ||
      !track(Holder::Store, static_cast<int>(Slot::BankConflictsOut), "bank_conflicts_out"))
    return nullptr;
  struct Owned {
    Holder holder;
    Slot slot;
    const char* counter;
  };
  static constexpr Owned kEnergyCounters[] = {
      {Holder::Compute, Slot::SpadInpRd, "spad_inp_rd"},
      {Holder::Load, Slot::SpadInpWr, "spad_inp_wr"},
      {Holder::Compute, Slot::SpadWgtRd, "spad_wgt_rd"},
      {Holder::Load, Slot::SpadWgtWr, "spad_wgt_wr"},
      {Holder::Compute, Slot::SpadAccRd, "spad_acc_rd"},
      {Holder::Compute, Slot::SpadAccWr, "spad_acc_wr"},
      {Holder::Store, Slot::SpadOutRd, "spad_out_rd"},
      {Holder::Compute, Slot::SpadOutWr, "spad_out_wr"},
      {Holder::Load, Slot::RetiredLoad, "retired_load"},
      {Holder::Compute, Slot::RetiredGemm, "retired_gemm"},
      {Holder::Compute, Slot::RetiredPost, "retired_post"},
      {Holder::Store, Slot::RetiredStore, "retired_store"},
      {Holder::Fetch, Slot::RetiredSync, "retired_sync"},
      {Holder::Fetch, Slot::RetiredEnd, "retired_end"},
  };
  for (const Owned& o : kEnergyCounters)
    if (!track(o.holder, static_cast<int>(o.slot), o.counter)) return nullptr;
  // The MAC array's size from the design itself: CONFIG = {.., cols, rows}.
  const auto config = emu.read_csr(isa::csr::kConfig);
  a->array_macs_ = config ? (*config & 0xFF) * ((*config >> 8) & 0xFF) : 0;
  if (a->array_macs_ == 0) {
    error = "design reports no MAC array size (CONFIG CSR)";
    return nullptr;
  }
  a->counts_.resize(program.commands.size() + 1);
  return a;
}

uint32_t Attribution::held(const Probe& p) const {
  if (read_le(p.state, p.state_bytes) == 0) return kNone;
  return static_cast<uint32_t>(read_le(p.id, p.id_bytes));
}

void Attribution::on_start(uint64_t cycle) {
  (void)cycle;
  for (int h = 0; h < kNumHolders; ++h) {
    current_[h] = held(probes_[h]);
    for (const Tracked& t : tracked_[h]) last_[h][t.slot] = load<uint64_t>(t.counter);
  }
}

bool Attribution::after_cycle(uint64_t cycle) {
  for (int h = 0; h < kNumHolders; ++h) {
    // held(), written out so that it inlines.
    const Probe& p = probes_[h];
    const uint32_t now = read_le(p.state, p.state_bytes) == 0
                             ? kNone
                             : static_cast<uint32_t>(read_le(p.id, p.id_bytes));
    if (now != current_[h]) [[unlikely]]
      attribute(h, current_[h], now, cycle, false);
  }
  return false;
}

// The counters after edge t include cycle t, whose class the design computed from the state
// after edge t-1, when the holder still held `old_cmd`: the growth up to now is old_cmd's (or,
// if it held nothing, the next command's: `new_cmd`).
void Attribution::attribute(int h, uint32_t old_cmd, uint32_t new_cmd, uint64_t cycle, bool final) {
  ++changes_;
  const size_t tail = counts_.size() - 1;
  auto bucket = [&](uint32_t cmd) { return cmd < tail ? cmd : tail; };
  const bool to_old = old_cmd != kNone;
  CommandCounts& target = counts_[bucket(to_old ? old_cmd : new_cmd)];
  SlotCounts& into = to_old ? target.held : target.empty;
  for (const Tracked& t : tracked_[h]) {
    const uint64_t v = load<uint64_t>(t.counter);
    into[t.slot] += v - last_[h][t.slot];
    last_[h][t.slot] = v;
  }
  if (!final) {
    if (h == static_cast<int>(Holder::Fetch)) {
      if (to_old && old_cmd < tail) counts_[old_cmd].dispatched = cycle;
    } else {
      if (to_old && old_cmd < tail) counts_[old_cmd].released = cycle;
      if (new_cmd != kNone && new_cmd < tail) counts_[new_cmd].taken = cycle;
    }
  }
  current_[h] = new_cmd;
}

void Attribution::finish() {
  for (int h = 0; h < kNumHolders; ++h) {
    // Held: its command keeps it (the run stopped while it held one). Empty: the tail.
    const uint32_t old_cmd = current_[h];
    if (old_cmd != kNone) {
      attribute(h, old_cmd, old_cmd, 0, true);
    } else {
      attribute(h, kNone, static_cast<uint32_t>(counts_.size() - 1), 0, true);
      current_[h] = kNone;
    }
  }
  for (int s = 0; s < kNumSlots; ++s)
    totals_[s] = slot_counter_[s] ? load<uint64_t>(slot_counter_[s]) : 0;
}

}  // namespace bud::profile
