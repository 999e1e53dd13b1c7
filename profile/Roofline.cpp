#include "profile/Roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bud::profile {

namespace {

// Per-command fixed costs of the engines' FSMs (docs/profiling.md, "Roofline"): pop from the
// queue, token wait/start, and push/retire for load and store; plus pipeline drain for compute.
constexpr double kLoadOverhead = 3;
constexpr double kComputeOverhead = 4;
constexpr double kStoreOverhead = 3;
constexpr double kStoreChunkOverhead = 3;   // plan the chunk, read pipeline, request
constexpr uint32_t kLoadTags = 8;           // requests the load engine keeps in flight (isa.md)

// A command's memory time, the part of its binding term that is DRAM latency (the rest is
// moving bytes: the response channel, the scratchpad write port, per-command overhead), and
// for a LOAD its requests and bytes (the layer's access pattern, for Little's law).
struct MemoryTime {
  double cycles = 0;
  double latency = 0;
  double requests = 0, bytes = 0;
};

// Engine work runs only on cycles the clock is enabled (divide by the clock fraction f); DRAM
// latency and its response channel run on every cycle (throttle clamps the NPU, not the memory).
MemoryTime load_cycles(const isa::Command& c, const MachineModel& m) {
  const double f = m.clock_fraction;
  const auto b = static_cast<size_t>(c.buffer);
  // Units: entries, or the 64-byte segments of entries wider than a request (docs/isa.md).
  const double entry_bytes = b < isa::kNumBuffers ? m.array.entry_bytes(c.buffer) : 8;
  const double ebytes = std::min<double>(entry_bytes, isa::kMaxRequestBytes);
  const double segs = entry_bytes / ebytes;
  const uint32_t per_req =
      std::max<uint32_t>(1, isa::kMaxRequestBytes / static_cast<uint32_t>(ebytes));
  const double entries = static_cast<double>(c.y_size) * c.x_size * segs;
  const double nreq =
      static_cast<double>(c.y_size) * std::ceil(static_cast<double>(c.x_size) * segs / per_req);
  if (nreq == 0) return {kLoadOverhead / f, 0, 0, 0};
  const double req_bytes = entries * ebytes / nreq;
  const double resp = std::ceil(req_bytes / m.bytes_per_cycle);  // response channel occupancy
  const double per_req_entries = entries / nreq / f;
  // A tag is busy from its request until its entries are written.
  const double round_trip = m.latency + resp + per_req_entries;
  const double channel = m.latency + nreq * resp + per_req_entries;
  const double write_port = m.latency + entries / f;
  // Fetch reads this command from the ring through the same DRAM port: one request of the
  // outstanding limit's share per command when that limit, not load's tags, is what binds.
  const double slots =
      m.outstanding < kLoadTags + 4
          ? std::min<double>(kLoadTags, std::max(1.0, m.outstanding * nreq / (nreq + 1)))
          : m.in_flight;
  const double tags = nreq / slots * round_trip;
  // Every term waits out the latency once, but the tags term once per round of `slots`
  // requests: a LOAD of few requests cannot hide it behind others (Little's law).
  const double terms[] = {channel, write_port, tags, round_trip};
  const double waits[] = {m.latency, m.latency, nreq / slots * m.latency, m.latency};
  size_t bind = 0;
  for (size_t i = 1; i < 4; ++i)
    if (terms[i] > terms[bind]) bind = i;
  return {kLoadOverhead / f + terms[bind], waits[bind], nreq, entries * ebytes};
}

MemoryTime store_cycles(const isa::Command& c, const MachineModel& m) {
  const double chunk_entries = isa::kMaxRequestBytes / m.array.entry_bytes(isa::Buffer::Out);
  const double chunks =
      static_cast<double>(c.y_size) * std::ceil(static_cast<double>(c.x_size) / chunk_entries);
  const double entries = static_cast<double>(c.y_size) * c.x_size;
  const double transfer = (kStoreOverhead + entries + chunks * kStoreChunkOverhead) / m.clock_fraction;
  return {transfer + m.latency, m.latency, 0, 0};
}

double compute_cycles(const isa::Command& c, const MachineModel& m) {
  if (c.opcode == isa::Opcode::Gemm) {
    // A BF16 iteration reduces rows / 2 lanes (docs/isa.md, "BF16 GEMM").
    const double lanes = c.bf16 ? m.array.rows / 2.0 : m.array.rows;
    const double kb = std::ceil(c.k / lanes), nb = std::ceil(c.n / static_cast<double>(m.array.cols));
    return (kComputeOverhead + static_cast<double>(c.m) * kb * nb) / m.clock_fraction;
  }
  // POST: one OUT entry per cycle (a BF16 output writes two per ACC entry), plus one cycle per
  // scale entry a per-channel POST reads.
  return (kComputeOverhead + c.out_entries() + c.scale_entries()) / m.clock_fraction;
}

struct Tile {
  double load = 0, compute = 0, store = 0;
  double latency = 0;  ///< the part of load + store that is DRAM latency
  double requests = 0, bytes = 0, loads = 0;
  bool has_compute = false;
};

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * v);
  return buf;
}

// The top-down sub-classes (besides useful work) that the projection does not model, largest
// first: what explains a projection off by more than 10%.
std::string residual_of(const ScopeMetrics& m, double error) {
  if (std::fabs(error) <= 0.10 || m.topdown.slots == 0) return {};
  std::vector<std::pair<uint64_t, SubClass>> v;
  for (int s = 1; s < kNumSubClasses; ++s)
    if (m.topdown.sub[s] > 0) v.emplace_back(m.topdown.sub[s], static_cast<SubClass>(s));
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::string out = error < 0 ? "under-projected; " : "over-projected; ";
  for (size_t i = 0; i < v.size() && i < 3; ++i) {
    if (i) out += ", ";
    out += std::string(sub_class_name(v[i].second)) + " " +
           percent(static_cast<double>(v[i].first) / m.topdown.slots);
  }
  return out;
}

}  // namespace

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::Compute:
      return "compute";
    case Bound::Latency:
      return "latency";
    case Bound::Bandwidth:
      return "bandwidth";
  }
  return "?";
}

double MachineModel::effective_bytes_per_cycle() const {
  if (latency <= 0) return bytes_per_cycle;
  return std::min(bytes_per_cycle, in_flight * static_cast<double>(isa::kMaxRequestBytes) / latency);
}

MachineModel machine_model(const emu::EmulatorConfig& config, uint32_t array_macs) {
  MachineModel m;
  m.array_macs = array_macs;
  m.latency = config.dram.base_latency + config.dram.jitter / 2.0;
  if (config.dram.bursty) {
    // A request finds the request channel stalled with probability duty, and then waits the
    // rest of a stretch: stretches are uniform on [1, 2 mean - 1], so that rest is 2 mean / 3.
    const double duty = config.dram.burst_duty_pct / 100.0;
    const double stretch = std::max(1.0, config.dram.burst_period * duty);
    m.latency += duty * 2.0 * stretch / 3.0;
  }
  m.bytes_per_cycle = std::max<uint32_t>(1, config.dram.bytes_per_cycle);
  m.in_flight = std::max<uint32_t>(1, std::min(kLoadTags, config.dram.max_outstanding));
  m.outstanding = std::max<uint32_t>(1, config.dram.max_outstanding);
  if (config.throttle.period > 0)
    m.clock_fraction =
        1.0 - static_cast<double>(config.throttle.on_cycles) / config.throttle.period;
  if (m.clock_fraction <= 0) m.clock_fraction = 1;
  return m;
}

void annotate_bounds(std::vector<Bottleneck>& ranking, const std::vector<LayerProjection>& layers) {
  for (auto& b : ranking) {
    b.bound.clear();
    if (b.dominant != TopClass::Memory || b.layer < 0 ||
        static_cast<size_t>(b.layer) >= layers.size())
      continue;
    const auto& l = layers[static_cast<size_t>(b.layer)];
    if (l.memory_cycles > 0)
      b.bound = l.latency_cycles >= l.bandwidth_cycles ? "latency" : "bandwidth";
  }
}

Roofline project(const workload::Workload& w, const workload::Program& program,
                 const emu::EmulatorConfig& config, const Profile& profile) {
  Roofline r;
  r.machine = machine_model(config, profile.array_macs);
  r.machine.array = program.array;
  const MachineModel& m = r.machine;
  double abs_sum = 0;
  for (size_t li = 0; li < program.layers.size() && li < profile.layers.size(); ++li) {
    const auto& layer = program.layers[li];
    LayerProjection p;
    p.name = layer.name;
    p.kind = workload::layer_kind_name(layer.kind);
    // The lowering's tiles, as its commands lay them out: a tile's LOADs, then its GEMMs and
    // POST, then its STOREs (docs/workloads.md). A LOAD after compute starts the next tile.
    // A repeated workload (Program::passes) runs every layer's tiles once per pass.
    std::vector<Tile> tiles(1);
    for (uint64_t pass = 0; pass < program.passes; ++pass) {
      const uint64_t off = pass * program.pass_commands;
      for (uint64_t c = layer.first_cmd + off;
           c <= layer.last_cmd + off && c < program.commands.size(); ++c) {
        const auto& cmd = program.commands[c];
        switch (cmd.opcode) {
          case isa::Opcode::Load: {
            if (tiles.back().has_compute) tiles.emplace_back();
            const MemoryTime t = load_cycles(cmd, m);
            tiles.back().load += t.cycles;
            tiles.back().latency += t.latency;
            tiles.back().requests += t.requests;
            tiles.back().bytes += t.bytes;
            tiles.back().loads += 1;
            break;
          }
          case isa::Opcode::Gemm:
          case isa::Opcode::Post:
            tiles.back().compute += compute_cycles(cmd, m);
            tiles.back().has_compute = true;
            break;
          case isa::Opcode::Store: {
            const MemoryTime t = store_cycles(cmd, m);
            tiles.back().store += t.cycles;
            tiles.back().latency += t.latency;
            break;
          }
          default:
            break;
        }
      }
    }
    // The tile count the lowering planned (dense/conv2d/matmul) must be what its commands show (a tile
    // whose reduction runs in chunks shows one load-then-compute group per chunk).
    if (li < w.layers.size()) {
      const auto plan = workload::plan_tiles(w.layers[li], program.array, w.tiles);
      if (plan &&
          w.layers[li].is_gemm() &&
          static_cast<int64_t>(tiles.size()) !=
              plan->m_tiles * plan->n_tiles * plan->k_chunks * static_cast<int64_t>(program.passes))
        p.residual = "tiling differs from plan_tiles";
    }
    p.tiles = static_cast<int>(tiles.size());
    double compute = 0, memory = 0, latency = 0, requests = 0, bytes = 0, loads = 0;
    for (const auto& t : tiles) {
      compute += t.compute;
      memory += t.load + t.store;
      latency += t.latency;
      requests += t.requests;
      bytes += t.bytes;
      loads += t.loads;
    }
    // Little's law for this layer's access pattern: a LOAD keeps at most its own requests (and
    // at most the tags) in flight, each of the layer's mean size, for one latency.
    if (requests > 0 && m.latency > 0) {
      const double in_flight = std::min<double>(m.in_flight, requests / loads);
      p.effective_bytes_per_cycle =
          std::min(m.bytes_per_cycle, in_flight * (bytes / requests) / m.latency);
    }
    double total = tiles.front().load + tiles.back().store;
    if (w.double_buffer) {
      // Double buffering: tile t computes while t+1 loads and t-1 stores.
      for (size_t t = 0; t < tiles.size(); ++t) {
        const double next_load = t + 1 < tiles.size() ? tiles[t + 1].load : 0;
        const double prev_store = t > 0 ? tiles[t - 1].store : 0;
        total += std::max({tiles[t].compute, next_load, prev_store});
      }
    } else {
      // Single buffering: tile t loads once compute is done with t-1 (C->L) and computes once
      // loaded; only t-1's stores overlap t's load and compute (its POST waits for them, S->C).
      for (size_t t = 0; t < tiles.size(); ++t) {
        const double prev_store = t > 0 ? tiles[t - 1].store : 0;
        if (t > 0) total += tiles[t].load;
        total += std::max(tiles[t].compute, prev_store - (t > 0 ? tiles[t].load : 0));
      }
    }
    p.compute_cycles = static_cast<uint64_t>(std::llround(compute));
    p.memory_cycles = static_cast<uint64_t>(std::llround(memory));
    p.projected = static_cast<uint64_t>(std::llround(total));
    p.latency_cycles = static_cast<uint64_t>(std::llround(latency));
    p.bandwidth_cycles = p.memory_cycles - std::min(p.memory_cycles, p.latency_cycles);
    p.bound = compute >= memory                           ? Bound::Compute
              : p.latency_cycles >= p.bandwidth_cycles ? Bound::Latency
                                                        : Bound::Bandwidth;
    p.measured = profile.layers[li].cycles;
    p.error = p.measured ? (static_cast<double>(p.projected) - static_cast<double>(p.measured)) /
                               static_cast<double>(p.measured)
                         : 0;
    if (p.residual.empty()) p.residual = residual_of(profile.layers[li], p.error);
    abs_sum += std::fabs(p.error);
    if (std::fabs(p.error) <= 0.10) ++r.within_10pct;
    auto it = std::find_if(r.types.begin(), r.types.end(),
                           [&](const TypeError& t) { return t.kind == p.kind; });
    if (it == r.types.end()) {
      r.types.push_back({p.kind, 0, 0, 0});
      it = r.types.end() - 1;
    }
    ++it->layers;
    it->mean_error += p.error;
    it->mape += std::fabs(p.error);
    r.layers.push_back(std::move(p));
  }
  for (auto& t : r.types) {
    t.mean_error /= t.layers;
    t.mape /= t.layers;
  }
  r.mape = r.layers.empty() ? 0 : abs_sum / static_cast<double>(r.layers.size());
  return r;
}

}  // namespace bud::profile
