#include "replay/PacketRun.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bud/ModelRevision.h"
#include "emu/golden/Checker.h"
#include "emu/golden/GoldenNpu.h"
#include "emu/isa/Isa.h"
#include "emu/onnx/Importer.h"
#include "emu/run/Designs.h"
#include "emu/run/RunJob.h"
#include "emu/workload/Builtins.h"
#include "emu/workload/Workload.h"
#include "replay/Framing.h"

namespace bud::replay {

std::string tool_version() { return "bud 0.1.0"; }

std::vector<std::string> build_tags() {
  std::vector<std::string> tags;
#if defined(__clang__)
  tags.push_back("compiler=clang-" + std::to_string(__clang_major__) + "." +
                 std::to_string(__clang_minor__));
#elif defined(__GNUC__)
  tags.push_back("compiler=gcc-" + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__));
#endif
#ifdef NDEBUG
  tags.push_back("asserts=off");
#else
  tags.push_back("asserts=on");
#endif
  tags.push_back(std::string("verilator-args=") + build::kVerilatorArgs);
  return tags;
}

workload::Result<std::string> workload_text(const std::string& workload,
                                            std::optional<uint64_t> seed,
                                            const run::ImportChoices& import) {
  if (auto t = workload::builtin_text(workload)) return std::string(*t);
  if (onnx_import::is_onnx_path(workload)) return run::import_text(workload, seed, import);
  std::ifstream in(workload, std::ios::binary);
  if (!in)
    return workload::Error{"'" + workload +
                           "' is neither a built-in workload (see `bud workloads`) nor a file"};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

workload::Result<RunSpec> make_spec(const run::RunOptions& options,
                                    const run::PreparedRun& prepared) {
  auto text = workload_text(options.workload, options.seed, options.import);
  if (!text) return workload::Error{text.error()};
  // Tile caps given as run options go into the embedded text: replay lowers from it alone.
  auto tiled = workload::with_tile_limits(*text, options.tiles, options.workload);
  if (!tiled) return workload::Error{tiled.error()};
  RunSpec s;
  s.workload_text = std::move(tiled).value();
  s.workload_origin = options.workload;
  s.options = options;
  s.options.seed = prepared.workload.seed;
  s.options.precision = prepared.precision;  // a precision file's text, not its path
  if (!prepared.precision.empty() && prepared.precision != options.precision)
    s.options.precision_origin = options.precision;
  s.options.tiles = {};
  s.options.progress = nullptr;
  // The model itself goes into the packet: a replay must not depend on the file (or the
  // directory it was recorded from).
  if (onnx_import::is_onnx_path(options.workload)) {
    auto bytes = run::onnx_model_bytes(options.workload, options.import);
    if (!bytes) return workload::Error{bytes.error()};
    s.options.import.model = std::move(bytes).value();
  }
  return s;
}

std::string add_checks(run::PreparedRun& p) { return run::add_checks(p); }

workload::Result<run::PreparedRun> prepare_spec(const RunSpec& spec, bool with_checks) {
  workload::LoadOptions lo;
  lo.seed = spec.options.seed;
  auto w = workload::parse_workload(spec.workload_text, "packet:workload", lo);
  if (!w) return workload::Error{w.error()};
  return run::prepare_workload(std::move(w).value(), spec.options, with_checks);
}

pb::Header make_header(const RunSpec& spec, const run::PreparedRun& prepared,
                       uint64_t digest_interval, uint64_t checkpoint_interval,
                       uint64_t start_cycle) {
  pb::Header h;
  h.set_format_major(kFormatMajor);
  h.set_format_minor(kFormatMinor);
  // The revision of the design that runs it (each array variant has its own).
  h.set_model_revision(emu::design_revision(spec.options.emulator.design));
  h.set_verilator_version(build::kVerilatorVersion);
  h.set_tool_version(tool_version());
  for (const auto& t : build_tags()) h.add_build_tags(t);
  const auto& o = spec.options;
  auto* seeds = h.mutable_seeds();
  seeds->set_workload(prepared.workload.seed);
  seeds->set_memory(o.emulator.dram.seed);
  seeds->set_verilator(o.emulator.verilator_seed);
  auto* w = h.mutable_workload();
  w->set_name(prepared.workload.name);
  w->set_text(spec.workload_text);
  w->set_origin(spec.workload_origin);
  w->set_precision(o.precision);
  w->set_onnx_model(o.import.model);
  w->set_onnx_per_channel(o.import.per_channel);
  w->set_onnx_host_attention(o.import.host_attention);
  const auto& d = o.emulator.dram;
  auto* m = h.mutable_memory();
  m->set_size_bytes(d.size_bytes);
  m->set_base_latency(d.base_latency);
  m->set_jitter(d.jitter);
  m->set_bytes_per_cycle(d.bytes_per_cycle);
  m->set_max_outstanding(d.max_outstanding);
  m->set_reorder(d.reorder);
  m->set_bursty(d.bursty);
  m->set_burst_period(d.burst_period);
  m->set_burst_duty_pct(d.burst_duty_pct);
  auto* l = h.mutable_limits();
  l->set_max_cycles(o.max_cycles);
  l->set_hang_cycles(o.emulator.hang_cycles);
  l->set_throttle_period(o.emulator.throttle.period);
  l->set_throttle_on_cycles(o.emulator.throttle.on_cycles);
  if (const auto& t = o.emulator.thermal; t.enabled) {
    auto* th = h.mutable_thermal();
    th->set_window_cycles(t.window_cycles);
    th->set_frequency_khz(t.frequency_khz);
    th->set_ambient_mc(t.ambient_mc);
    th->set_trip_mc(t.trip_mc);
    th->set_hysteresis_mc(t.hysteresis_mc);
    th->set_r_mc_per_w(t.r_mc_per_w);
    th->set_c_nj_per_c(t.c_nj_per_c);
    for (const auto& [index, fj] : t.prices) {
      th->add_counters(isa::counter_name(static_cast<int>(index)));
      th->add_fj(fj);
    }
  }
  for (const auto& t : spec.triggers) h.add_triggers(t);
  for (const auto& f : o.faults) h.add_faults()->set_text(f.to_string());
  auto* st = h.mutable_stimulus();
  st->set_job_fingerprint(prepared.job.fingerprint());
  st->set_ring_base(prepared.job.ring_base);
  st->set_ring_entries(prepared.job.ring_entries);
  st->set_poll_interval(prepared.job.poll_interval);
  st->set_commands(prepared.job.commands.size());
  uint64_t image = 0;
  for (const auto& r : prepared.job.image) image += r.bytes.size();
  st->set_image_bytes(image);
  h.mutable_intervals()->set_digest(digest_interval);
  h.mutable_intervals()->set_checkpoint(checkpoint_interval);
  h.set_start_cycle(start_cycle);
  return h;
}

workload::Result<RunSpec> spec_from_header(const pb::Header& h) {
  RunSpec s;
  s.workload_text = h.workload().text();
  s.workload_origin = h.workload().origin();
  s.options.precision = h.workload().precision();
  s.options.precision_origin = "packet:precision";
  auto& o = s.options;
  o.workload = h.workload().name();
  o.import.model = h.workload().onnx_model();
  o.import.per_channel = h.workload().onnx_per_channel();
  o.import.host_attention = h.workload().onnx_host_attention();
  o.import.model_available = !o.import.model.empty() || !onnx_import::is_onnx_path(o.workload);
  // Packets before the design was recorded are NPU packets.
  o.emulator.design = h.design().empty() ? "npu" : h.design();
  o.seed = h.seeds().workload();
  o.emulator.dram.seed = h.seeds().memory();
  o.emulator.verilator_seed = h.seeds().verilator();
  const auto& m = h.memory();
  auto& d = o.emulator.dram;
  d.size_bytes = m.size_bytes();
  d.base_latency = m.base_latency();
  d.jitter = m.jitter();
  d.bytes_per_cycle = m.bytes_per_cycle();
  d.max_outstanding = m.max_outstanding();
  d.reorder = m.reorder();
  d.bursty = m.bursty();
  d.burst_period = m.burst_period();
  d.burst_duty_pct = m.burst_duty_pct();
  if (auto e = d.validate(); !e.empty()) return workload::Error{"recorded memory model: " + e};
  o.max_cycles = h.limits().max_cycles();
  o.emulator.hang_cycles = h.limits().hang_cycles();
  o.emulator.throttle.period = h.limits().throttle_period();
  o.emulator.throttle.on_cycles = h.limits().throttle_on_cycles();
  if (auto e = o.emulator.throttle.validate(); !e.empty())
    return workload::Error{"recorded throttle: " + e};
  if (h.has_thermal()) {
    const auto& th = h.thermal();
    auto& t = o.emulator.thermal;
    t.enabled = true;
    t.window_cycles = th.window_cycles();
    t.frequency_khz = th.frequency_khz();
    t.ambient_mc = th.ambient_mc();
    t.trip_mc = th.trip_mc();
    t.hysteresis_mc = th.hysteresis_mc();
    t.r_mc_per_w = th.r_mc_per_w();
    t.c_nj_per_c = th.c_nj_per_c();
    if (th.counters_size() != th.fj_size())
      return workload::Error{"recorded thermal model: " + std::to_string(th.counters_size()) +
                             " counters but " + std::to_string(th.fj_size()) + " prices"};
    for (int i = 0; i < th.counters_size(); ++i) {
      const auto index = isa::find_counter(th.counters(i));
      if (!index)
        return workload::Error{"recorded thermal model: '" + th.counters(i) +
                               "' is not a counter of this design"};
      t.prices.emplace_back(static_cast<uint32_t>(*index), th.fj(i));
    }
    if (auto e = t.validate(); !e.empty()) return workload::Error{"recorded " + e};
  }
  if (o.max_cycles == 0 || o.emulator.hang_cycles == 0)
    return workload::Error{"recorded limits are zero"};
  for (const auto& f : h.faults()) {
    std::string error;
    auto spec = emu::parse_fault(f.text(), error);
    if (!spec) return workload::Error{"recorded fault '" + f.text() + "': " + error};
    o.faults.push_back(*spec);
  }
  for (const auto& t : h.triggers()) s.triggers.push_back(t);
  return s;
}

std::vector<uint8_t> encode_job(const emu::HostJob& job) {
  std::vector<uint8_t> out;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
  };
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
  };
  u32(job.ring_base);
  u32(job.ring_entries);
  u32(job.poll_interval);
  u32(static_cast<uint32_t>(job.commands.size()));
  for (const auto& c : job.commands)
    for (uint64_t w : c) u64(w);
  u32(static_cast<uint32_t>(job.image.size()));
  for (const auto& r : job.image) {
    u32(r.addr);
    u32(static_cast<uint32_t>(r.bytes.size()));
    out.insert(out.end(), r.bytes.begin(), r.bytes.end());
  }
  return out;
}

std::optional<emu::HostJob> decode_job(std::span<const uint8_t> b, std::string& error) {
  size_t off = 0;
  auto need = [&](size_t n) {
    if (b.size() - off >= n) return true;
    error = "stimulus byte " + std::to_string(off) + ": truncated";
    return false;
  };
  auto u32 = [&] {
    uint32_t v = get_u32(b.data() + off);
    off += 4;
    return v;
  };
  emu::HostJob job;
  if (!need(16)) return std::nullopt;
  job.ring_base = u32();
  job.ring_entries = u32();
  job.poll_interval = u32();
  const uint32_t n = u32();
  if (!need(size_t{n} * 32)) return std::nullopt;
  job.commands.resize(n);
  for (auto& c : job.commands)
    for (auto& w : c) {
      w = get_u64(b.data() + off);
      off += 8;
    }
  if (!need(4)) return std::nullopt;
  const uint32_t regions = u32();
  for (uint32_t i = 0; i < regions; ++i) {
    if (!need(8)) return std::nullopt;
    emu::HostJob::Region r;
    r.addr = u32();
    const uint32_t len = u32();
    if (!need(len)) return std::nullopt;
    r.bytes.assign(b.begin() + off, b.begin() + off + len);
    off += len;
    job.image.push_back(std::move(r));
  }
  if (off != b.size()) {
    error = "stimulus byte " + std::to_string(off) + ": trailing bytes";
    return std::nullopt;
  }
  return job;
}

const char* symptom_kind_name(int kind) {
  switch (kind) {
    case pb::Symptom::RESULT_MISMATCH:
      return "result-mismatch";
    case pb::Symptom::ASSERTION:
      return "assertion";
    case pb::Symptom::HANG:
      return "hang";
    case pb::Symptom::TRIGGER:
      return "trigger";
    case pb::Symptom::DESIGN_ERROR:
      return "design-error";
    case pb::Symptom::CYCLE_LIMIT:
      return "cycle-limit";
    case pb::Symptom::STAGE_MISMATCH:
      return "stage-mismatch";
    default:
      return "unknown";
  }
}

std::optional<pb::Symptom> symptom_of(const run::RunReport& r) {
  if (r.passed) return std::nullopt;
  pb::Symptom s;
  switch (r.state) {
    case emu::RunState::Hang:
    case emu::RunState::Ready:
      s.set_kind(pb::Symptom::HANG);
      break;
    case emu::RunState::CycleLimit:
      s.set_kind(pb::Symptom::CYCLE_LIMIT);
      break;
    case emu::RunState::Assertion:
      s.set_kind(pb::Symptom::ASSERTION);
      break;
    case emu::RunState::Error:
      s.set_kind(pb::Symptom::DESIGN_ERROR);
      break;
    case emu::RunState::Finished:
      s.set_kind(pb::Symptom::RESULT_MISMATCH);
      break;
  }
  s.set_cycle(r.cycles);
  std::string first = r.failures.empty() ? r.message : r.failures.front();
  if (auto nl = first.find('\n'); nl != std::string::npos) first.resize(nl);
  s.set_message(first);
  for (const auto& f : r.failures) s.add_details(f);
  return s;
}

pb::Result result_of(const run::RunReport& r) {
  pb::Result out;
  out.set_cycles(r.cycles);
  out.set_state(emu::run_state_name(r.state));
  out.set_passed(r.passed);
  for (const auto& f : r.failures) out.add_failures(f);
  out.set_state_digest(r.state_digest);
  out.set_output_digest(r.output_digest);
  for (auto c : r.counters) out.add_counters(c);
  for (const auto& d : r.rtl_digests) {
    auto* s = out.add_stages();
    s->set_count(d.count);
    s->set_sum(d.sum);
    s->set_open_cmd(d.open_cmd);
    s->set_open_count(d.open_count);
    s->set_open_sum(d.open_sum);
  }
  return out;
}

pb::Intervention intervention_record(const drive::Intervention& iv, const emu::Emulator& emu) {
  using K = drive::Intervention::Kind;
  pb::Intervention r;
  r.set_kind(iv.kind == K::Deposit   ? pb::Intervention::DEPOSIT
             : iv.kind == K::Force   ? pb::Intervention::FORCE
             : iv.kind == K::Release ? pb::Intervention::RELEASE
                                     : pb::Intervention::MEMORY_WRITE);
  r.set_cycle(iv.cycle);
  if (iv.kind == K::MemoryWrite) {
    r.set_memory(iv.memory);
    r.set_offset(iv.offset);
    r.set_bytes(std::string(iv.bytes.begin(), iv.bytes.end()));
    return r;
  }
  if (iv.signal < emu.signals().size()) r.set_signal(emu.signals()[iv.signal].name);
  r.set_element(iv.element);
  r.set_width(iv.value.width);
  const uint32_t words = (iv.value.width + 63) / 64;
  for (uint32_t w = 0; w < words && w < iv.value.words.size(); ++w) r.add_value(iv.value.words[w]);
  return r;
}

std::optional<drive::Intervention> intervention_from(const pb::Intervention& r,
                                                     const emu::Emulator& emu,
                                                     std::string& error) {
  using K = drive::Intervention::Kind;
  const std::string where = "intervention at cycle " + std::to_string(r.cycle()) + ": ";
  drive::Intervention iv;
  iv.cycle = r.cycle();
  switch (r.kind()) {
    case pb::Intervention::DEPOSIT: iv.kind = K::Deposit; break;
    case pb::Intervention::FORCE: iv.kind = K::Force; break;
    case pb::Intervention::RELEASE: iv.kind = K::Release; break;
    case pb::Intervention::MEMORY_WRITE: iv.kind = K::MemoryWrite; break;
    default:
      error = where + "unknown kind " + std::to_string(static_cast<int>(r.kind()));
      return std::nullopt;
  }
  if (iv.kind == K::MemoryWrite) {
    const emu::MemoryInfo* mem = nullptr;
    for (const auto& m : emu.memories())
      if (m.name == r.memory()) mem = &m;
    if (!mem) {
      error = where + "no memory named '" + r.memory() + "'";
      return std::nullopt;
    }
    if (r.offset() > mem->size_bytes || r.bytes().size() > mem->size_bytes - r.offset()) {
      error = where + std::to_string(r.bytes().size()) + " bytes at offset " +
              std::to_string(r.offset()) + " do not fit in " + r.memory() + " (" +
              std::to_string(mem->size_bytes) + " bytes)";
      return std::nullopt;
    }
    iv.memory = r.memory();
    iv.offset = r.offset();
    iv.bytes.assign(r.bytes().begin(), r.bytes().end());
    return iv;
  }
  const auto id = emu.find_signal(r.signal());
  if (!id) {
    error = where + "no signal named '" + r.signal() + "' in this design";
    return std::nullopt;
  }
  const auto& info = emu.signals()[*id];
  if (r.element() >= info.elements) {
    error = where + r.signal() + "[" + std::to_string(r.element()) + "] is out of range (" +
            std::to_string(info.elements) + " elements)";
    return std::nullopt;
  }
  if (iv.kind != K::Release &&
      (r.width() != info.width || r.value_size() != static_cast<int>((info.width + 63) / 64))) {
    error = where + r.signal() + " is " + std::to_string(info.width) + " bits here, the value has " +
            std::to_string(r.width()) + " bits in " + std::to_string(r.value_size()) + " words";
    return std::nullopt;
  }
  iv.signal = *id;
  iv.element = r.element();
  iv.value.width = info.width;
  for (int w = 0; w < r.value_size(); ++w) iv.value.words[w] = r.value(w);
  return iv;
}

}  // namespace bud::replay
