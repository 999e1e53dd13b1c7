// Running another program (no shell) and collecting what it printed: the scheduler commands of
// `bud corpus submit` and the plotting scripts of the HTML reports.
#pragma once

#include <string>
#include <vector>

namespace bud::process {

struct Finished {
  int status = -1;  ///< exit status, or -1 if the program could not run or was killed
  std::string out;  ///< everything it wrote to stdout
  std::string err;  ///< everything it wrote to stderr (or why it could not run)
};

/// Runs `argv` (argv[0] looked up in PATH unless it holds a '/'), stdin from /dev/null, and
/// waits for it. Both output streams are drained together, so neither can fill its pipe.
Finished run(const std::vector<std::string>& argv);

}  // namespace bud::process
