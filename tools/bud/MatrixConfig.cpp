#include "tools/bud/MatrixConfig.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "emu/run/Designs.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"

namespace bud::cli {

namespace {

/// Where an option was given: "new.flags:3:1".
struct Place {
  std::string origin;
  size_t line = 0, column = 0;
  std::string to_string() const {
    return origin + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

/// The options the matrix itself varies or that make no sense in a configuration.
std::string refused(const std::string& name) {
  if (name == "--mem-seed")
    return "--mem-seed is the matrix's own (every cell runs on each of --seeds memory seeds)";
  return {};
}

}  // namespace

std::string read_configuration(const std::string& arg, const std::string& name,
                               matrix::Configuration& out, int& exit_code) {
  exit_code = 2;
  out = {};
  out.name = name;
  std::string text;
  if (arg == "default") {
    out.origin = "default";
  } else if (arg.rfind("--", 0) == 0) {
    out.origin = name + " argument";
    text = arg;
  } else {
    std::ifstream in(arg, std::ios::binary);
    if (!in)
      return arg + ": cannot read (" + name +
             " is a file of run options, options starting with --, or `default`)";
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
    out.origin = arg;
  }
  run::RunOptions& o = out.options;
  std::vector<std::pair<std::string, Place>> seen;  // option name -> where first given
  Place config_place;
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string flags = line.substr(first, last - first + 1);
    const Place at{out.origin, number, first + 1};
    // One parser per line on the same options: values accumulate, and an error names its line.
    CLI::App app("configuration");
    add_emulation_options(app, o);
    try {
      app.parse(flags, false);
    } catch (const CLI::ParseError& e) {
      return at.to_string() + ": " + flags + ": " + e.what();
    }
    for (const auto* opt : app.get_options()) {
      if (opt->count() == 0) continue;
      const std::string n = opt->get_name();
      if (auto why = refused(n); !why.empty()) return at.to_string() + ": " + why;
      for (const auto& [s, p] : seen)
        if (s == n)
          return at.to_string() + ": " + n + " given twice (first at " + p.to_string() + ")";
      seen.emplace_back(n, at);
      if (n == "--config") config_place = at;
    }
    out.flags.push_back(flags);
  }
  if (auto e = validate_emulation_options(o); !e.empty()) return out.origin + ": " + e;
  // The array variant, as resolve_config resolves it, with the line that names it.
  const auto names = emu::design_names();
  if (std::find(names.begin(), names.end(), o.emulator.design) == names.end()) {
    std::string error;
    emu::ConfigError kind = emu::ConfigError::None;
    auto design = emu::design_for_config(o.emulator.design, error, kind);
    if (!design) {
      if (kind == emu::ConfigError::NotBuilt) exit_code = kExitNotBuilt;
      return config_place.to_string() + ": --config " + error;
    }
    o.emulator.design = *design;
  }
  auto table = resolve_power_options(o);
  if (!table) return out.origin + ": " + table.error();
  out.table = std::move(table).value();
  return {};
}

}  // namespace bud::cli
