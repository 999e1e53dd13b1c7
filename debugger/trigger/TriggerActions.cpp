#include "debugger/trigger/TriggerActions.h"

#include <cctype>
#include <fstream>

#include "debugger/session/Session.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

namespace {

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out;
}

}  // namespace

void TriggerActions::perform(const PendingHit& ph, const HitTrigger& t) {
  const TriggerDef& def = *t.def;
  const TriggerBranch& br = *t.branch;
  if (hits_.size() >= config_.max_hits) {
    ++dropped_hits_;
    // Still honour halts: they change what the run does.
    for (const auto& a : br.actions)
      if (a.kind == ActionKind::Halt) halt_ = true;
    return;
  }
  TriggerHit h;
  h.cycle = ph.cycle;
  h.trigger_id = t.id;
  h.trigger = def.name;
  h.number = ph.number;
  if (!def.machine) {
    h.state_path = "armed";
  } else {
    h.state_path = def.states[ph.from_state].name;
    if (br.target >= 0 && static_cast<uint32_t>(br.target) != ph.from_state)
      h.state_path += " -> " + def.states[br.target].name;
  }
  h.condition = br.cond >= 0 ? def.conds[br.cond].text : "else";
  for (size_t i = 0; i < t.refs->size(); ++i)
    h.values.emplace_back((*t.refs)[i].first, i < ph.values.size() ? ph.values[i] : 0);
  int capture_no = 0;
  for (const auto& a : br.actions) {
    h.actions.push_back(a.to_string());
    switch (a.kind) {
      case ActionKind::Halt:
        h.halted = true;
        halt_ = true;
        break;
      case ActionKind::Capture:
        capture(ph, t, a, h, capture_no);
        break;
      case ActionKind::Checkpoint:
        checkpoint(ph, t, a, h);
        break;
      case ActionKind::Snapshot:
        for (int i = 0; i < emu_.describe().num_counters(); ++i)
          h.counters.emplace_back(emu_.describe().counters[i], emu_.counter(i));
        break;
      case ActionKind::Record: {
        if (!record_hook_) {
          h.messages.push_back("record: no replay-packet hook in this run");
          break;
        }
        std::string written;
        if (auto e = record_hook_->record(h, a.text, written); !e.empty())
          h.messages.push_back("record: " + e);
        else
          h.record = written;
        break;
      }
      case ActionKind::Log:
        h.messages.push_back(a.text);
        break;
      default:
        break;
    }
  }
  hits_.push_back(std::move(h));
}

void TriggerActions::capture(const PendingHit& ph, const HitTrigger& t, const TriggerAction& a,
                             TriggerHit& h, int& capture_no) {
  if (!config_.make_replica) {
    h.messages.push_back("capture: not available here (no replica emulator)");
    return;
  }
  uint64_t& taken = captures_taken_[t.id];
  if (taken >= config_.max_captures_per_trigger) {
    h.messages.push_back("capture: skipped (limit of " +
                         std::to_string(config_.max_captures_per_trigger) +
                         " captures per trigger reached)");
    return;
  }
  ++taken;
  CaptureRequest req;
  req.hit = hits_.size();
  req.trigger_id = t.id;
  req.hit_cycle = ph.cycle;
  req.pre = a.pre;
  req.post = a.post;
  const uint64_t want = ph.cycle > a.pre ? ph.cycle - a.pre : 0;
  const TriggerHistory::Snapshot* best = history_.at_or_before(want);
  if (!best) best = history_.oldest();
  if (best) req.from = *best;
  CaptureFile cf;
  cf.requested_from = want;
  cf.requested_to = ph.cycle + a.post;
  // With open_output the files are named here and placed when written (CaptureWriter).
  std::string base = (config_.open_output ? "" : config_.capture_dir + "/") +
                     sanitize(t.def->name) + "-" + std::to_string(ph.number);
  if (capture_no++) base += "-" + std::to_string(capture_no);
  cf.fst = base + ".fst";
  cf.log = base + ".log";
  req.file = h.captures.size();
  h.captures.push_back(cf);
  captures_.request(std::move(req));
}

void TriggerActions::checkpoint(const PendingHit& ph, const HitTrigger& t, const TriggerAction& a,
                                TriggerHit& h) {
  const std::string name =
      a.text.empty() ? sanitize(t.def->name) + "-" + std::to_string(ph.number) : a.text;
  if (session_) {
    session_->timeline().save_named(name);
    h.checkpoint = name;
    return;
  }
  std::vector<uint8_t> state;
  emu_.save(state);
  std::string path = config_.capture_dir + "/" + name + ".state";
  if (config_.open_output) {
    std::string e;
    auto opened = config_.open_output(name + ".state", e);
    if (!opened) {
      h.messages.push_back("checkpoint: " + e);
      return;
    }
    path = *opened;
  }
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(state.data()), static_cast<std::streamsize>(state.size()));
  if (f)
    h.checkpoint = path;
  else
    h.messages.push_back("checkpoint: cannot write " + path);
}

}  // namespace bud::debugger
