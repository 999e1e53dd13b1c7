#include "tools/bud/MemoCommand.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "profile/Memo.h"
#include "tools/bud/Output.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

void setup_memo(CLI::App& app, MemoOptions& options) {
  auto* sub = app.add_subcommand(
      "memo", "Write the review memo of a performance change between two profiles of one workload");
  sub->footer(
      "Examples:\n"
      "  bud run mlp --record base.bpk; bud run mlp --mem-latency 160 --record new.bpk\n"
      "  bud memo base.bpk new.bpk -o memo.md        # Markdown\n"
      "  bud memo base.json new.json --html memo.html   # two `bud profile --json` outputs\n"
      "Symptom, first failing layer, tags, mechanism with competing hypotheses and evidence, the\n"
      "smallest reversible change and its expected movement, regression risk (docs/profiling.md).\n"
      "Exit status: 0 written, 2 bad input, 4 the memo could not be written.");
  sub->add_option("base", options.base, "Base profile: a packet or a `bud profile --json` output")
      ->required();
  sub->add_option("new", options.next, "New profile, of the same workload")->required();
  sub->add_option("--tolerance", options.tolerance_pct,
                  "Relative cycle change (percent) that counts as a divergence")
      ->capture_default_str();
  sub->add_option("-o,--output", options.output, "Write the Markdown memo to FILE");
  sub->add_option("--html", options.html, "Write the memo as a self-contained HTML page");
  sub->add_flag("--json", options.json, "Print the memo as one JSON object");
}

int run_memo(const MemoOptions& o) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("memo", o.json, code, e);
  };
  if (!std::isfinite(o.tolerance_pct) || o.tolerance_pct < 0)
    return fail(2, "--tolerance must be a percentage >= 0");
  auto base = profile::read_profile_input(o.base);
  if (!base) return fail(2, base.error());
  auto next = profile::read_profile_input(o.next);
  if (!next) return fail(2, next.error());
  if (auto e = profile::check_comparable(*base, *next); !e.empty()) return fail(2, e);
  const auto c = profile::compare(*base, *next, o.tolerance_pct / 100);
  const profile::Memo memo = profile::make_memo(c, *base, *next);
  const std::string text = profile::memo_markdown(memo);
  json::Json j = json::Json::object();
  j["memo"] = profile::memo_json(memo);
  j["markdown"] = text;
  j["compare"] = profile::comparison_json(c, *base, *next);
  if (!o.output.empty() && !write_file_atomically(o.output, text))
    return fail(4, o.output + ": cannot write");
  if (!o.html.empty())
    if (auto e = plots::render_html("memo_report", j, o.html); !e.empty())
      return fail(4, o.html + ": " + e);
  if (o.json)
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  else if (o.output.empty())
    std::cout << text;
  else
    std::cout << "memo written to " << o.output << "\n";
  return 0;
}

}  // namespace bud::cli
