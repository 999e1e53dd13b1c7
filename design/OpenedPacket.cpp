#include "design/OpenedPacket.h"

#include <stdlib.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "design/ModelBuild.h"

namespace bud::design {

namespace {

namespace fs = std::filesystem;

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

// A directory holds the bundle when every file is there with its bytes.
bool holds(const fs::path& dir, const DesignBundle& bundle) {
  for (const auto& f : bundle.files) {
    std::ifstream in(dir / f.path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in || ss.str() != f.bytes) return false;
  }
  return true;
}

// A name safe as a directory name (the packet's design name is not trusted).
std::string safe_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return s.empty() ? "design" : s;
}

}  // namespace

std::optional<std::string> materialise(const DesignBundle& bundle, const std::string& name,
                                       const std::string& cache_dir, std::string& error) {
  const fs::path root = fs::absolute(fs::path(cache_root(cache_dir)) / "packets");
  const fs::path dir = root / (safe_name(name) + "-" + hex(bundle.hash()));
  if (fs::is_directory(dir) && holds(dir, bundle)) return dir.string();
  std::error_code ec;
  fs::create_directories(root, ec);
  std::string tmpl = (root / (".tmp-" + safe_name(name) + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) {
    error = "cannot create a directory in '" + root.string() + "' for the packet's files";
    return std::nullopt;
  }
  const fs::path work = tmpl;
  for (const auto& f : bundle.files) {
    fs::create_directories((work / f.path).parent_path(), ec);
    std::ofstream out(work / f.path, std::ios::binary);
    out << f.bytes;
    out.close();
    if (!out) {
      fs::remove_all(work, ec);
      error = "cannot write '" + (work / f.path).string() + "'";
      return std::nullopt;
    }
  }
  // A stale or partial copy (a crash, a user's edit) is replaced; a concurrent replay that
  // renamed the same bytes into place first wins.
  if (fs::exists(dir) && !holds(dir, bundle)) fs::remove_all(dir, ec);
  fs::rename(work, dir, ec);
  if (ec) {
    fs::remove_all(work, ec);
    if (!holds(dir, bundle)) {
      error = "cannot move the packet's files into '" + dir.string() + "'";
      return std::nullopt;
    }
  }
  return dir.string();
}

std::optional<DesignSpec> spec_in(const DesignBundle& bundle, const std::string& dir,
                                  const TargetOptions& overrides, std::string& error,
                                  const std::string& overrides_label) {
  const fs::path file = fs::path(dir) / bundle.design_file;
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = parse_design_text(text.str(), file.string(), Relocation{bundle.root, dir});
  if (!parsed.ok()) {
    error = "the embedded design: " + parsed.error.to_string();
    return std::nullopt;
  }
  if (auto e = apply_overrides(*parsed.spec, overrides)) {
    error = overrides_label + ": " + e->to_string();
    return std::nullopt;
  }
  return std::move(parsed.spec);
}

void use_inputs_of(DesignSpec& spec, const DesignSpec& inputs) {
  using Dir = StreamPort::Direction;
  for (auto& s : spec.streams)
    for (const auto& i : inputs.streams)
      if (s.direction == Dir::Source && i.direction == Dir::Source && s.name == i.name)
        s.file = i.file;
  for (auto& m : spec.memories)
    for (const auto& i : inputs.memories)
      if (m.name == i.name) m.init = i.init;
  if (spec.control && inputs.control) spec.control->firmware = inputs.control->firmware;
}

std::optional<DesignSpec> OpenedPacket::recorded_spec(std::string& error) const {
  TargetOptions o;
  o.defines = run.defines;
  o.params = run.params;
  return spec_in(bundle, dir, o, error);
}

TargetOptions OpenedPacket::target_options(const std::string& cache_dir) const {
  TargetOptions o;
  o.defines = run.defines;
  o.params = run.params;
  o.cache_dir = cache_dir;
  o.seed = run.seed;
  o.quiet_cycles = run.quiet_cycles;
  return o;
}

std::string OpenedPacket::overrides_text() const {
  std::string s;
  for (const auto& d : run.defines) s += (s.empty() ? "" : " ") + std::string("--define ") + d;
  for (const auto& p : run.params) s += (s.empty() ? "" : " ") + std::string("--param ") + p;
  return s;
}

std::optional<OpenedPacket> open_packet(const replay::Packet& packet, const std::string& cache_dir,
                                        std::string& error) {
  const std::string& name = packet.name;
  if (!packet.header.has_design_run()) {
    error = name + ": not a design packet (" + packet.header.design() + ")";
    return std::nullopt;
  }
  if (!packet.design_files) {
    error = name + ": a design packet without its design-files record";
    return std::nullopt;
  }
  OpenedPacket o;
  o.name = name;
  o.design = packet.header.design().substr(packet.header.design().find(':') + 1);
  o.revision = packet.header.model_revision();
  o.symptom = packet.symptom;
  const replay::pb::DesignRun& run = packet.header.design_run();
  o.run.defines.assign(run.defines().begin(), run.defines().end());
  o.run.params.assign(run.params().begin(), run.params().end());
  o.run.seed = run.seed();
  o.run.max_cycles = run.max_cycles();
  o.run.quiet_cycles = run.quiet_cycles();
  std::string why;
  auto bundle = bundle_of(*packet.design_files, run, why);
  if (!bundle) {
    error = name + ": " + why;
    return std::nullopt;
  }
  o.bundle = std::move(*bundle);
  o.expected = expected_of(*packet.design_files, why);
  if (!why.empty()) {
    error = name + ": " + why;
    return std::nullopt;
  }
  const auto dir = materialise(o.bundle, o.design, cache_dir, why);
  if (!dir) {
    error = name + ": " + why;
    return std::nullopt;
  }
  o.dir = *dir;
  return o;
}

}  // namespace bud::design
