#include "tools/bud/MatrixConfig.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "emu/core/Fault.h"
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

/// The array variant of `o`'s --config, as resolve_config resolves it: error text, and
/// `exit_code` kExitNotBuilt for a variant this bud was not built with.
std::string resolve_array(run::RunOptions& o, int& exit_code) {
  const auto names = emu::design_names();
  if (std::find(names.begin(), names.end(), o.emulator.design) != names.end()) return {};
  std::string error;
  emu::ConfigError kind = emu::ConfigError::None;
  auto design = emu::design_for_config(o.emulator.design, error, kind);
  if (!design) {
    if (kind == emu::ConfigError::NotBuilt) exit_code = kExitNotBuilt;
    return "--config " + error;
  }
  o.emulator.design = *design;
  return {};
}

/// Parses one line of options onto `o` (values accumulate; --fault adds to o.faults). The
/// options given, by name, in `given`. Error text (CLI11's, or the fault's) or empty.
std::string parse_line(const std::string& flags, run::RunOptions& o,
                       std::vector<std::string>& given) {
  CLI::App app("configuration");
  add_emulation_options(app, o);
  std::vector<std::string> faults;
  app.add_option("--fault", faults, "A fault, as for bud run (a broken revision, rehearsed)");
  try {
    app.parse(flags, false);
  } catch (const CLI::ParseError& e) {
    return flags + ": " + e.what();
  }
  for (const auto& t : faults) {
    std::string error;
    auto f = emu::parse_fault(t, error);
    if (!f) return "--fault '" + t + "': " + error;
    o.faults.push_back(*f);
  }
  given.clear();
  for (const auto* opt : app.get_options())
    if (opt->count() > 0) given.push_back(opt->get_name());
  return {};
}

}  // namespace

std::string read_configuration(const std::string& arg, const std::string& name,
                               matrix::Configuration& out, int& exit_code) {
  exit_code = 2;
  out.flags.clear();
  out.origin.clear();
  out.overlay = nullptr;
  out.name = name;
  std::string text;
  // An inline set of options may come with the leading space protect_inline_configurations
  // gave it.
  const auto start = arg.find_first_not_of(" \t");
  const std::string trimmed = start == std::string::npos ? std::string() : arg.substr(start);
  if (arg == "default") {
    out.origin = "default";
  } else if (trimmed.rfind("--", 0) == 0) {
    out.origin = "inline";
    text = trimmed;
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
  o = run::RunOptions();
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
    std::vector<std::string> given;
    if (auto e = parse_line(flags, o, given); !e.empty()) return at.to_string() + ": " + e;
    for (const auto& n : given) {
      if (n == "--fault") continue;  // repeatable
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
  if (auto e = resolve_array(o, exit_code); !e.empty()) return config_place.to_string() + ": " + e;
  auto table = resolve_power_options(o);
  if (!table) return out.origin + ": " + table.error();
  out.table = std::move(table).value();
  out.overlay = [flags = out.flags, origin = out.origin](run::RunOptions& over) -> std::string {
    std::vector<std::string> given;
    for (const auto& f : flags)
      if (auto e = parse_line(f, over, given); !e.empty()) return origin + ": " + e;
    if (auto e = validate_emulation_options(over); !e.empty()) return origin + ": " + e;
    int unused = 0;
    if (auto e = resolve_array(over, unused); !e.empty()) return origin + ": " + e;
    return {};
  };
  return {};
}

}  // namespace bud::cli
