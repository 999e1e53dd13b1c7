#include "replay/CounterMap.h"

#include <algorithm>
#include <string>

#include "replay/PacketReader.h"

namespace bud::replay {

const std::array<std::string_view, 62> kFormat1CounterNames = {
    "fetch.active",       "fetch.stall_mem",    "fetch.stall_dep",     "fetch.starve",
    "fetch.stall_out",    "fetch.throttled",    "fetch.idle",          "load.active",
    "load.stall_mem",     "load.stall_dep",     "load.starve",         "load.stall_out",
    "load.throttled",     "load.idle",          "gemm.active",         "gemm.stall_mem",
    "gemm.stall_dep",     "gemm.starve",        "gemm.stall_out",      "gemm.throttled",
    "gemm.idle",          "post.active",        "post.stall_mem",      "post.stall_dep",
    "post.starve",        "post.stall_out",     "post.throttled",      "post.idle",
    "store.active",       "store.stall_mem",    "store.stall_dep",     "store.starve",
    "store.stall_out",    "store.throttled",    "store.idle",          "cycles",
    "macs_issued",        "macs_useful",        "dram_rd_bytes",       "dram_wr_bytes",
    "dram_rd_reqs",       "dram_wr_reqs",       "dram_rd_latency_sum", "spad_inp_rd",
    "spad_inp_wr",        "spad_wgt_rd",        "spad_wgt_wr",         "spad_acc_rd",
    "spad_acc_wr",        "spad_out_rd",        "spad_out_wr",         "bank_conflicts_inp",
    "bank_conflicts_wgt", "bank_conflicts_acc", "bank_conflicts_out",  "retired_load",
    "retired_gemm",       "retired_post",       "retired_store",       "retired_sync",
    "retired_end",        "saturations"};

CounterMap CounterMap::of(const pb::Header& header, const std::vector<std::string>& counters) {
  CounterMap m;
  m.pos_.assign(counters.size(), -1);
  auto place = [&](std::string_view name, int position) {
    const auto it = std::find(counters.begin(), counters.end(), name);
    if (it == counters.end()) {
      m.unknown_.emplace_back(name);
      return;
    }
    auto& pos = m.pos_[static_cast<size_t>(it - counters.begin())];
    if (pos < 0) pos = position;
  };
  if (header.counter_names_size() > 0) {
    for (int p = 0; p < header.counter_names_size(); ++p) place(header.counter_names(p), p);
  } else {
    for (size_t p = 0; p < kFormat1CounterNames.size(); ++p)
      place(kFormat1CounterNames[p], static_cast<int>(p));
  }
  return m;
}

void CounterMap::describe(pb::Header& header, const emu::DesignInfo& design) {
  header.set_design(design.name);
  header.clear_counter_names();
  for (const auto& name : design.counters) header.add_counter_names(name);
}

std::optional<uint64_t> CounterMap::value(const google::protobuf::RepeatedField<uint64_t>& recorded,
                                          int index) const {
  if (!has(index) || pos_[index] >= recorded.size()) return std::nullopt;
  return recorded.Get(pos_[index]);
}

std::vector<uint64_t> CounterMap::current(
    const google::protobuf::RepeatedField<uint64_t>& recorded) const {
  std::vector<uint64_t> out(pos_.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = value(recorded, static_cast<int>(i)).value_or(0);
  return out;
}

CounterMap to_current_counters(Packet& packet, const std::vector<std::string>& counters) {
  const CounterMap m = CounterMap::of(packet.header, counters);
  auto rewrite = [&](google::protobuf::RepeatedField<uint64_t>* list) {
    if (list->empty()) return;  // nothing recorded (e.g. an interrupted run's Result)
    const auto v = m.current(*list);
    list->Clear();
    list->Add(v.begin(), v.end());
  };
  for (auto& w : packet.windows) rewrite(w.mutable_counters());
  if (packet.result) rewrite(packet.result->mutable_counters());
  return m;
}

}  // namespace bud::replay
