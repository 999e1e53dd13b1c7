// `bud memo BASE NEW`: the review memo of a performance change (profile/Memo.h,
// docs/profiling.md "Review memo") from two profiles of one workload (packets or `bud profile
// --json` outputs), as Markdown, JSON or a self-contained HTML page.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct MemoOptions {
  std::string base, next;
  double tolerance_pct = 5;
  std::string output;  ///< -o FILE.md (default: stdout)
  std::string html;    ///< --html FILE
  bool json = false;
};

void setup_memo(CLI::App& app, MemoOptions& options);
/// Exit code: 0 written (whether or not the runs diverge), 2 bad input, 4 the memo or the HTML
/// page could not be written.
int run_memo(const MemoOptions& options);

}  // namespace bud::cli
