#include "design/DesignPacket.h"

#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "design/ModelBuild.h"
#include "emu/core/Emulator.h"
#include "emu/core/Hash.h"
#include "replay/Framing.h"
#include "replay/PacketRun.h"
#include "replay/PacketWriter.h"

namespace bud::design {

namespace {

namespace fs = std::filesystem;
namespace pb = replay::pb;

// Files are small and compress well; the level only changes the size, never the bytes read.
constexpr int kZstdLevel = 9;

fs::path absolute_normal(const std::string& p) { return fs::absolute(p).lexically_normal(); }

// The deepest directory that holds `dir` and every path of `paths`.
fs::path common_root(fs::path root, const std::vector<fs::path>& paths) {
  for (const auto& p : paths) {
    fs::path common;
    auto a = root.begin(), b = p.begin();
    for (; a != root.end() && b != p.end() && *a == *b; ++a, ++b) common /= *a;
    root = common;
  }
  return root;
}

uint64_t hash_of(const std::string& s) {
  return hash64({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

pb::EmbeddedFile embed(const std::string& path, const std::string& bytes) {
  pb::EmbeddedFile f;
  f.set_path(path);
  f.set_raw_size(bytes.size());
  f.set_hash(hash_of(bytes));
  std::string z(ZSTD_compressBound(bytes.size()), '\0');
  const size_t n = ZSTD_compress(z.data(), z.size(), bytes.data(), bytes.size(), kZstdLevel);
  z.resize(ZSTD_isError(n) ? 0 : n);  // never for a bound-sized buffer; a reader would refuse it
  f.set_zstd(std::move(z));
  return f;
}

// Inflates one embedded file, checking its frame against its declared size before allocating.
std::optional<std::string> inflate(const pb::EmbeddedFile& f, std::string& error) {
  const std::string what = "embedded file '" + f.path() + "'";
  if (f.raw_size() > kMaxBundleBytes) {
    error = what + " claims " + std::to_string(f.raw_size()) + " bytes, more than the " +
            std::to_string(kMaxBundleBytes) + "-byte limit";
    return std::nullopt;
  }
  const auto declared = ZSTD_getFrameContentSize(f.zstd().data(), f.zstd().size());
  if (declared != f.raw_size()) {
    error = what + " is not one zstd frame of its " + std::to_string(f.raw_size()) + " bytes";
    return std::nullopt;
  }
  std::string out(f.raw_size(), '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), f.zstd().data(), f.zstd().size());
  if (ZSTD_isError(n) || n != out.size() || hash_of(out) != f.hash()) {
    error = what + " does not decompress to its recorded bytes";
    return std::nullopt;
  }
  return out;
}

// A path a packet may name: relative, '/'-separated components, none empty, "." or "..".
bool safe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.back() == '/') return false;
  std::istringstream parts(p);
  for (std::string c; std::getline(parts, c, '/');)
    if (c.empty() || c == "." || c == ".." || c.find('\0') != std::string::npos) return false;
  return true;
}

}  // namespace

uint64_t DesignBundle::hash() const {
  Hasher h;
  for (const auto& f : files) {
    h.add_u64(f.path.size());
    h.add({reinterpret_cast<const uint8_t*>(f.path.data()), f.path.size()});
    h.add_u64(f.bytes.size());
    h.add({reinterpret_cast<const uint8_t*>(f.bytes.data()), f.bytes.size()});
  }
  return h.digest();
}

std::optional<DesignBundle> collect_bundle(const DesignSpec& spec, DesignError& error) {
  std::vector<std::string> names{spec.file};
  names.insert(names.end(), spec.sources.begin(), spec.sources.end());
  for (const auto& f : include_files(spec)) names.push_back(f);
  if (spec.control) names.push_back(spec.control->firmware);
  for (const auto& s : spec.streams)
    if (s.direction == StreamPort::Direction::Source && !s.file.empty()) names.push_back(s.file);
  for (const auto& m : spec.memories)
    if (!m.init.empty()) names.push_back(m.init);
  // The reference command's own files (a script it runs, named relative to the design's
  // directory): `bud minimize` reruns it on reduced inputs in the packet's copy.
  if (spec.check)
    for (const auto& a : spec.check->reference) {
      const fs::path rel(a);
      std::error_code ec;
      if (a.empty() || a.find('{') != std::string::npos || rel.is_absolute() ||
          a.find("..") != std::string::npos || !fs::is_regular_file(fs::path(spec.dir) / rel, ec))
        continue;
      names.push_back((fs::path(spec.dir) / rel).string());
    }
  std::vector<fs::path> paths;
  for (const auto& n : names) paths.push_back(absolute_normal(n));
  std::vector<fs::path> dirs = paths;
  for (const auto& d : spec.include_dirs) dirs.push_back(absolute_normal(d));
  const fs::path root = common_root(absolute_normal(spec.dir), dirs);
  DesignBundle b;
  b.root = root.string();
  uint64_t total = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    DesignBundle::File f;
    f.path = paths[i].lexically_relative(root).generic_string();
    if (i == 0) b.design_file = f.path;
    std::ifstream in(paths[i], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) {
      error =
          DesignError{spec.top_where, "cannot read '" + names[i] + "' to embed it in the packet",
                      kExitBadDesignFile};
      return std::nullopt;
    }
    f.bytes = ss.str();
    total += f.bytes.size();
    b.files.push_back(std::move(f));
  }
  if (total > kMaxBundleBytes) {
    error = DesignError{spec.top_where,
                        "the design's files hold " + std::to_string(total) +
                            " bytes, more than a packet embeds (" +
                            std::to_string(kMaxBundleBytes) + ")",
                        kExitBadDesignFile};
    return std::nullopt;
  }
  // Sorted by path and each once: the packet's bytes depend on the files, not on the order the
  // design file names them in (nor on the file system's).
  std::sort(b.files.begin(), b.files.end(),
            [](const auto& x, const auto& y) { return x.path < y.path; });
  b.files.erase(std::unique(b.files.begin(), b.files.end(),
                            [](const auto& x, const auto& y) { return x.path == y.path; }),
                b.files.end());
  return b;
}

pb::Result design_result(const RunOutcome& r) {
  pb::Result out;
  out.set_cycles(r.cycles);
  out.set_state(emu::run_state_name(r.error         ? emu::RunState::Error
                                    : r.cycle_limit ? emu::RunState::CycleLimit
                                                    : emu::RunState::Finished));
  using V = pb::DesignOutcome;
  const V::Verdict verdict = r.error         ? V::ERROR
                             : r.cycle_limit ? V::CYCLE_LIMIT
                             : !r.checked  ? V::UNCHECKED
                             : r.passed    ? V::PASS
                                           : V::FAIL;
  out.set_passed(verdict == V::PASS || verdict == V::UNCHECKED);
  if (!out.passed()) out.add_failures(r.message);
  out.set_state_digest(r.state_digest);
  out.set_output_digest(r.checked_hash);
  for (const auto& [name, value] : r.counters) out.add_counters(value);
  auto* d = out.mutable_design();
  d->set_verdict(verdict);
  d->set_message(r.message);
  for (const auto& s : r.stages) {
    auto* t = out.add_stages();
    t->set_count(s.txns);
    t->set_sum(s.digest);
    d->add_stage_names(s.name);
  }
  for (const auto& s : r.streams) {
    auto* x = d->add_streams();
    x->set_name(s.name);
    x->set_sink(!s.source);
    x->set_beats(s.beats);
    x->set_bytes(s.source ? s.sent : s.bytes.size());
    if (!s.source) x->set_hash(hash_of(s.bytes));
  }
  d->set_checked_bytes(r.got_bytes);
  d->set_mismatch(r.first_mismatch.has_value());
  d->set_first_mismatch(r.first_mismatch.value_or(0));
  d->set_firmware_accesses(r.firmware_accesses);
  if (r.error) d->set_exit_code(r.error->exit_code);
  return out;
}

DesignPacketRecords design_packet_records(const DesignBundle& bundle, const RecordedRun& run,
                                          const RunOutcome& outcome, const DesignSpec& spec) {
  DesignPacketRecords p;
  pb::Header& h = p.header;
  h.set_format_major(replay::kFormatMajor);
  h.set_format_minor(replay::kFormatMinor);
  h.set_model_revision(outcome.revision);
  std::string verilator = verilator_version();
  while (!verilator.empty() && verilator.back() == '\n') verilator.pop_back();
  h.set_verilator_version(verilator);
  h.set_tool_version(replay::tool_version());
  for (const auto& t : replay::build_tags()) h.add_build_tags(t);
  h.set_design("design:" + spec.name);
  for (const auto& [name, value] : outcome.counters) h.add_counter_names(name);
  auto* d = h.mutable_design_run();
  d->set_design_file(bundle.design_file);
  d->set_recorded_root(bundle.root);
  for (const auto& x : run.defines) d->add_defines(x);
  for (const auto& x : run.params) d->add_params(x);
  d->set_seed(run.seed);
  d->set_max_cycles(run.max_cycles);
  d->set_quiet_cycles(run.quiet_cycles);
  for (const auto& f : bundle.files) *p.files.add_files() = embed(f.path, f.bytes);
  if (outcome.expected) *p.files.mutable_expected() = embed("expected", *outcome.expected);
  p.result = design_result(outcome);
  if (!p.result.passed()) {
    pb::Symptom s;
    s.set_kind(outcome.error         ? pb::Symptom::DESIGN_ERROR
               : outcome.cycle_limit ? pb::Symptom::CYCLE_LIMIT
                                     : pb::Symptom::RESULT_MISMATCH);
    s.set_cycle(outcome.cycles);
    s.set_message(outcome.message);
    s.add_details(outcome.message);
    p.symptom = s;
  }
  return p;
}

std::optional<WrittenPacket> write_design_packet(
    const std::string& path, const DesignSpec& spec, const RecordedRun& run,
    const RunOutcome& outcome, std::string& error,
    const std::vector<std::pair<uint64_t, std::string>>& notes) {
  DesignError derr;
  const auto bundle = collect_bundle(spec, derr);
  if (!bundle) {
    error = derr.to_string();
    return std::nullopt;
  }
  return write_design_packet(path, *bundle, spec, run, outcome, error, notes);
}

std::optional<WrittenPacket> write_design_packet(
    const std::string& path, const DesignBundle& bundle_, const DesignSpec& spec,
    const RecordedRun& run, const RunOutcome& outcome, std::string& error,
    const std::vector<std::pair<uint64_t, std::string>>& notes) {
  const DesignBundle* bundle = &bundle_;
  const DesignPacketRecords p = design_packet_records(*bundle, run, outcome, spec);
  auto w = replay::PacketWriter::create(path, error);
  if (!w) return std::nullopt;
  bool ok = w->write(pb::RECORD_HEADER, p.header) && w->write(pb::RECORD_DESIGN_FILES, p.files);
  for (const auto& [cycle, text] : notes) {
    pb::Annotation note;
    note.set_cycle(cycle);
    note.set_text(text);
    ok = ok && w->write(pb::RECORD_ANNOTATION, note, cycle);
  }
  if (ok && p.symptom) ok = w->write(pb::RECORD_SYMPTOM, *p.symptom, p.symptom->cycle());
  ok = ok && w->write(pb::RECORD_RESULT, p.result, outcome.cycles) && w->finish();
  if (!ok) {
    error = w->error();
    return std::nullopt;
  }
  WrittenPacket out;
  out.bytes = w->bytes();
  out.files = bundle->files.size();
  for (const auto& f : bundle->files) out.file_bytes += f.bytes.size();
  return out;
}

std::optional<DesignBundle> bundle_of(const pb::DesignFiles& files, const pb::DesignRun& run,
                                      std::string& error) {
  DesignBundle b;
  b.root = run.recorded_root();
  b.design_file = run.design_file();
  uint64_t total = 0;
  for (const auto& f : files.files()) {
    if (!safe_relative(f.path())) {
      error = "embedded file '" + f.path() + "': not a relative path inside the packet's tree";
      return std::nullopt;
    }
    if (!b.files.empty() && f.path() <= b.files.back().path) {
      error = "embedded file '" + f.path() + "' is out of order or repeated";
      return std::nullopt;
    }
    total += f.raw_size();
    if (total > kMaxBundleBytes) {
      error = "embedded files exceed the " + std::to_string(kMaxBundleBytes) + "-byte limit";
      return std::nullopt;
    }
    auto bytes = inflate(f, error);
    if (!bytes) return std::nullopt;
    b.files.push_back({f.path(), std::move(*bytes)});
  }
  const bool found = std::any_of(b.files.begin(), b.files.end(),
                                 [&](const auto& f) { return f.path == b.design_file; });
  if (!found) {
    error = "the design file '" + b.design_file + "' is not among the embedded files";
    return std::nullopt;
  }
  return b;
}

std::optional<std::string> expected_of(const pb::DesignFiles& files, std::string& error) {
  if (!files.has_expected()) return std::nullopt;
  return inflate(files.expected(), error);
}

}  // namespace bud::design
