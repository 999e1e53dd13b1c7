// The interactive prompt on a real terminal, driven through tmux: tab completion of commands
// and signal names, context-aware completion of arguments (subcommands, memories, files), history
// recall with the Up arrow, quit. Fails when tmux is not installed (tools/setup-deps.sh installs
// it): a skipped terminal test would hide a broken prompt.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/debugger/DebuggerTestSupport.h"

using bud::test::contains;

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class Tmux {
 public:
  Tmux() : socket_("bud_test_" + std::to_string(getpid())) {}
  ~Tmux() { run(tmux() + " kill-server 2>/dev/null"); }
  std::string tmux() const { return "tmux -L " + socket_ + " -f /dev/null"; }
  bool start(const std::string& command) {
    return std::system((tmux() + " new-session -d -s t -x 160 -y 50 '" + command + "'").c_str()) ==
           0;
  }
  void keys(const std::string& keys) { run(tmux() + " send-keys -t t " + keys); }
  std::string screen() const { return run(tmux() + " capture-pane -p -t t -S -200"); }
  /// Polls the pane until `pred(screen)` holds; bounded.
  template <typename Pred>
  bool wait(Pred pred, std::chrono::seconds limit = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred(screen())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  bool wait_for(const std::string& text) {
    return wait([&](const std::string& s) { return contains(s, text); });
  }

 private:
  std::string socket_;
};

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the prompt completes commands and signal names and recalls history",
          "[debugger][prompt]") {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0)
    FAIL("tmux is not installed; tools/setup-deps.sh installs it");
  const std::string home = std::string(BUD_BINARY_DIR) + "/debugger_prompt_home";
  std::system(("rm -rf '" + home + "' && mkdir -p '" + home + "'").c_str());
  const std::string exe = std::string(BUD_BINARY_DIR) + "/bud";
  Tmux t;
  // The pane stays after exit so that we can read the last screen and the status.
  REQUIRE(t.start("cd " + std::string(BUD_SOURCE_DIR) + " && HOME=" + home + " TERM=xterm " + exe +
                  " debug gemm_small; echo EXIT=$?; sleep 30"));
  // capture-pane drops trailing blanks: "(bud) " reads "(bud)".
  REQUIRE(t.wait_for("(bud)"));

  // A command name.
  t.keys("pri Tab");
  INFO(t.screen());
  CHECK(t.wait_for("(bud) print"));
  t.keys("cycle Enter");
  REQUIRE(t.wait_for("cycle = 0 (0x0)"));

  // A unique signal prefix completes; an ambiguous one lists the candidates.
  t.keys("'print load.stat' Tab");
  CHECK(t.wait_for("(bud) print load.state"));
  t.keys("Enter");
  REQUIRE(t.wait_for("load.state = 0"));
  // An ambiguous prefix completes to the common part ("load.sta"); a second Tab lists them.
  t.keys("'print load.st' Tab");
  CHECK(t.wait_for("(bud) print load.sta"));
  t.keys("Tab");
  CHECK(t.wait([](const std::string& s) {
    return contains(s, "load.state") && contains(s, "load.starve") && contains(s, "load.stall_mem");
  }));
  t.keys("C-u");
  t.keys("Enter");

  // History: Up recalls the previous command, Up again the one before (print cycle).
  t.keys("Up");
  CHECK(t.wait([](const std::string& s) {
    const auto last = s.rfind("(bud)");
    return last != std::string::npos && s.compare(last, 22, "(bud) print load.state") == 0;
  }));
  t.keys("Up");
  CHECK(t.wait([](const std::string& s) {
    const auto last = s.rfind("(bud)");
    return last != std::string::npos && s.compare(last, 17, "(bud) print cycle") == 0 &&
           s.compare(last, 18, "(bud) print cycle ") != 0;
  }));
  t.keys("Enter");
  CHECK(t.wait([](const std::string& s) { return count(s, "cycle = 0 (0x0)") == 2; }));

  // Arguments complete by what the command's spec says they are.
  t.keys("'info st' Tab");
  CHECK(t.wait_for("(bud) info stages"));
  t.keys("Enter");
  CHECK(t.wait_for("queue "));
  t.keys("'x dr' Tab");
  CHECK(t.wait_for("(bud) x dram"));
  t.keys("C-u");
  // A file argument: the pane runs in the source tree (docs/ holds debugger.md).
  t.keys("'source docs/debugg' Tab");
  CHECK(t.wait_for("(bud) source docs/debugger.md"));
  t.keys("C-u");

  t.keys("quit Enter");
  CHECK(t.wait_for("EXIT=0"));
  std::system(("rm -rf '" + home + "'").c_str());
}
