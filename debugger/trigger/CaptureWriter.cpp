#include "debugger/trigger/CaptureWriter.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "emu/isa/Isa.h"

namespace bud::debugger {

namespace {

// Collects the stage transactions of a capture window as compact log lines: in the NPU's terms
// for a design of its ISA, else by the design's own stage names with the payload's bytes.
class EventLog final : public emu::TxnObserver {
 public:
  explicit EventLog(const emu::DesignInfo& design) : design_(design) {}
  void on_txn(const emu::StageTxn& t) override {
    char buf[160];
    const unsigned long long c = t.cycle + 1;  // the cycle at which triggers see it
    if (design_.isa != "npu") {
      int n = std::snprintf(buf, sizeof buf, "%llu %s #%u %u bytes", c,
                            design_.stage(t.stage).c_str(), t.cmd_id, t.size);
      for (size_t i = 0; i < std::min<size_t>(t.size, 16) && n > 0 && n < 150; ++i)
        n += std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), " %02x", t.data[i]);
      text += buf;
      text += t.size > 16 ? " ...\n" : "\n";
      ++events;
      return;
    }
    switch (t.stage) {
      case emu::Stage::Fetch: {
        std::array<uint64_t, 4> w{};
        std::memcpy(w.data(), t.data.data(), 32);
        const auto cmd = isa::Command::decode(w);
        std::snprintf(buf, sizeof buf, "%llu fetch dispatch #%u %s layer %u\n", c, cmd.cmd_id,
                      isa::opcode_name(cmd.raw_opcode).c_str(), cmd.layer);
        break;
      }
      case emu::Stage::Load:
        std::snprintf(buf, sizeof buf, "%llu load #%u %s[%u]\n", c, t.cmd_id,
                      isa::buffer_name(static_cast<isa::Buffer>(t.buffer & 3)), t.addr);
        break;
      case emu::Stage::Gemm:
        std::snprintf(buf, sizeof buf, "%llu gemm #%u acc[%u]\n", c, t.cmd_id, t.addr);
        break;
      case emu::Stage::Post:
        std::snprintf(buf, sizeof buf, "%llu post #%u out[%u]\n", c, t.cmd_id, t.addr);
        break;
      case emu::Stage::Store:
        std::snprintf(buf, sizeof buf, "%llu store #%u dram[0x%x] %u bytes\n", c, t.cmd_id, t.addr,
                      t.size);
        break;
    }
    text += buf;
    ++events;
  }
  std::string text;
  uint64_t events = 0;

 private:
  const emu::DesignInfo& design_;
};

}  // namespace

void CaptureWriter::request(CaptureRequest req) {
  next_due_ = std::min(next_due_, req.hit_cycle + req.post);
  queue_.push_back(std::move(req));
}

void CaptureWriter::service(uint64_t now, bool all, std::vector<TriggerHit>& hits) {
  next_due_ = UINT64_MAX;
  std::vector<CaptureRequest> keep;
  for (auto& req : queue_) {
    const uint64_t end = req.hit_cycle + req.post;
    if (all || end <= now) {
      materialize(req, hits);
    } else {
      next_due_ = std::min(next_due_, end);
      keep.push_back(std::move(req));
    }
  }
  queue_ = std::move(keep);
}

void CaptureWriter::materialize(CaptureRequest& req, std::vector<TriggerHit>& hits) {
  if (req.hit >= hits.size()) return;
  TriggerHit& hit = hits[req.hit];
  if (req.file >= hit.captures.size()) return;
  CaptureFile* cf = &hit.captures[req.file];
  if (!req.from.state) {
    cf->error = "no history snapshot";
    return;
  }
  std::string error;
  if (!replica_) replica_ = config_.make_replica(error);
  if (!replica_) {
    cf->error = "cannot create a replica emulator: " + error;
    return;
  }
  if (!replica_->restore(*req.from.state, error)) {
    cf->error = "cannot restore the history snapshot: " + error;
    return;
  }
  const uint64_t before = rx_.cycles();
  const uint64_t from = std::max(cf->requested_from, req.from.cycle);
  if (auto e = rx_.advance(*replica_, from); !e.empty()) {
    cf->error = e;
    return;
  }
  if (replica_->cycle() != from) {
    cf->error =
        "the run ended at cycle " + std::to_string(replica_->cycle()) + " before the window starts";
    return;
  }
  if (config_.open_output) {
    std::string e;
    auto fst = config_.open_output(cf->fst, e);
    auto log = fst ? config_.open_output(cf->log, e) : std::nullopt;
    if (!log) {
      cf->error = e;
      return;
    }
    cf->fst = *fst;
    cf->log = *log;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(cf->fst).parent_path(), ec);
  }
  if (auto e = replica_->wave_open(cf->fst); !e.empty()) {
    cf->error = e;
    return;
  }
  EventLog log(replica_->describe());
  drive::HookParticipant watch(nullptr, &log);
  // The counters the design describes (a capture, not a per-cycle path: vectors are fine).
  const auto& counter_names = replica_->describe().counters;
  const int num_counters = static_cast<int>(counter_names.size());
  std::vector<uint64_t> c_from(counter_names.size()), c_hit(counter_names.size()),
      c_to(counter_names.size());
  for (int i = 0; i < num_counters; ++i) c_from[i] = replica_->counter(i);
  std::string e = rx_.advance(*replica_, req.hit_cycle, &watch);
  for (int i = 0; i < num_counters; ++i) c_hit[i] = replica_->counter(i);
  if (e.empty()) e = rx_.advance(*replica_, cf->requested_to, &watch);
  for (int i = 0; i < num_counters; ++i) c_to[i] = replica_->counter(i);
  replica_->wave_close();
  cf->from = from;
  cf->to = replica_->cycle();
  cf->truncated = cf->to < cf->requested_to || from > cf->requested_from;
  cf->resimulated = rx_.cycles() - before;
  if (!e.empty()) cf->error = e;

  std::ofstream f(cf->log);
  f << "# bud trigger capture: trigger " << hit.trigger << " hit " << hit.number << " at cycle "
    << hit.cycle << " (" << hit.state_path << ": " << hit.condition << ")\n";
  f << "# window: cycles " << cf->from << ".." << cf->to << " (requested " << cf->requested_from
    << ".." << cf->requested_to << ", pre " << req.pre << " post " << req.post << ")";
  if (cf->to < cf->requested_to)
    f << "; the run ended at cycle " << cf->to << " (" << emu::run_state_name(replica_->state())
      << ")";
  if (from > cf->requested_from) f << "; history starts at cycle " << from;
  f << "\n# counters changed in the window (at start / at hit / at end):\n";
  for (int i = 0; i < num_counters; ++i)
    if (c_to[i] != c_from[i])
      f << "#   " << counter_names[i] << " " << c_from[i] << " / " << c_hit[i] << " / "
        << c_to[i] << "\n";
  f << "# events (cycle at which triggers see them): " << log.events << " stage transactions\n";
  // Trigger hits inside the window, merged in cycle order with the transactions.
  std::vector<std::pair<uint64_t, std::string>> marks;
  for (const auto& h : hits)
    if (h.cycle >= cf->from && h.cycle <= cf->to)
      marks.emplace_back(h.cycle, std::to_string(h.cycle) + " TRIGGER " + h.trigger + " hit " +
                                      std::to_string(h.number) + " (" + h.state_path + ")\n");
  size_t m = 0;
  size_t pos = 0;
  while (pos < log.text.size()) {
    const size_t nl = log.text.find('\n', pos);
    const std::string line = log.text.substr(pos, nl - pos + 1);
    const uint64_t c = std::strtoull(line.c_str(), nullptr, 10);
    while (m < marks.size() && marks[m].first < c) f << marks[m++].second;
    f << line;
    pos = nl + 1;
  }
  while (m < marks.size()) f << marks[m++].second;
  if (!f) cf->error = "cannot write " + cf->log;
  cf->written = cf->error.empty();
}

}  // namespace bud::debugger
