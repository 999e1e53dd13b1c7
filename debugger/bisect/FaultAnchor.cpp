#include "debugger/bisect/FaultAnchor.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "emu/drive/Driver.h"
#include "emu/run/Designs.h"

namespace bud::debugger {

namespace {

std::optional<CmdKey> key_of(const run::PreparedRun& p, uint32_t cmd) {
  const auto& cmds = p.program.commands;
  if (cmd >= cmds.size()) return std::nullopt;
  const auto layer = p.program.layer_of_command(cmd);
  if (!layer || *layer < 0 || static_cast<size_t>(*layer) >= p.workload.layers.size())
    return std::nullopt;
  CmdKey k{p.workload.layers[*layer].name, cmds[cmd].opcode, 0, 0};
  for (uint32_t i = 0; i < cmds.size(); ++i) {
    if (cmds[i].opcode != k.op || p.program.layer_of_command(i) != layer) continue;
    if (i < cmd) ++k.ordinal;
    ++k.of;
  }
  return k;
}

/// The command with key `k` in `p`, or why there is none. When the layer has fewer commands of
/// that opcode now (its rows were halved), the one at the same place in the layer, and `why`
/// says so.
std::optional<uint32_t> cmd_of(const run::PreparedRun& p, const CmdKey& k, std::string& why) {
  std::optional<int> layer;
  for (size_t l = 0; l < p.workload.layers.size(); ++l)
    if (p.workload.layers[l].name == k.layer) layer = static_cast<int>(l);
  if (!layer) {
    why = "layer '" + k.layer + "' was removed";
    return std::nullopt;
  }
  std::vector<uint32_t> same;  // the layer's commands of that opcode, in order
  for (uint32_t i = 0; i < p.program.commands.size(); ++i)
    if (p.program.commands[i].opcode == k.op && p.program.layer_of_command(i) == layer)
      same.push_back(i);
  if (k.ordinal < same.size()) return same[k.ordinal];
  why = "layer '" + k.layer + "' has " + std::to_string(same.size()) + " " +
        isa::opcode_name(static_cast<uint8_t>(k.op)) + " commands now, the fault's was number " +
        std::to_string(k.ordinal) + " of " + std::to_string(k.of);
  if (same.empty() || k.of == 0) return std::nullopt;
  const auto at = static_cast<uint32_t>(uint64_t{k.ordinal} * same.size() / k.of);
  why += ": moved to number " + std::to_string(at) + ", the same place in the layer";
  return same[std::min<size_t>(at, same.size() - 1)];
}

/// The engine that executes commands of `op` ("" for none: SYNC, END).
std::string engine_of(isa::Opcode op) {
  switch (op) {
    case isa::Opcode::Load: return "load";
    case isa::Opcode::Gemm:
    case isa::Opcode::Post: return "compute";
    case isa::Opcode::Store: return "store";
    default: return "";
  }
}

/// The stage whose transactions a command of `op` produces.
std::optional<emu::Stage> stage_of(isa::Opcode op) {
  switch (op) {
    case isa::Opcode::Load: return emu::Stage::Load;
    case isa::Opcode::Gemm: return emu::Stage::Gemm;
    case isa::Opcode::Post: return emu::Stage::Post;
    case isa::Opcode::Store: return emu::Stage::Store;
    default: return std::nullopt;
  }
}

/// The engine whose work a signal fault acts on ("compute.shift" -> compute), or "".
std::string signal_engine(const emu::FaultSpec& f) {
  if (f.kind != emu::FaultKind::Flip && f.kind != emu::FaultKind::Stuck) return "";
  const auto dot = f.target.find('.');
  const std::string unit = dot == std::string::npos ? "" : f.target.substr(0, dot);
  return unit == "load" || unit == "compute" || unit == "store" ? unit : "";
}

/// The SRAM buffer a scratchpad flip targets ("inp", "wgt", "acc", "out"), if it is one.
std::optional<uint8_t> sram_buffer(const emu::FaultSpec& f) {
  if (f.kind != emu::FaultKind::MemFlip) return std::nullopt;
  for (uint8_t b = 0; b < 4; ++b)
    if (f.target == isa::buffer_name(static_cast<isa::Buffer>(b))) return b;
  return std::nullopt;
}

/// One stage transaction of a watched run, without its data.
struct TxnMark {
  emu::Stage stage;
  uint8_t buffer, segment;
  uint32_t cmd, addr;
  uint64_t cycle;
  bool same_entry(const TxnMark& o) const {
    return stage == o.stage && buffer == o.buffer && segment == o.segment && addr == o.addr;
  }
};

/// Watches a run: which command the load, compute and store engines hold and since when
/// (engines hold one command at a time), and every stage transaction past fetch. Calls `each`
/// after every cycle (true: stop the run).
class TakeWatch final : public emu::CycleHook, public emu::TxnObserver, public drive::Participant {
 public:
  using Each = std::function<bool(const TakeWatch&, uint64_t cycle)>;
  TakeWatch(emu::Emulator& emu, Each each) : emu_(emu), each_(std::move(each)) {
    for (const char* e : {"load", "compute", "store"}) {
      auto st = emu.find_signal(std::string(e) + ".state");
      auto id = emu.find_signal(std::string(e) + ".id_q");
      if (st && id) engines_.push_back({e, *st, *id});
    }
  }
  bool after_cycle(uint64_t cycle) override {
    for (auto& e : engines_) {
      const bool held = emu_.read_signal(e.state).low() != 0;
      const auto cmd = static_cast<uint32_t>(emu_.read_signal(e.id).low());
      if (held && (!e.held || cmd != e.cmd)) {
        e.since = cycle;
        taken_.push_back({e.name, cmd, cycle});
      }
      e.held = held;
      e.cmd = cmd;
    }
    done_ = each_ && each_(*this, cycle);
    return done_;
  }
  void on_txn(const emu::StageTxn& t) override {
    if (t.stage != emu::Stage::Fetch)
      txns_.push_back({t.stage, t.buffer, t.segment, t.cmd_id, t.addr, t.cycle});
  }
  // drive::Participant: watches every cycle; `each` saying stop halts the run.
  emu::CycleHook* cycle_hook() override { return this; }
  emu::TxnObserver* txn_observer() override { return this; }
  drive::PauseAction on_pause(uint64_t) override {
    return done_ ? drive::PauseAction::Halt : drive::PauseAction::Continue;
  }
  /// The command `engine` holds now and the cycle it took it, if it holds one.
  std::optional<std::pair<uint32_t, uint64_t>> holding(const std::string& engine) const {
    for (const auto& e : engines_)
      if (e.name == engine && e.held) return std::make_pair(e.cmd, e.since);
    return std::nullopt;
  }
  /// When `engine` first took command `cmd`.
  std::optional<uint64_t> taken(const std::string& engine, uint32_t cmd) const {
    for (const auto& t : taken_)
      if (t.engine == engine && t.cmd == cmd) return t.cycle;
    return std::nullopt;
  }
  /// The transactions of command `cmd` on `stage`, in order.
  std::vector<TxnMark> txns_of(uint32_t cmd, emu::Stage stage) const {
    std::vector<TxnMark> v;
    for (const auto& t : txns_)
      if (t.cmd == cmd && t.stage == stage) v.push_back(t);
    return v;
  }
  const std::vector<TxnMark>& txns() const { return txns_; }

 private:
  struct Engine {
    std::string name;
    emu::SignalId state, id;
    bool held = false;
    uint32_t cmd = 0;
    uint64_t since = 0;
  };
  struct Take {
    std::string engine;
    uint32_t cmd;
    uint64_t cycle;
  };
  emu::Emulator& emu_;
  Each each_;
  bool done_ = false;
  std::vector<Engine> engines_;
  std::vector<Take> taken_;
  std::vector<TxnMark> txns_;
};

/// A run of `p` without its faults to its end, watching the engines and the transactions
/// (`each` after every cycle), kept for lookups.
struct Watched {
  std::unique_ptr<emu::Emulator> emu;
  std::optional<TakeWatch> watch;
  TakeWatch* w = nullptr;  ///< null when the run could not start
  Watched(const run::PreparedRun& p, const run::RunOptions& options, TakeWatch::Each each = nullptr) {
    run::RunOptions o = options;
    o.faults.clear();
    std::string error;
    auto made = emu::make_emulator(o.emulator, error);
    if (!made) return;
    emu = std::move(made);
    if (!run::start(p, o, *emu).empty()) return;
    watch.emplace(*emu, std::move(each));
    drive::advance(*emu, o.max_cycles, {&*watch});
    w = &*watch;
  }
  uint32_t word_bytes(uint8_t buffer) const {
    if (!emu) return 0;
    for (const auto& m : emu->memories())
      if (m.name == isa::buffer_name(static_cast<isa::Buffer>(buffer))) return m.word_bytes;
    return 0;
  }
};

/// The element a fault acts on among `txns` (a command's transactions on one stage): the first
/// at or after `cycle`.
std::optional<ElementAnchor> element_at(const std::vector<TxnMark>& txns, uint64_t cycle) {
  for (size_t i = 0; i < txns.size(); ++i) {
    if (txns[i].cycle < cycle) continue;
    ElementAnchor e;
    e.stage = txns[i].stage;
    e.buffer = txns[i].buffer;
    e.segment = txns[i].segment;
    e.addr = txns[i].addr;
    for (size_t j = 0; j < i; ++j) e.occurrence += txns[j].same_entry(txns[i]);
    e.ordinal = static_cast<uint32_t>(i);
    e.of = static_cast<uint32_t>(txns.size());
    e.offset = static_cast<int64_t>(cycle) - static_cast<int64_t>(txns[i].cycle);
    return e;
  }
  return std::nullopt;
}

}  // namespace

std::string CmdKey::text() const {
  return isa::opcode_name(static_cast<uint8_t>(op)) + " " + std::to_string(ordinal) + " of layer '" +
         layer + "'";
}

std::string ElementAnchor::text() const {
  return std::string(emu::stage_name(stage)) + " " +
         isa::buffer_name(static_cast<isa::Buffer>(buffer)) + "[" + std::to_string(addr) + "]" +
         (segment ? ".seg" + std::to_string(segment) : "") +
         (memory ? " byte " + std::to_string(byte_in_entry) : "") + " (transaction " +
         std::to_string(ordinal) + " of " + std::to_string(of) + "), " +
         (offset == 0 ? std::string("at its cycle")
                      : std::to_string(offset < 0 ? -offset : offset) +
                            (offset < 0 ? " cycles before it" : " cycles after it"));
}

std::vector<std::optional<Anchor>> make_anchors(const run::PreparedRun& p,
                                                const run::RunOptions& options,
                                                std::optional<uint32_t> verdict_cmd,
                                                std::vector<std::string>& lines) {
  const auto& faults = options.faults;
  std::vector<std::optional<Anchor>> out(faults.size());
  // The command each signal fault's engine holds at the fault's cycle, or takes next.
  std::vector<std::optional<uint32_t>> held(faults.size());
  const Watched run(p, options, [&](const TakeWatch& w, uint64_t cycle) {
    for (size_t i = 0; i < faults.size(); ++i) {
      const std::string engine = signal_engine(faults[i]);
      if (held[i] || engine.empty() || cycle < faults[i].cycle) continue;
      if (const auto h = w.holding(engine)) held[i] = h->first;
    }
    return false;
  });
  if (!run.w) return out;
  const TakeWatch& tw = *run.w;
  for (size_t i = 0; i < faults.size(); ++i) {
    const auto& f = faults[i];
    const std::string text = f.to_string();
    Anchor a;
    std::optional<uint32_t> cmd;
    if (auto buf = sram_buffer(f)) {
      // A scratchpad flip corrupts what the entry's last producer wrote before it: it follows
      // that write (its command and entry).
      const uint32_t word = run.word_bytes(*buf);
      if (word) {
        const auto entry = static_cast<uint32_t>(f.addr / word);
        const auto segment = static_cast<uint8_t>((f.addr % word) / 64);
        std::optional<TxnMark> writer;
        for (const auto& t : tw.txns())
          if (t.cycle <= f.cycle && t.buffer == *buf && t.addr == entry && t.segment == segment &&
              t.stage != emu::Stage::Store)
            writer = t;
        if (writer && writer->cmd < p.program.commands.size()) {
          cmd = writer->cmd;
          a.engine = engine_of(p.program.commands[*cmd].opcode);
          auto e = element_at(tw.txns_of(*cmd, writer->stage), writer->cycle);
          if (e) {
            e->offset = static_cast<int64_t>(f.cycle) - static_cast<int64_t>(writer->cycle);
            e->memory = true;
            e->byte_in_entry = static_cast<uint32_t>(f.addr % word);
            e->word_bytes = word;
            a.element = e;
          }
        }
      }
    }
    if (!cmd) {
      a.engine = signal_engine(f);
      if (!a.engine.empty()) {
        // A signal fault of a unit follows the command that unit holds at the fault's cycle (or
        // takes next), and the element of its work it acts on.
        cmd = held[i];
        if (cmd)
          if (auto st = stage_of(p.program.commands[*cmd].opcode))
            a.element = element_at(tw.txns_of(*cmd, *st), f.cycle);
      } else if (verdict_cmd && *verdict_cmd < p.program.commands.size()) {
        // Memory, DRAM and token faults act on data or responses that a later command uses:
        // they follow the command the failure was pinned to.
        a.engine = engine_of(p.program.commands[*verdict_cmd].opcode);
        cmd = verdict_cmd;
      }
    }
    if (a.engine.empty()) {
      lines.push_back(text + ": stays at its cycle: it acts on no engine's command");
      continue;
    }
    const auto taken = cmd ? tw.taken(a.engine, *cmd) : std::nullopt;
    if (!cmd || !taken) {
      lines.push_back(text + ": stays at its cycle: " + a.engine + " takes no command at or after it");
      continue;
    }
    auto key = key_of(p, *cmd);
    if (!key) {
      lines.push_back(text + ": stays at its cycle: command #" + std::to_string(*cmd) +
                      " belongs to no layer");
      continue;
    }
    a.key = *key;
    a.offset = static_cast<int64_t>(f.cycle) - static_cast<int64_t>(*taken);
    lines.push_back(text + ": follows command #" + std::to_string(*cmd) + " (" + key->text() +
                    ") on " + a.engine + ", " + std::to_string(a.offset) +
                    " cycles from when the engine took it" +
                    (a.element ? "; element " + a.element->text() : ""));
    out[i] = a;
  }
  return out;
}

Reanchored reanchor(run::RunOptions& options, const run::PreparedRun& p,
                    const std::vector<std::optional<Anchor>>& anchors) {
  Reanchored out;
  auto& why = out.notes;
  auto& faults = options.faults;
  std::vector<std::optional<uint32_t>> target(faults.size());
  size_t wanted = 0;
  for (size_t i = 0; i < faults.size() && i < anchors.size(); ++i) {
    if (!anchors[i]) continue;
    std::string reason;
    target[i] = cmd_of(p, anchors[i]->key, reason);
    if (!reason.empty()) why.push_back(reason + (target[i] ? "" : ": keeps the reduction's cycle"));
    if (target[i])
      ++wanted;
    else
      out.moved_all = false;
  }
  if (wanted == 0) return out;
  const Watched run(p, options);
  for (size_t i = 0; i < faults.size(); ++i) {
    if (!target[i]) continue;
    const Anchor& a = *anchors[i];
    const auto taken = run.w ? run.w->taken(a.engine, *target[i]) : std::nullopt;
    if (!taken) {
      why.push_back(a.engine + " never takes its command (" + a.key.text() +
                    "): keeps the reduction's cycle");
      out.moved_all = false;
      continue;
    }
    int64_t at = static_cast<int64_t>(*taken) + a.offset;
    if (a.element) {
      // The same element of the command's work (the same entry, the same time it is written),
      // or the transaction at the same place in the command.
      const ElementAnchor& e = *a.element;
      const auto txns = run.w->txns_of(*target[i], e.stage);
      std::optional<TxnMark> pick;
      uint32_t seen = 0;
      for (const auto& t : txns)
        if (t.buffer == e.buffer && t.segment == e.segment && t.addr == e.addr && seen++ == e.occurrence) {
          pick = t;
          break;
        }
      if (!pick && !txns.empty() && e.of) {
        const auto n = std::min<size_t>(uint64_t{e.ordinal} * txns.size() / e.of, txns.size() - 1);
        pick = txns[n];
        why.push_back("element " + std::string(isa::buffer_name(static_cast<isa::Buffer>(e.buffer))) +
                      "[" + std::to_string(e.addr) + "] of " + a.key.text() +
                      " is gone: moved to the transaction at the same place in the command");
      }
      if (pick) {
        at = static_cast<int64_t>(pick->cycle) + e.offset;
        if (e.memory && e.word_bytes)
          faults[i].addr = uint64_t{pick->addr} * e.word_bytes + e.byte_in_entry;
      } else {
        why.push_back(a.key.text() + " has no " + emu::stage_name(e.stage) +
                      " transactions now: follows when the engine takes it");
      }
    }
    faults[i].cycle = static_cast<uint64_t>(std::max<int64_t>(1, at));
  }
  return out;
}

}  // namespace bud::debugger
