#include "design/GoodSide.h"

#include <filesystem>

namespace bud::design {

namespace {

std::string stage_list(const DesignSpec& spec) {
  std::string s;
  for (const auto& st : spec.stages) s += (s.empty() ? "" : ", ") + st.name;
  return s.empty() ? "none" : s;
}

std::string overrides_phrase(const std::vector<std::string>& defines,
                             const std::vector<std::string>& params) {
  std::string s;
  for (const auto& d : defines) s += (s.empty() ? "" : " ") + std::string("--define ") + d;
  for (const auto& p : params) s += (s.empty() ? "" : " ") + std::string("--param ") + p;
  return s;
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

}  // namespace

const char* good_kind_name(GoodKind k) {
  switch (k) {
    case GoodKind::Packet: return "packet";
    case GoodKind::Overrides: return "overrides";
    case GoodKind::Unchanged: return "unchanged";
  }
  return "?";
}

std::optional<GoodSide> good_side(const OpenedPacket& bad, const DesignSpec& bad_spec,
                                  const GoodSideRequest& request, DesignError& error) {
  const auto fail = [&](std::string message) {
    error = DesignError{Where{}, std::move(message), kExitBadDesignFile};
    return std::nullopt;
  };
  GoodSide g;
  std::string why;
  std::optional<DesignSpec> spec;
  std::optional<OpenedPacket> opened;
  if (request.packet) {
    if (!request.packet->header.has_design_run())
      return fail("--good " + request.packet->name + " is not a design packet (" +
                  request.packet->header.design() + "), " + bad.name + " is one of design '" +
                  bad.design + "': the good side must be a run of the same design");
    opened = open_packet(*request.packet, request.cache_dir, why);
    if (!opened) {
      error = DesignError{Where{}, "--good " + why, 125};
      return std::nullopt;
    }
    const OpenedPacket& p = *opened;
    if (request.overrides)
      return fail("--good cannot be combined with --good-define or --good-param (the packet "
                  "holds its own overrides)");
    const std::string gf = file_name(p.bundle.design_file), bf = file_name(bad.bundle.design_file);
    if (p.design != bad.design || gf != bf)
      return fail("--good " + p.name + " is a packet of design '" + p.design + "' (" + gf + "), " +
                  bad.name + " of design '" + bad.design + "' (" + bf +
                  "): the good side must be a run of the same design");
    g.kind = GoodKind::Packet;
    g.packet = p.name;
    g.defines = p.run.defines;
    g.params = p.run.params;
    spec = p.recorded_spec(why);
    if (!spec) return fail(p.name + ": " + why);
    g.description = p.name + " (its design files";
    const std::string o = p.overrides_text();
    g.description += o.empty() ? ")" : ", " + o + ")";
  } else {
    if (!request.overrides && bad.run.defines.empty() && bad.run.params.empty())
      return fail(bad.name +
                  " was recorded without --define or --param, so its design has no good "
                  "variant to compare with: give one with --good GOOD.bpk (a design packet of a "
                  "good run) or --good-define NAME[=VALUE] / --good-param NAME=VALUE");
    g.kind = request.overrides ? GoodKind::Overrides : GoodKind::Unchanged;
    g.defines = request.defines;
    g.params = request.params;
    TargetOptions o;
    o.defines = g.defines;
    o.params = g.params;
    spec = spec_in(bad.bundle, bad.dir, o, why, "--good-define/--good-param");
    if (!spec) return fail(bad.name + ": " + why);
    const std::string phrase = overrides_phrase(g.defines, g.params);
    g.description = request.overrides
                        ? "the packet's design with " + (phrase.empty() ? "no overrides" : phrase)
                        : "the packet's design without " + bad.overrides_text();
  }
  bool same = spec->stages.size() == bad_spec.stages.size();
  for (size_t i = 0; same && i < bad_spec.stages.size(); ++i)
    same = spec->stages[i].name == bad_spec.stages[i].name;
  if (!same)
    return fail("the good side (" + g.description + ") has the [[stage]]s " + stage_list(*spec) +
                ", " + bad.name + " has " + stage_list(bad_spec) +
                ": bisect compares the same stages in the same order");
  use_inputs_of(*spec, bad_spec);
  g.spec = std::move(*spec);
  return g;
}

}  // namespace bud::design
