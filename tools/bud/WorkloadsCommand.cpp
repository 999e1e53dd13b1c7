#include "tools/bud/WorkloadsCommand.h"

#include <cstdio>
#include <iostream>

#include "debugger/json/Json.h"
#include "emu/workload/Builtins.h"
#include "emu/workload/Lowering.h"
#include "tools/bud/Output.h"

namespace bud::cli {

using json::Json;

void setup_workloads(CLI::App& app, WorkloadsOptions& options) {
  auto* sub = app.add_subcommand("workloads", "List the built-in workloads");
  sub->footer(
      "Examples:\n"
      "  bud workloads\n"
      "  bud workloads --json\n"
      "  bud workloads --show conv > my_conv.textpb   # start a workload file from a built-in");
  sub->add_flag("--json", options.json, "One JSON array");
  sub->add_option("--show", options.show, "Print the text of one built-in");
}

int run_workloads(const WorkloadsOptions& options) {
  if (!options.show.empty()) {
    auto text = workload::builtin_text(options.show);
    if (!text) {
      return fail_command("workloads", options.json, 2,
                          "no built-in workload '" + options.show + "'");
    }
    std::cout << *text;
    return 0;
  }
  Json arr = Json::array();
  for (const auto& b : workload::list_builtins()) {
    auto w = workload::load_builtin(b.name);
    Json j = Json::object();
    j["name"] = b.name;
    j["description"] = b.description;
    if (w) {
      j["layers"] = static_cast<uint64_t>(w->layers.size());
      if (auto p = workload::lower(*w)) {
        j["commands"] = static_cast<uint64_t>(p->commands.size());
        j["gemm_iterations"] = p->gemm_iterations;
      }
    }
    arr.push_back(j);
    if (!options.json) {
      std::printf("%-14s %s\n", b.name.c_str(), b.description.c_str());
    }
  }
  if (options.json)
    std::cout << arr.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  return 0;
}

}  // namespace bud::cli
