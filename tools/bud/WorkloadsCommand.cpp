#include "tools/bud/WorkloadsCommand.h"

#include <cstdio>
#include <iostream>

#include "emu/workload/Builtins.h"
#include "emu/workload/Lowering.h"
#include "debugger/json/Json.h"

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
      std::cerr << "bud workloads: no built-in workload '" << options.show << "'\n";
      return 2;
    }
    std::cout << *text;
    return 0;
  }
  Json arr = Json::array();
  for (const auto& b : workload::list_builtins()) {
    auto w = workload::load_builtin(b.name);
    Json j = Json::object();
    j.set("name", b.name);
    j.set("description", b.description);
    if (w) {
      j.set("layers", static_cast<uint64_t>(w->layers.size()));
      if (auto p = workload::lower(*w)) {
        j.set("commands", static_cast<uint64_t>(p->commands.size()));
        j.set("gemm_iterations", p->gemm_iterations);
      }
    }
    arr.push(j);
    if (!options.json) {
      std::printf("%-14s %s\n", b.name.c_str(), b.description.c_str());
    }
  }
  if (options.json) std::cout << arr.dump() << "\n";
  return 0;
}

}  // namespace bud::cli
