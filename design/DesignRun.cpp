#include "design/DesignRun.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "design/ModelBuild.h"
#include "design/RtlSignals.h"
#include "emu/core/Hash.h"
#include "tools/process/Subprocess.h"

namespace bud::design {

namespace {

namespace fs = std::filesystem;

// Runs the reference command in the design's directory and reads what it wrote.
std::optional<std::string> expected_bytes(const DesignSpec& spec, DesignError& error) {
  const OutputCheck& c = *spec.check;
  std::string tmpl = (fs::temp_directory_path() / "bud-expected-XXXXXX").string();
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) {
    error = DesignError{c.where, "cannot create a file for the reference's output", kExitReference};
    return std::nullopt;
  }
  close(fd);
  // The inputs are named by absolute path: the command runs in the design's directory, and the
  // file's paths are relative to where bud runs.
  std::vector<std::string> argv;
  for (std::string a : c.reference) {
    for (size_t p; (p = a.find("{expected}")) != std::string::npos;) a.replace(p, 10, tmpl);
    for (const auto& s : spec.streams)
      for (size_t p; (p = a.find("{input:" + s.name + "}")) != std::string::npos;)
        a.replace(p, s.name.size() + 8, fs::absolute(s.file).string());
    for (const auto& m : spec.memories)
      for (size_t p; (p = a.find("{input:" + m.name + "}")) != std::string::npos;)
        a.replace(p, m.name.size() + 8, fs::absolute(m.init).string());
    argv.push_back(a);
  }
  // Relative paths in the command are the design directory's: run it there.
  const fs::path here = fs::current_path();
  std::error_code ec;
  fs::current_path(spec.dir, ec);
  const auto r = process::run(argv);
  fs::current_path(here, ec);
  std::ifstream in(tmpl, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(tmpl, ec);
  if (r.status != 0) {
    std::string err = r.err.substr(0, 300);
    while (!err.empty() && err.back() == '\n') err.pop_back();
    error = DesignError{c.where,
                        "[check].reference '" + c.reference[0] + "' failed (exit status " +
                            std::to_string(r.status) + ")" + (err.empty() ? "" : ": " + err),
                        kExitReference};
    return std::nullopt;
  }
  return ss.str();
}

// The checked range of a region: what its AXI4 port left there, or its initial contents when no
// port reaches it.
std::string region_bytes(const DesignSpec& spec, const AxiPorts& axi, const OutputCheck& c) {
  std::string out(c.length, '\0');
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  if (const Axi4Memory* m = axi.memory(c.memory)) {
    m->read(c.offset, {dst, out.size()});
    return out;
  }
  for (const auto& region : spec.memories) {
    if (region.name != c.memory || region.init.empty()) continue;
    std::ifstream in(region.init, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(c.offset));
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
  }
  return out;
}

// A message as the packet keeps it: the design's directory left out of the paths it names, so a
// replay from another directory (the packet's own copy) says the same.
std::string relative_message(const DesignSpec& spec, std::string text) {
  for (std::string dir : {spec.dir, fs::absolute(spec.dir).lexically_normal().string()}) {
    if (dir.empty() || dir == ".") continue;
    if (dir.back() != '/') dir += '/';
    for (size_t p; (p = text.find(dir)) != std::string::npos;) text.erase(p, dir.size());
  }
  return text;
}

}  // namespace

std::optional<RunOutcome> run_design(const DesignSpec& spec, const RunOptions& o,
                                     DesignError& error) {
  std::optional<BuiltModel> built = o.model;
  if (!built) {
    const auto rtl = read_rtl_signals(spec, error);
    if (!rtl) return std::nullopt;
    BuildOptions bo;
    bo.cache_dir = o.cache_dir;
    built = build_model(spec, *rtl, bo, error);
    if (!built) return std::nullopt;
  }
  std::string why;
  auto model = LoadedModel::load(built->library, why);
  if (!model) {
    error = DesignError{spec.top_where, why, kExitModelBuild};
    return std::nullopt;
  }
  auto h = DesignHarness::make(spec, *model, o.seed, why, o.dram);
  if (!h) {
    error = DesignError{spec.top_where, why, kExitRtlMismatch};
    return std::nullopt;
  }
  std::optional<HandshakeProfile> profile;
  if (o.profile) {
    ProfileOptions po = o.profile_options;
    po.quiet_cycles = o.quiet_cycles;
    profile = HandshakeProfile::make(spec, *h, po, why);
    if (!profile) {
      error = DesignError{spec.top_where, why, kExitBadDesignFile};
      return std::nullopt;
    }
    h->set_profile(&*profile);
  }
  h->reset();
  while (!h->drained(o.quiet_cycles) && !h->stopped() && h->cycle() < o.max_cycles) h->step();
  if (profile) {
    h->set_profile(nullptr);
    profile->finish(*h);
    *o.profile = std::move(profile);
  }
  return finish_run(spec, *h, o, built->revision, error);
}

std::optional<RunOutcome> finish_run(const DesignSpec& spec, const DesignHarness& harness,
                                     const RunOptions& o, const std::string& revision,
                                     DesignError& error) {
  RunOutcome r;
  r.design = spec.name;
  r.revision = revision;
  r.cycles = harness.cycle();
  r.cycle_limit = !harness.drained(o.quiet_cycles) && !harness.stopped();
  for (const Axi4Memory& m : harness.axi().memories())
    r.memories.push_back(MemoryOutcome{m.config().port, m.config().region, m.stats()});
  const auto& fw = harness.axi().firmware();
  r.has_firmware = fw.has_value();
  if (fw) r.firmware_accesses = fw->accesses();
  r.streams = harness.streams();
  for (const auto& c : harness.counters()) r.counters.emplace_back(c.name, c.value(harness.model()));
  r.stages = harness.stages();
  r.state_digest = harness.digest();
  for (const Axi4Memory& m : harness.axi().memories()) {
    if (!m.error() || r.error) continue;
    // Named at the port's [[axi4]] table.
    Where at = spec.top_where;
    for (const auto& p : spec.axi4)
      if (p.name == m.config().port) at = p.where;
    r.error = DesignError{at, m.error(), kExitAxiError};
  }
  using Status = FirmwareRunner::Status;
  if (!r.error && fw && (fw->status() == Status::Timeout || fw->status() == Status::Error))
    r.error = DesignError{Where{}, fw->message(),
                          fw->status() == Status::Timeout ? kExitFirmwareTimeout : kExitAxiError};
  if (r.error) {
    r.message = "error: " + relative_message(spec, r.error->to_string());
    return r;
  }
  if (!o.check) {
    r.cycle_limit = false;
    r.message = o.stopped_because;
    return r;
  }
  // The sinks' files.
  for (size_t i = 0; i < spec.streams.size() && o.write_sinks; ++i) {
    const StreamPort& s = spec.streams[i];
    if (s.direction != StreamPort::Direction::Sink || s.file.empty()) continue;
    const fs::path out = o.out_dir.empty() ? fs::path(s.file) : fs::path(o.out_dir) / fs::path(s.file).filename();
    std::ofstream f(out, std::ios::binary);
    f << r.streams[i].bytes;
  }
  if (r.cycle_limit) {
    r.message = "cycle limit: still not drained after " + std::to_string(r.cycles) + " cycles";
    return r;
  }
  if (fw && fw->status() == Status::Mismatch) {
    r.checked = true;
    r.message = "FAIL: firmware " + relative_message(spec, fw->message());
    return r;
  }
  if (!spec.check) {
    r.message = "ran " + std::to_string(r.cycles) + " cycles (no [check] in the design file)";
    return r;
  }
  const auto want = o.expected ? o.expected : expected_bytes(spec, error);
  if (!want) return std::nullopt;
  r.expected = *want;
  std::string got;
  for (size_t i = 0; i < spec.streams.size(); ++i)
    if (spec.streams[i].name == spec.check->sink) got = r.streams[i].bytes;
  const bool memory = !spec.check->memory.empty();
  if (memory) got = region_bytes(spec, harness.axi(), *spec.check);
  r.checked = true;
  r.checked_hash = hash64({reinterpret_cast<const uint8_t*>(got.data()), got.size()});
  r.expected_bytes = want->size();
  r.got_bytes = got.size();
  for (size_t i = 0; i < std::min(got.size(), want->size()) && !r.first_mismatch; ++i)
    if (got[i] != (*want)[i]) r.first_mismatch = i;
  if (!r.first_mismatch && got.size() != want->size()) r.first_mismatch = std::min(got.size(), want->size());
  r.passed = !r.first_mismatch;
  if (memory) {
    const OutputCheck& c = *spec.check;
    r.message = r.passed ? "PASS: memory '" + c.memory + "' [" + std::to_string(c.offset) + ", +" +
                               std::to_string(c.length) + ") matches the reference bit-exactly"
                         : "FAIL: memory '" + c.memory + "' differs from the reference at byte " +
                               std::to_string(*r.first_mismatch) + " (region offset " +
                               std::to_string(c.offset + *r.first_mismatch) + "); " +
                               std::to_string(got.size()) + " bytes checked, " +
                               std::to_string(want->size()) + " expected";
  } else if (r.passed) {
    r.message = "PASS: sink '" + spec.check->sink + "' matches the reference bit-exactly (" +
                std::to_string(got.size()) + " bytes)";
  } else {
    uint32_t beat = 1;
    for (const auto& s : spec.streams)
      if (s.name == spec.check->sink) beat = s.data_bits / 8;
    r.message = "FAIL: sink '" + spec.check->sink + "' differs from the reference at byte " +
                std::to_string(*r.first_mismatch) + " (beat " + std::to_string(*r.first_mismatch / beat) +
                "); " + std::to_string(got.size()) + " bytes received, " +
                std::to_string(want->size()) + " expected";
  }
  return r;
}

}  // namespace bud::design
