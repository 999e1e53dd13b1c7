#include "profile/Profile.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace bud::profile {

namespace {

using isa::CycleClass;
using isa::Engine;

constexpr int cls(CycleClass c) { return static_cast<int>(c); }
constexpr size_t sub(SubClass s) { return static_cast<size_t>(s); }

// What top-down needs of one scope, summed over its commands.
struct Raw {
  std::array<uint64_t, isa::kNumClasses> gemm_by_gemm{};  // gemm classes while a GEMM was held
  std::array<uint64_t, isa::kNumClasses> gemm_by_post{};  // ... while a POST was held
  std::array<uint64_t, isa::kNumClasses> gemm_empty{};    // ... while compute held nothing
  std::array<uint64_t, isa::kNumClasses> gemm_other{};    // ... held by an id outside the program
  std::array<uint64_t, isa::kNumClasses> load{};          // load classes, held and empty
  std::array<uint64_t, isa::kNumClasses> fetch{};         // fetch classes
  uint64_t issued = 0, useful = 0;
  // The part of `issued` in BF16 GEMMs (a BF16 layer's: every GEMM of a layer runs its
  // precision). Each BF16 iteration issues M/2 MACs and leaves M/2 slots to the precision class.
  uint64_t issued_bf16 = 0;
  // Cycles GEMMs waited for their tile's operands that the tile's loads spent held back by
  // compute's release token (C->L): per tile min(GEMM's token wait, its loads' token wait).
  uint64_t late_loads = 0;
};

// Splits `total` over `weights` in proportion, by largest remainder: the parts sum to `total`.
// (long double keeps the products exact far beyond any run's slot counts: 64-bit mantissa.)
template <size_t N>
std::array<uint64_t, N> split(uint64_t total, const std::array<uint64_t, N>& weights) {
  std::array<uint64_t, N> parts{};
  long double sum = 0;
  for (auto w : weights) sum += static_cast<long double>(w);
  if (sum == 0) return parts;
  std::array<long double, N> rem{};
  uint64_t given = 0;
  for (size_t i = 0; i < N; ++i) {
    const long double x = static_cast<long double>(total) * weights[i] / sum;
    parts[i] = std::min<uint64_t>(static_cast<uint64_t>(x), total - given);
    rem[i] = x - static_cast<long double>(parts[i]);
    given += parts[i];
  }
  while (given < total) {  // a few rounds; ties go to the earlier index
    size_t best = 0;
    for (size_t i = 1; i < N; ++i)
      if (rem[i] > rem[best]) best = i;
    ++parts[best];
    rem[best] = -1;
    ++given;
  }
  return parts;
}

TopDown top_down(const Raw& r, uint64_t m, bool tail) {
  TopDown t;
  uint64_t gemm_cycles = 0;
  for (int c = 0; c < isa::kNumClasses; ++c)
    gemm_cycles += r.gemm_by_gemm[c] + r.gemm_by_post[c] + r.gemm_empty[c] + r.gemm_other[c];
  t.slots = gemm_cycles * m;
  auto& s = t.sub;
  s[sub(SubClass::Useful)] = r.useful;
  s[sub(SubClass::Padding)] = r.issued - r.useful;
  const uint64_t active = r.gemm_by_gemm[cls(CycleClass::Active)] * m;
  // A BF16 iteration issues M/2 MACs: the other M/2 slots of its cycle are the mode's rate.
  const uint64_t issue_slots = r.issued + r.issued_bf16;
  s[sub(SubClass::Precision)] = r.issued_bf16;
  s[sub(SubClass::Pipeline)] = active >= issue_slots ? active - issue_slots : 0;
  s[sub(SubClass::BankConflict)] = r.gemm_by_gemm[cls(CycleClass::StallMem)] * m;
  // While the compute engine holds a POST, gemm is "starve" (not its command): the POST
  // occupies the array's engine.
  s[sub(SubClass::PostOccupancy)] =
      (r.gemm_by_post[cls(CycleClass::Starve)] + r.gemm_by_post[cls(CycleClass::Active)] +
       r.gemm_by_post[cls(CycleClass::StallMem)] + r.gemm_by_post[cls(CycleClass::StallDep)] +
       r.gemm_by_post[cls(CycleClass::StallOut)]) *
      m;
  // A GEMM waiting on its tokens waits for the load engine (L->C): what load was doing in the
  // same layer apportions it (docs/profiling.md: an estimate of the split, the sum is exact).
  const std::array<uint64_t, 4> load_weights = {
      r.load[cls(CycleClass::StallMem)], r.load[cls(CycleClass::Active)],
      r.load[cls(CycleClass::StallDep)],
      r.load[cls(CycleClass::Starve)] + r.load[cls(CycleClass::StallOut)]};
  // First, the part of the wait the loads could not avoid because they were held back by the
  // release of a scratchpad half (too few buffers): under-buffering, exactly, per tile.
  const uint64_t dep = r.gemm_by_gemm[cls(CycleClass::StallDep)] * m;
  const uint64_t late = std::min(dep, r.late_loads * m);
  const auto parts = split<4>(dep - late, load_weights);
  // No load activity to split the rest by: a token wait nothing explains.
  const uint64_t unsplit = dep - late - parts[0] - parts[1] - parts[2] - parts[3];
  s[sub(SubClass::DramWait)] = parts[0];
  s[sub(SubClass::LoadTransfer)] = parts[1];
  s[sub(SubClass::UnderBuffering)] = late + parts[2];
  s[sub(SubClass::LoadStarved)] = parts[3];
  // The compute queue was empty (gemm.starve with nothing held). What fetch was doing in the same
  // scope apportions why: dispatch blocked behind a full queue (in-order dispatch: the GEMM is
  // behind the LOADs, so that share goes the way load's own activity says), a SYNC/END waiting
  // for the machine to drain, waiting for its ring reads, or dispatching other commands.
  const uint64_t empty_starve = r.gemm_empty[cls(CycleClass::Starve)] * m;
  if (tail) {
    s[sub(SubClass::Drain)] = empty_starve;
  } else {
    const auto why = split<4>(
        empty_starve, {r.fetch[cls(CycleClass::StallOut)], r.fetch[cls(CycleClass::StallDep)],
                       r.fetch[cls(CycleClass::StallMem)] + r.fetch[cls(CycleClass::Starve)],
                       r.fetch[cls(CycleClass::Active)] + r.fetch[cls(CycleClass::Idle)] +
                           r.fetch[cls(CycleClass::Throttled)]});
    const auto behind = split<4>(why[0], load_weights);
    s[sub(SubClass::DramWait)] += behind[0];
    s[sub(SubClass::LoadTransfer)] += behind[1];
    s[sub(SubClass::UnderBuffering)] += behind[2];
    s[sub(SubClass::LoadStarved)] += behind[3];
    const uint64_t unexplained = why[0] - behind[0] - behind[1] - behind[2] - behind[3];
    s[sub(SubClass::SyncDrain)] = why[1];
    s[sub(SubClass::CommandFetch)] = why[2];
    s[sub(SubClass::Starvation)] = why[3] + unexplained;
    if (why[0] + why[1] + why[2] + why[3] == 0) s[sub(SubClass::Starvation)] = empty_starve;
  }
  s[sub(SubClass::BackPressure)] = r.gemm_by_gemm[cls(CycleClass::StallOut)] * m;
  s[sub(SubClass::Idle)] =
      (r.gemm_by_gemm[cls(CycleClass::Idle)] + r.gemm_by_post[cls(CycleClass::Idle)] +
       r.gemm_empty[cls(CycleClass::Idle)]) *
      m;
  s[sub(SubClass::Throttled)] =
      (r.gemm_by_gemm[cls(CycleClass::Throttled)] + r.gemm_by_post[cls(CycleClass::Throttled)] +
       r.gemm_empty[cls(CycleClass::Throttled)]) *
      m;
  // Whatever no rule explains: gemm "starve" while it held its own GEMM, a non-idle, non-starve
  // class with nothing held, ids outside the program, and a pipeline count that would be
  // negative. (A stall_dep with no load activity to apportion it is token_wait.)
  uint64_t other = 0;
  for (auto v : r.gemm_other) other += v;
  uint64_t rest = r.gemm_by_gemm[cls(CycleClass::Starve)] + other +
                  r.gemm_empty[cls(CycleClass::Active)] + r.gemm_empty[cls(CycleClass::StallMem)] +
                  r.gemm_empty[cls(CycleClass::StallDep)] + r.gemm_empty[cls(CycleClass::StallOut)];
  rest *= m;
  s[sub(SubClass::TokenWait)] = unsplit;
  // (cannot happen: issue is an active cycle; keeps the partition exact whatever the counts)
  if (active < issue_slots) rest += issue_slots - active;
  s[sub(SubClass::Unattributed)] = rest;
  uint64_t total = 0;
  for (auto v : s) total += v;
  assert(total == t.slots && "top-down classes must partition the slots");
  (void)total;
  return t;
}

// Every engine-cycle of a scope in one class, from the engine's own cycle classes (exact, no
// apportioning): active is useful (gemm: its MAC-issue cycles; the rest of active is pipeline),
// stall_mem is memory but the bank conflicts the engine lost (compute hazard), stall_dep waits
// for a token (fetch: a SYNC draining), stall_out back-pressure, starve starvation (gemm while
// the compute engine runs a POST: post occupancy; in the tail: drain), idle host, throttled.
std::array<TopDown, isa::kNumEngines> engine_top_down(const ScopeMetrics& m, const Raw& r,
                                                      uint64_t array_macs, bool tail) {
  std::array<TopDown, isa::kNumEngines> out{};
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto engine = static_cast<Engine>(e);
    const auto& k = m.engine[static_cast<size_t>(e)];
    TopDown& t = out[static_cast<size_t>(e)];
    auto& s = t.sub;
    t.slots = m.engine_cycles(engine);
    const uint64_t active = k[cls(CycleClass::Active)];
    if (engine == Engine::Gemm) {
      // MAC-issue cycles: M MACs per int8 iteration, M/2 per BF16 one.
      const uint64_t issue =
          std::min<uint64_t>(active, array_macs ? (r.issued + r.issued_bf16) / array_macs : 0);
      s[sub(SubClass::Useful)] = issue;
      s[sub(SubClass::Pipeline)] = active - issue;
    } else {
      s[sub(SubClass::Useful)] = active;
    }
    const uint64_t mem = k[cls(CycleClass::StallMem)];
    const uint64_t lost = std::min(mem, engine == Engine::Load    ? m.bank_conflicts_load
                                        : engine == Engine::Store ? m.bank_conflicts_store
                                                                  : uint64_t{0});
    s[sub(SubClass::BankConflict)] = lost;
    s[sub(SubClass::DramWait)] = mem - lost;
    s[sub(engine == Engine::Fetch ? SubClass::SyncDrain : SubClass::TokenWait)] =
        k[cls(CycleClass::StallDep)];
    s[sub(SubClass::BackPressure)] = k[cls(CycleClass::StallOut)];
    uint64_t starve = k[cls(CycleClass::Starve)];
    if (engine == Engine::Gemm) {
      const uint64_t post = std::min(starve, r.gemm_by_post[cls(CycleClass::Starve)]);
      s[sub(SubClass::PostOccupancy)] = post;
      starve -= post;
    }
    s[sub(tail ? SubClass::Drain : SubClass::Starvation)] += starve;
    s[sub(SubClass::Idle)] = k[cls(CycleClass::Idle)];
    s[sub(SubClass::Throttled)] = k[cls(CycleClass::Throttled)];
  }
  return out;
}

void add_command(ScopeMetrics& m, Raw& raw, const CommandCounts& cc, const isa::Command* cmd,
                 const isa::ArrayConfig& array) {
  for (int e = 0; e < isa::kNumEngines; ++e)
    for (int c = 0; c < isa::kNumClasses; ++c)
      m.engine[e][c] += cc.total(class_slot(static_cast<Engine>(e), static_cast<CycleClass>(c)));
  m.macs_issued += cc.total(static_cast<int>(Slot::MacsIssued));
  m.macs_useful += cc.total(static_cast<int>(Slot::MacsUseful));
  m.dram_wr_bytes += cc.total(static_cast<int>(Slot::DramWrBytes));
  m.bank_conflicts_load += cc.total(static_cast<int>(Slot::BankConflictsInp)) +
                           cc.total(static_cast<int>(Slot::BankConflictsWgt)) +
                           cc.total(static_cast<int>(Slot::BankConflictsAcc));
  m.bank_conflicts_store += cc.total(static_cast<int>(Slot::BankConflictsOut));
  for (size_t i = 0; i < m.spad.size(); ++i)
    m.spad[i] += cc.total(static_cast<int>(Slot::SpadInpRd) + static_cast<int>(i));
  for (size_t i = 0; i < m.retired.size(); ++i)
    m.retired[i] += cc.total(static_cast<int>(Slot::RetiredLoad) + static_cast<int>(i));
  if (cmd) m.dram_rd_bytes += command_read_bytes(*cmd, array);
  raw.issued += cc.total(static_cast<int>(Slot::MacsIssued));
  raw.useful += cc.total(static_cast<int>(Slot::MacsUseful));
  for (int c = 0; c < isa::kNumClasses; ++c) {
    const int g = class_slot(Engine::Gemm, static_cast<CycleClass>(c));
    const int l = class_slot(Engine::Load, static_cast<CycleClass>(c));
    raw.gemm_empty[c] += cc.empty[g];
    if (cmd && cmd->opcode == isa::Opcode::Gemm)
      raw.gemm_by_gemm[c] += cc.held[g];
    else if (cmd && cmd->opcode == isa::Opcode::Post)
      raw.gemm_by_post[c] += cc.held[g];
    else
      raw.gemm_other[c] += cc.held[g];
    raw.load[c] += cc.total(l);
    raw.fetch[c] += cc.total(class_slot(Engine::Fetch, static_cast<CycleClass>(c)));
  }
}

// MACs per cycle a layer can issue: a BF16 layer's GEMMs issue rows/2 x cols per iteration, half
// the array's (docs/isa.md, "Why half the int8 rate").
uint32_t layer_peak(const ScopeMetrics& m, uint32_t array_macs) {
  return m.precision == "bf16" ? array_macs / 2 : array_macs;
}

// Figures from the sums; `m.topdown` is already set (a layer's or the tail's own, or the sum of
// its parts for a type and the model, so that they add up).
void finish_scope(ScopeMetrics& m, uint32_t array_macs, uint64_t model_useful) {
  const double cycles = static_cast<double>(m.cycles);
  const double bytes = static_cast<double>(m.dram_rd_bytes + m.dram_wr_bytes);
  m.peak_fraction = cycles > 0 ? m.macs_useful / (cycles * array_macs) : 0;
  m.model_mac_fraction = model_useful ? static_cast<double>(m.macs_useful) / model_useful : 0;
  m.bandwidth = cycles > 0 ? bytes / cycles : 0;
  m.intensity = bytes > 0 ? m.macs_useful / bytes : 0;
  m.memory_stall_fraction =
      m.topdown.slots ? static_cast<double>(m.topdown.top(TopClass::Memory)) / m.topdown.slots : 0;
}

void add_scope(ScopeMetrics& into, const ScopeMetrics& m) {
  into.layers += m.layers;
  into.cycles += m.cycles;
  for (int e = 0; e < isa::kNumEngines; ++e)
    for (int c = 0; c < isa::kNumClasses; ++c) into.engine[e][c] += m.engine[e][c];
  into.macs_useful += m.macs_useful;
  into.macs_issued += m.macs_issued;
  into.macs_issued_bf16 += m.macs_issued_bf16;
  into.dram_rd_bytes += m.dram_rd_bytes;
  into.dram_wr_bytes += m.dram_wr_bytes;
  into.topdown += m.topdown;
  into.bank_conflicts_load += m.bank_conflicts_load;
  into.bank_conflicts_store += m.bank_conflicts_store;
  for (size_t i = 0; i < m.spad.size(); ++i) into.spad[i] += m.spad[i];
  for (size_t i = 0; i < m.retired.size(); ++i) into.retired[i] += m.retired[i];
  for (int e = 0; e < isa::kNumEngines; ++e) into.engine_topdown[e] += m.engine_topdown[e];
}

// The triage flow of docs/profiling.md, as a table: the first rule whose class (and, when it
// names any, dominant sub-class) matches fires. Evidence names the layer's counters to show.
struct TriageRule {
  const char* name;
  TopClass top;
  std::array<SubClass, 2> subs;  // SubClass::Count: any sub-class
  const char* advice;
  std::array<const char*, 4> evidence;  // nullptr-terminated
};
constexpr SubClass kAny = SubClass::Count;
constexpr std::array<TriageRule, 15> kTriage = {{
    {"T1 throttled",
     TopClass::Throttled,
     {kAny, kAny},
     "the clock-enable clamp (DVFS/thermal) held the engines: check the throttle before tuning "
     "anything else",
     {"gemm.throttled"}},
    {"T2 host",
     TopClass::Host,
     {kAny, kAny},
     "no program was running: host orchestration (start-up, doorbell, read-back) dominates; "
     "batch requests or overlap host work",
     {"gemm.idle", "fetch.idle"}},
    {"T3a memory: occupancy low, DRAM stalls high",
     TopClass::Memory,
     {SubClass::DramWait, kAny},
     "the array waited for loads that waited on DRAM: locality and scheduling first (reuse tiles "
     "longer, more requests in flight, prefetch earlier)",
     {"gemm.stall_dep", "load.active", "load.stall_mem", "dram_rd_bytes"}},
    {"T3b memory: load engine saturated",
     TopClass::Memory,
     {kAny, kAny},
     "the array waited for loads that were busy transferring: bandwidth or scratchpad write rate "
     "bound; raise arithmetic intensity (bigger tiles)",
     {"gemm.stall_dep", "load.active", "load.stall_mem", "dram_rd_bytes"}},
    {"T4a scheduling: compute starved",
     TopClass::Scheduling,
     {SubClass::Starvation, kAny},
     "the compute queue was empty: the command stream did not supply GEMMs in time",
     {"gemm.starve", "fetch.stall_out", "fetch.stall_dep"}},
    {"T4b scheduling: back-pressure",
     TopClass::Scheduling,
     {SubClass::BackPressure, kAny},
     "compute could not hand off (token FIFO full): the consumer is the limit",
     {"gemm.stall_out", "store.stall_mem"}},
    {"T4d scheduling: layer-boundary drain",
     TopClass::Scheduling,
     {SubClass::SyncDrain, SubClass::Drain},
     "a SYNC (or the END) waited for the machine to drain: the next layer cannot start early; "
     "fewer, larger layers or overlap across the boundary",
     {"fetch.stall_dep", "gemm.starve"}},
    {"T4e scheduling: command fetch",
     TopClass::Scheduling,
     {SubClass::CommandFetch, kAny},
     "fetch waited for its ring reads: command latency shows against short commands",
     {"fetch.stall_mem", "gemm.starve"}},
    {"T4c scheduling: under-buffered",
     TopClass::Scheduling,
     {kAny, kAny},
     "the array waited on loads that themselves waited on tokens or commands: deepen buffering "
     "or reorder the stream",
     {"gemm.stall_dep", "load.stall_dep", "load.starve"}},
    {"T5a compute hazard: padding lanes",
     TopClass::ComputeHazard,
     {SubClass::Padding, kAny},
     "K or N does not fill the 8x8 array: pad or reshape the layer",
     {"macs_issued", "macs_useful"}},
    {"T5b compute hazard: POST occupies the engine",
     TopClass::ComputeHazard,
     {SubClass::PostOccupancy, kAny},
     "requantisation (POST) runs on the compute engine: larger reductions per output, or fewer "
     "POST entries per MAC",
     {"post.active", "gemm.starve"}},
    {"T5c compute hazard: bank conflicts",
     TopClass::ComputeHazard,
     {SubClass::BankConflict, kAny},
     "scratchpad bank conflicts held the array: change the layout",
     {"gemm.stall_mem"}},
    {"T5d compute hazard: pipeline",
     TopClass::ComputeHazard,
     {kAny, kAny},
     "per-command overhead (token pops, pipeline drain, pushes) is large against short GEMMs: "
     "fewer, longer commands",
     {"gemm.active", "macs_issued"}},
    {"T5e precision: BF16 rate",
     TopClass::Precision,
     {kAny, kAny},
     "the layer runs BF16, half the int8 MAC rate: if its quality allows, run it int8 (`bud run "
     "--precision auto` keeps BF16 only where int8 breaks the SNR guardrail; `bud bisect "
     "--workload W --good G --bad B` finds the layer that needs it)",
     {"macs_issued_bf16", "macs_issued"}},
    {"T6 unattributed",
     TopClass::Unattributed,
     {kAny, kAny},
     "no rule explains the loss: look at the engine classes directly",
     {"gemm.starve"}},
}};

}  // namespace

const char* top_class_name(TopClass c) {
  switch (c) {
    case TopClass::Useful:
      return "useful";
    case TopClass::ComputeHazard:
      return "compute_hazard";
    case TopClass::Memory:
      return "memory";
    case TopClass::Scheduling:
      return "scheduling";
    case TopClass::Host:
      return "host";
    case TopClass::Throttled:
      return "throttled";
    case TopClass::Precision:
      return "precision";
    case TopClass::Unattributed:
      return "unattributed";
    case TopClass::Count:
      break;
  }
  return "?";
}

const char* sub_class_name(SubClass c) {
  switch (c) {
    case SubClass::Useful:
      return "useful";
    case SubClass::Padding:
      return "padding";
    case SubClass::Pipeline:
      return "pipeline";
    case SubClass::BankConflict:
      return "bank_conflict";
    case SubClass::PostOccupancy:
      return "post_occupancy";
    case SubClass::DramWait:
      return "dram_wait";
    case SubClass::LoadTransfer:
      return "load_transfer";
    case SubClass::UnderBuffering:
      return "under_buffering";
    case SubClass::LoadStarved:
      return "load_starved";
    case SubClass::SyncDrain:
      return "sync_drain";
    case SubClass::CommandFetch:
      return "command_fetch";
    case SubClass::Starvation:
      return "starvation";
    case SubClass::Drain:
      return "drain";
    case SubClass::BackPressure:
      return "back_pressure";
    case SubClass::TokenWait:
      return "token_wait";
    case SubClass::Idle:
      return "idle";
    case SubClass::Throttled:
      return "throttled";
    case SubClass::Precision:
      return "precision";
    case SubClass::Unattributed:
      return "unattributed";
    case SubClass::Count:
      break;
  }
  return "?";
}

TopClass parent_of(SubClass c) {
  switch (c) {
    case SubClass::Useful:
      return TopClass::Useful;
    case SubClass::Padding:
    case SubClass::Pipeline:
    case SubClass::BankConflict:
    case SubClass::PostOccupancy:
      return TopClass::ComputeHazard;
    case SubClass::DramWait:
    case SubClass::LoadTransfer:
      return TopClass::Memory;
    case SubClass::UnderBuffering:
    case SubClass::LoadStarved:
    case SubClass::SyncDrain:
    case SubClass::CommandFetch:
    case SubClass::Starvation:
    case SubClass::Drain:
    case SubClass::BackPressure:
    case SubClass::TokenWait:
      return TopClass::Scheduling;
    case SubClass::Idle:
      return TopClass::Host;
    case SubClass::Throttled:
      return TopClass::Throttled;
    case SubClass::Precision:
      return TopClass::Precision;
    case SubClass::Unattributed:
    case SubClass::Count:
      break;
  }
  return TopClass::Unattributed;
}

uint64_t TopDown::top(TopClass c) const {
  uint64_t v = 0;
  for (int i = 0; i < kNumSubClasses; ++i)
    if (parent_of(static_cast<SubClass>(i)) == c) v += sub[i];
  return v;
}

std::array<uint32_t, kNumTopClasses> TopDown::basis_points() const {
  std::array<uint64_t, kNumTopClasses> w{};
  for (int c = 0; c < kNumTopClasses; ++c) w[c] = top(static_cast<TopClass>(c));
  const auto parts = split<kNumTopClasses>(slots ? 10000 : 0, w);
  std::array<uint32_t, kNumTopClasses> out{};
  for (int c = 0; c < kNumTopClasses; ++c) out[c] = static_cast<uint32_t>(parts[c]);
  return out;
}

TopDown& TopDown::operator+=(const TopDown& o) {
  slots += o.slots;
  for (int i = 0; i < kNumSubClasses; ++i) sub[i] += o.sub[i];
  return *this;
}

uint64_t ScopeMetrics::engine_cycles(isa::Engine e) const {
  uint64_t v = 0;
  for (auto c : engine[static_cast<size_t>(e)]) v += c;
  return v;
}

// A layer's value of an evidence counter: "<engine>.<class>" (attributed engine-cycles), or one
// of the scope's own sums.
uint64_t evidence_value(const ScopeMetrics& m, std::string_view name) {
  if (name == "dram_rd_bytes") return m.dram_rd_bytes;
  if (name == "macs_issued") return m.macs_issued;
  if (name == "macs_useful") return m.macs_useful;
  if (name == "macs_issued_bf16") return m.macs_issued_bf16;
  for (int e = 0; e < isa::kNumEngines; ++e)
    for (int c = 0; c < isa::kNumClasses; ++c)
      if (name == std::string(isa::kEngineNames[e]) + "." + std::string(isa::kClassNames[c]))
        return m.engine[e][c];
  return 0;
}

TriageRuleInfo triage_rule(TopClass top, SubClass sub) {
  TriageRuleInfo info;
  if (top == TopClass::Useful) {
    info.rule = "T0 at peak";
    info.advice = "no loss: the array did useful work every cycle";
    return info;
  }
  for (const auto& rule : kTriage) {
    if (rule.top != top) continue;
    const bool any = rule.subs[0] == kAny;
    if (!any && rule.subs[0] != sub && rule.subs[1] != sub) continue;
    info.rule = rule.name;
    info.advice = rule.advice;
    for (const char* name : rule.evidence)
      if (name) info.evidence.emplace_back(name);
    break;
  }
  return info;
}

std::vector<std::string> triage_rule_names() {
  std::vector<std::string> names = {"T0 at peak"};
  for (const auto& r : kTriage) names.emplace_back(r.name);
  return names;
}

uint64_t command_read_bytes(const isa::Command& c, const isa::ArrayConfig& array) {
  uint64_t bytes = isa::kCommandBytes;  // fetch reads every command from the ring
  if (c.opcode == isa::Opcode::Load) {
    const auto b = static_cast<size_t>(c.buffer);
    const uint32_t entry = b < isa::kNumBuffers ? array.entry_bytes(c.buffer) : 0;
    bytes += uint64_t{c.y_size} * c.x_size * entry;
  }
  return bytes;
}

std::vector<Bottleneck> rank_layers(const std::vector<ScopeMetrics>& layers, uint32_t array_macs) {
  std::vector<Bottleneck> ranking;
  for (size_t li = 0; li < layers.size(); ++li) {
    const auto& m = layers[li];
    Bottleneck b;
    b.layer = static_cast<int>(li);
    b.lost_cycles =
        array_macs ? (m.topdown.slots - m.topdown.sub[sub(SubClass::Useful)]) / array_macs : 0;
    uint64_t best = 0;
    for (int c = 1; c < kNumTopClasses; ++c) {
      const uint64_t v = m.topdown.top(static_cast<TopClass>(c));
      if (v > best) {
        best = v;
        b.dominant = static_cast<TopClass>(c);
      }
    }
    best = 0;
    for (int s = 0; s < kNumSubClasses; ++s) {
      if (parent_of(static_cast<SubClass>(s)) != b.dominant) continue;
      if (m.topdown.sub[s] > best || b.dominant_sub == SubClass::Useful) {
        best = m.topdown.sub[s];
        b.dominant_sub = static_cast<SubClass>(s);
      }
    }
    const auto rule = triage_rule(b.dominant, b.dominant_sub);
    b.rule = rule.rule;
    b.advice = rule.advice;
    for (const auto& name : rule.evidence) b.evidence.emplace_back(name, evidence_value(m, name));
    ranking.push_back(std::move(b));
  }
  std::stable_sort(ranking.begin(), ranking.end(), [](const Bottleneck& x, const Bottleneck& y) {
    return x.lost_cycles > y.lost_cycles;
  });
  return ranking;
}

Profile build_profile(const Attribution& a, const workload::Program& program,
                      const run::RunReport& report) {
  Profile p;
  p.array_macs = a.array_macs();
  p.cycles = report.counter("cycles");
  const auto& counts = a.commands();
  std::vector<Raw> raws(program.layers.size());
  std::vector<bool> in_layer(program.commands.size(), false);
  for (size_t li = 0; li < program.layers.size(); ++li) {
    const auto& layer = program.layers[li];
    ScopeMetrics m;
    m.name = layer.name;
    m.kind = workload::layer_kind_name(layer.kind);
    m.layers = 1;
    // A repeated workload runs the layer once per pass: its cycles are the sum of its spans.
    uint64_t first_any = UINT64_MAX, last_any = 0;
    for (uint64_t pass = 0; pass < program.passes; ++pass) {
      const uint64_t off = pass * program.pass_commands;
      uint64_t first = UINT64_MAX, last = 0;
      uint64_t tile_token_wait = 0;  // token waits of the loads since the last GEMM that popped L->C
      for (uint64_t c = layer.first_cmd + off;
           c <= layer.last_cmd + off && c < program.commands.size(); ++c) {
        in_layer[c] = true;
        add_command(m, raws[li], counts[c], &program.commands[c], program.array);
        const auto& cmd = program.commands[c];
        if (cmd.opcode == isa::Opcode::Load)
          tile_token_wait += counts[c].held[class_slot(Engine::Load, CycleClass::StallDep)];
        if (cmd.opcode == isa::Opcode::Gemm && cmd.pop_prev) {
          raws[li].late_loads += std::min(
              counts[c].held[class_slot(Engine::Gemm, CycleClass::StallDep)], tile_token_wait);
          tile_token_wait = 0;
        }
        const auto& cc = counts[c];
        first = std::min(first, cc.dispatched);
        const uint64_t end = cc.released != UINT64_MAX ? cc.released : cc.dispatched;
        if (end != UINT64_MAX) last = std::max(last, end);
      }
      if (first != UINT64_MAX && last >= first) m.cycles += last - first + 1;
      first_any = std::min(first_any, first);
      last_any = std::max(last_any, last);
    }
    m.first_dispatch = first_any == UINT64_MAX ? 0 : first_any;
    m.last_retire = last_any;
    m.precision = workload::precision_name(layer.precision);
    if (layer.precision == workload::Precision::Bf16) {
      m.macs_issued_bf16 = m.macs_issued;
      raws[li].issued_bf16 = raws[li].issued;
    }
    // Slots are the int8 array's (M per gemm cycle) whatever the precision, so that layers add
    // up to the model; a BF16 layer's unusable half is its precision class.
    m.topdown = top_down(raws[li], p.array_macs, false);
    m.engine_topdown = engine_top_down(m, raws[li], p.array_macs, false);
    p.layers.push_back(std::move(m));
  }
  // The tail: every engine's cycles after its last command, and commands outside every layer.
  Raw tail_raw;
  p.tail.name = "tail";
  p.tail.kind = "tail";
  add_command(p.tail, tail_raw, counts[a.tail_index()], nullptr, program.array);
  for (size_t c = 0; c < program.commands.size(); ++c)
    if (!in_layer[c]) add_command(p.tail, tail_raw, counts[c], &program.commands[c], program.array);
  p.tail.topdown = top_down(tail_raw, p.array_macs, true);
  p.tail.engine_topdown = engine_top_down(p.tail, tail_raw, p.array_macs, true);

  // The model and each type are the sums of their parts (top-down included).
  p.model.name = "model";
  p.model.kind = "model";
  add_scope(p.model, p.tail);
  for (const auto& l : p.layers) add_scope(p.model, l);
  p.model.cycles = p.cycles;  // the whole run, not only the layers' spans
  for (const auto& l : p.layers) {
    auto it = std::find_if(p.types.begin(), p.types.end(),
                           [&](const ScopeMetrics& t) { return t.name == l.kind; });
    if (it == p.types.end()) {
      ScopeMetrics t;
      t.name = t.kind = l.kind;
      p.types.push_back(t);
      it = p.types.end() - 1;
    }
    add_scope(*it, l);
  }
  const uint64_t model_useful = p.model.macs_useful;
  for (auto& l : p.layers)
    finish_scope(l, layer_peak(l, p.array_macs), model_useful);
  for (auto& t : p.types) finish_scope(t, p.array_macs, model_useful);
  finish_scope(p.tail, p.array_macs, model_useful);
  finish_scope(p.model, p.array_macs, model_useful);

  p.ranking = rank_layers(p.layers, p.array_macs);
  return p;
}

}  // namespace bud::profile
