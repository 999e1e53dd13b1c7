#include "replay/Recorder.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>

#include "emu/run/Designs.h"
#include "replay/CounterMap.h"

namespace bud::replay {

std::string RecordConfig::validate() const {
  if (digest_interval == 0) return "--digest-interval must be positive";
  if (checkpoint_interval == 0) return "--checkpoint-interval must be positive";
  if (checkpoint_interval % digest_interval != 0)
    return "--checkpoint-interval (" + std::to_string(checkpoint_interval) +
           ") must be a multiple of --digest-interval (" + std::to_string(digest_interval) + ")";
  return {};
}

void RecordConfig::read_environment() {
  if (const char* k = std::getenv("BUD_TEST_KILL_AT_CYCLE"); k && *k)
    kill_at_cycle = std::strtoull(k, nullptr, 10);
}

Recorder::Recorder(PacketWriter& writer, emu::Emulator& emu, RecordConfig config)
    : writer_(writer), emu_(emu), config_(std::move(config)), targets_{&writer} {}

void Recorder::add_target(PacketWriter& writer) {
  if (std::find(targets_.begin(), targets_.end(), &writer) == targets_.end())
    targets_.push_back(&writer);
}

template <class F>
bool Recorder::to_all(F&& write) {
  for (auto* w : targets_)
    if (!write(*w)) {
      error_ = w->error();
      return false;
    }
  return true;
}

bool Recorder::write_intervention(const drive::Intervention& iv) {
  const auto r = intervention_record(iv, emu_);
  return to_all([&](PacketWriter& w) { return w.write(pb::RECORD_INTERVENTION, r, iv.cycle); });
}

bool Recorder::annotate(PacketWriter& writer, uint64_t cycle, const std::string& text) {
  pb::Annotation note;
  note.set_cycle(cycle);
  note.set_text(text);
  if (!writer.write(pb::RECORD_ANNOTATION, note, cycle)) return error_ = writer.error(), false;
  return true;
}

RecordSummary Recorder::summary() const {
  RecordSummary s;
  s.path = writer_.path();
  s.bytes = writer_.bytes();
  s.cycles = emu_.cycle() - start_cycle_;
  s.checkpoints = checkpoints_;
  s.windows = windows_;
  s.digests = digests_;
  s.state_bytes = writer_.state_bytes();
  s.new_chunk_bytes = writer_.new_chunk_bytes();
  s.breakdown = writer_.breakdown();
  return s;
}

bool Recorder::begin(const pb::Header& header, std::span<const uint8_t> stimulus,
                     const std::vector<std::string>& annotations) {
  start_cycle_ = emu_.cycle();
  next_progress_ = start_cycle_ + (1u << 20);
  // The design and its counter names come from the emulator being recorded.
  pb::Header described = header;
  CounterMap::describe(described, emu_.describe());
  if (!to_all([&](PacketWriter& w) { return w.write(pb::RECORD_HEADER, described); })) return false;
  if (!to_all([&](PacketWriter& w) { return w.write_stimulus(stimulus, config_.zstd_level); })) return false;
  for (const auto& a : annotations) {
    pb::Annotation note;
    note.set_cycle(start_cycle_);
    note.set_text(a);
    if (!to_all([&](PacketWriter& w) { return w.write(pb::RECORD_ANNOTATION, note, start_cycle_); })) return false;
  }
  if (!write_checkpoint(start_cycle_)) return false;
  window_.Clear();
  window_.set_index(0);
  window_.set_start_cycle(start_cycle_);
  return true;
}

void Recorder::add_digest_point() {
  auto* d = window_.add_digests();
  d->set_cycle(emu_.cycle());
  d->set_digest(emu_.digest());
  ++digests_;
}

bool Recorder::close_window() {
  window_.set_end_cycle(emu_.cycle());
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto d = emu_.stage_digest(static_cast<emu::Stage>(s));
    auto* t = window_.add_stages();
    t->set_count(d.count);
    t->set_sum(d.sum);
    t->set_open_cmd(d.open_cmd);
    t->set_open_count(d.open_count);
    t->set_open_sum(d.open_sum);
  }
  const int counters = emu_.describe().num_counters();
  for (int i = 0; i < counters; ++i) window_.add_counters(emu_.counter(i));
  if (!to_all([&](PacketWriter& w) { return w.write(pb::RECORD_WINDOW, window_, window_.start_cycle()); })) return false;
  ++windows_;
  window_.Clear();
  window_.set_index(windows_);
  window_.set_start_cycle(emu_.cycle());
  return true;
}

bool Recorder::write_checkpoint(uint64_t cycle) {
  state_.clear();
  emu_.save(state_);
  if (!to_all([&](PacketWriter& w) { return w.write_checkpoint(cycle, state_, config_.zstd_level); })) return false;
  ++checkpoints_;
  return true;
}

uint64_t Recorder::next_pause(uint64_t now) const {
  const uint64_t k = config_.digest_interval;
  return (now / k + 1) * k;
}

drive::PauseAction Recorder::on_pause(uint64_t c) {
  const bool running = emu_.state() == emu::RunState::Ready;
  if (c % config_.digest_interval == 0 || !running) add_digest_point();
  if (c % config_.checkpoint_interval == 0 && running && c != window_.start_cycle()) {
    if (!close_window() || !write_checkpoint(c)) return drive::PauseAction::Fail;
  }
  if (config_.kill_at_cycle && c >= *config_.kill_at_cycle) std::raise(SIGKILL);
  if (config_.progress && c >= next_progress_) {
    config_.progress(c);
    next_progress_ = c + (1u << 20);
  }
  return drive::PauseAction::Continue;
}

bool Recorder::run(uint64_t limit) {
  drive::Driver driver(emu_);
  driver.add(*this);
  return !driver.run_until(limit, config_.digest_interval).failed;
}

bool Recorder::end(const run::RunReport* report, bool stopped,
                   const std::optional<pb::Symptom>& prefix_symptom) {
  const bool has_point = window_.digests_size() > 0 &&
                         window_.digests(window_.digests_size() - 1).cycle() == emu_.cycle();
  if (!has_point) add_digest_point();
  if (!close_window()) return false;
  if (report) {
    if (auto s = symptom_of(*report)) {
      if (!to_all([&](PacketWriter& w) { return w.write(pb::RECORD_SYMPTOM, *s, s->cycle()); })) return false;
    }
    auto r = result_of(*report);
    r.set_stopped(stopped);
    if (!to_all([&](PacketWriter& w) { return w.write(pb::RECORD_RESULT, r, report->cycles); })) return false;
  } else {
    if (prefix_symptom &&
        !to_all([&](PacketWriter& w) {
          return w.write(pb::RECORD_SYMPTOM, *prefix_symptom, prefix_symptom->cycle());
        }))
      return false;
    pb::Result r;
    r.set_cycles(emu_.cycle());
    r.set_state(emu::run_state_name(emu_.state()));
    r.set_stopped(stopped);
    r.set_state_digest(emu_.digest());
    if (!to_all([&](PacketWriter& w) { return w.write(pb::RECORD_RESULT, r, emu_.cycle()); })) return false;
  }
  if (!to_all([&](PacketWriter& w) { return w.finish(); })) return false;
  return true;
}

RecordOutcome record_run(const std::string& path, const RunSpec& spec,
                         const run::PreparedRun& prepared, const RecordConfig& config) {
  RecordOutcome out;
  if (auto e = config.validate(); !e.empty()) {
    out.error = e;
    return out;
  }
  auto made = emu::make_emulator(spec.options.emulator, out.error);
  if (!made) return out;
  emu::Emulator& emu = *made;
  if (auto e = run::start(prepared, spec.options, emu); !e.empty()) {
    out.error = "cannot start: " + e;
    return out;
  }
  auto writer = PacketWriter::create(path, out.error);
  if (!writer) return out;
  Recorder rec(*writer, emu, config);
  const auto header =
      make_header(spec, prepared, config.digest_interval, config.checkpoint_interval, emu.cycle());
  if (!rec.begin(header, encode_job(prepared.job), spec.annotations)) {
    out.error = rec.error();
    return out;
  }
  drive::Driver driver(emu);
  driver.add(rec);
  run::RunOptions ro = spec.options;
  ro.progress = nullptr;  // the recorder shows progress (RecordConfig::progress)
  drive::DriveStop stop;
  out.report = run::finish(prepared, ro, driver, &stop);
  if (stop.failed) {
    out.error = rec.error().empty() ? stop.detail : rec.error();
    return out;
  }
  if (!rec.end(&out.report, false)) out.error = rec.error();
  out.summary = rec.summary();
  return out;
}

}  // namespace bud::replay
