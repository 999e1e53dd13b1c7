// The pieces of the security model on their own: listen addresses and loopback, token files
// and constant-time comparison, output-directory confinement, read-only classification and the
// rewrite of file names in prompt lines.
#include <algorithm>
#include <catch2/catch.hpp>

#include "debugger/remote/CommandPolicy.h"
#include "debugger/remote/ListenAddress.h"
#include "debugger/remote/TokenAuth.h"
#include "tests/remote/RemoteTestSupport.h"

using namespace bud;
using namespace bud::remote;

TEST_CASE("listen addresses: unix paths, loopback TCP, refused forms", "[remote][policy]") {
  std::string e;
  auto u = parse_listen_address("unix:/tmp/x.sock", e);
  REQUIRE(u);
  CHECK(u->kind == ListenAddress::Kind::Unix);
  CHECK(u->loopback());
  CHECK(u->grpc_uri() == "unix:/tmp/x.sock");
  auto rel = parse_listen_address("unix:rel.sock", e);
  REQUIRE(rel);
  CHECK(rel->path[0] == '/');
  auto t = parse_listen_address("tcp:127.0.0.1:7000", e);
  REQUIRE(t);
  CHECK(t->loopback());
  CHECK(t->grpc_uri() == "127.0.0.1:7000");
  CHECK(parse_listen_address("tcp:127.9.9.9:0", e)->loopback());
  CHECK(parse_listen_address("tcp:[::1]:7000", e)->grpc_uri() == "[::1]:7000");
  CHECK(parse_listen_address("tcp:[::1]:7000", e)->loopback());
  CHECK(parse_listen_address("tcp:localhost:1", e)->loopback());
  CHECK_FALSE(parse_listen_address("tcp:0.0.0.0:7000", e)->loopback());
  CHECK_FALSE(parse_listen_address("tcp:10.1.2.3:7000", e)->loopback());
  CHECK_FALSE(parse_listen_address("tcp:[::]:7000", e)->loopback());
  for (const char* bad : {"", "unix:", "tcp:127.0.0.1", "tcp:127.0.0.1:70000", "tcp:example.com:80",
                          "tcp:127.0.0.1:x", "http://127.0.0.1:80", "tcp:[::1:80"}) {
    INFO(bad);
    CHECK_FALSE(parse_listen_address(bad, e));
    CHECK_FALSE(e.empty());
  }
  CHECK_FALSE(parse_listen_address("unix:/" + std::string(120, 'a'), e));
}

TEST_CASE("tokens: owner-only files, constant-time comparison", "[remote][policy]") {
  CHECK(constant_time_equal("abcdefghijklmnop", "abcdefghijklmnop"));
  CHECK_FALSE(constant_time_equal("abcdefghijklmnop", "abcdefghijklmnoq"));
  CHECK_FALSE(constant_time_equal("abcdefghijklmnop", "abcdefghijklmno"));
  CHECK_FALSE(constant_time_equal("abcdefghijklmnop", "abcdefghijklmnopq"));
  CHECK_FALSE(constant_time_equal("abcdefghijklmnop", ""));
  TokenAuth none;
  CHECK(none.accepts(""));
  TokenAuth auth("s3cret-token-0123456789");
  CHECK(auth.accepts("Bearer s3cret-token-0123456789"));
  CHECK_FALSE(auth.accepts("s3cret-token-0123456789"));
  CHECK_FALSE(auth.accepts("Bearer s3cret-token-012345678"));
  CHECK_FALSE(auth.accepts(""));

  test::TempDir dir;
  std::string e;
  const auto p = test::write_token(dir, "  s3cret-token-0123456789 \n");
  auto t = load_token_file(p, e);
  REQUIRE(t);
  CHECK(*t == "s3cret-token-0123456789");
  chmod(p.c_str(), 0644);
  CHECK_FALSE(load_token_file(p, e));
  CHECK(e.find("chmod 600") != std::string::npos);
  const auto s = test::write_token(dir, "short");
  CHECK_FALSE(load_token_file(s, e));
  CHECK_FALSE(load_token_file(dir / "missing", e));
}

TEST_CASE("the output directory confines every file name", "[remote][policy]") {
  test::TempDir dir;
  std::string e;
  auto out = OutputDir::open(dir / "out", e);
  REQUIRE(out);
  struct stat st {};
  REQUIRE(stat(out->path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(*out->resolve("w.fst", e) == out->path() + "/w.fst");
  std::filesystem::create_directory(dir / "out/sub");
  CHECK(*out->resolve("sub/w.fst", e) == out->path() + "/sub/w.fst");
  CHECK(*out->resolve("./w.fst", e) == out->path() + "/w.fst");
  std::filesystem::create_directory_symlink("/tmp", dir / "out/tmp");
  std::filesystem::create_symlink("/etc/passwd", dir / "out/pw");
  for (const char* bad : {"", "/etc/passwd", "../x", "sub/../../x", "..", "sub/..", "tmp/x", "pw",
                          "missing/x", "sub/", "a\"b", "a\nb", "."}) {
    INFO(bad);
    CHECK_FALSE(out->resolve(bad, e));
    CHECK_FALSE(e.empty());
  }
  CHECK_FALSE(OutputDir::open(dir / "out/pw", e));
}

TEST_CASE("read-only lines and file-name rewriting", "[remote][policy]") {
  test::Debugger d("gemm_small");
  const auto& in = *d.in;
  for (const char* ro : {"print load.state", "p/x cycle", "counters", "pmu gemm", "x dram 0 4",
                         "where", "bt", "info breakpoints", "help", "echo hi", "trigger list",
                         "trigger hits", "trigger", "# a comment", "nosuch"})
    CHECK(remote::is_read_only_line(in, ro));
  for (const char* rw : {"", "step", "continue", "c", "goto 5", "deposit load.state 1",
                         "break if cycle > 3", "trigger add x when cycle > 1 do halt",
                         "trigger delete 1", "wave dump 0 1 w.fst", "record start p.bpk", "quit",
                         "source f.bud", "checkpoint a", "restore a", "set checkpoint-interval 9"})
    CHECK_FALSE(remote::is_read_only_line(in, rw));

  test::TempDir dir;
  std::string e;
  auto out = OutputDir::open(dir / "out", e);
  REQUIRE(out);
  CHECK(*confine_paths(in, "wave dump 1 2 w.fst", *out, e) ==
        "wave dump 1 2 " + out->path() + "/w.fst");
  CHECK(*confine_paths(in, "wave on w.fst", *out, e) == "wave on " + out->path() + "/w.fst");
  CHECK(*confine_paths(in, "record start p.bpk", *out, e) ==
        "record start " + out->path() + "/p.bpk");
  CHECK(*confine_paths(in, "trig load t.trig", *out, e) == "trig load " + out->path() + "/t.trig");
  CHECK(*confine_paths(in, "print cycle", *out, e) == "print cycle");
  CHECK(*confine_paths(in, "wave off", *out, e) == "wave off");
  CHECK_FALSE(confine_paths(in, "wave dump 1 2 ../w.fst", *out, e));
  CHECK_FALSE(confine_paths(in, "wave dump 1 2 /tmp/w.fst", *out, e));
  CHECK_FALSE(confine_paths(in, "wave dump 1 2 w.fst extra", *out, e));
}

// Every file argument a command or subcommand declares (ArgKind::ReadFile, WriteFile, Script) is
// confined by confine_paths, whatever the command: a new file-taking command is covered by
// declaring its argument, and this test walks every one.
TEST_CASE("every declared file argument is confined", "[remote][policy]") {
  using debugger::ArgKind;
  test::Debugger d("gemm_small");
  const auto& in = *d.in;
  test::TempDir dir;
  std::string e;
  auto out = OutputDir::open(dir / "out", e);
  REQUIRE(out);
  size_t files = 0;
  // One line per form: the command (and subcommand) with the file at position `at` and a
  // number at the other positions up to the last file argument.
  auto check_form = [&](const std::string& head, const std::vector<ArgKind>& kinds) {
    size_t last = kinds.size();
    for (size_t i = 0; i < kinds.size(); ++i)
      if (debugger::is_file_arg(kinds[i])) last = i;
    if (last == kinds.size()) return;
    auto line = [&](const std::string& file) {
      std::string l = head;
      for (size_t i = 0; i <= last; ++i) l += " " + (debugger::is_file_arg(kinds[i]) ? file : "7");
      return l;
    };
    INFO(line("F"));
    ++files;
    const bool script = std::count(kinds.begin(), kinds.end(), ArgKind::Script) > 0;
    for (const char* bad : {"../escape.f", "/tmp/escape.f", "sub/../../escape.f"}) {
      e.clear();
      CHECK_FALSE(confine_paths(in, line(bad), *out, e));
      CHECK_FALSE(e.empty());
    }
    CHECK_FALSE(confine_paths(in, line("ok.f") + " extra", *out, e));
    auto inside = confine_paths(in, line("ok.f"), *out, e);
    if (script) {
      CHECK_FALSE(inside);
      CHECK(e.find("scripts run from the client") != std::string::npos);
      return;
    }
    REQUIRE(inside);
    CHECK(*inside == line(out->path() + "/ok.f"));
    // The observer rule: nothing that takes a file is read-only.
    CHECK_FALSE(is_read_only_line(in, line("ok.f")));
  };
  for (const auto& c : in.commands()) {
    if (c.subcommands.empty()) check_form(c.name, c.args);
    for (const auto& sc : c.subcommands) check_form(c.name + " " + sc.name, sc.args);
  }
  CHECK(files == 6);  // wave on, wave dump, record start, trigger load, save breakpoints, source
}

// The observer rule is the declared effect of the command or subcommand, nothing else.
TEST_CASE("read-only lines are the declared read-only commands", "[remote][policy]") {
  test::Debugger d("gemm_small");
  const auto& in = *d.in;
  for (const auto& c : in.commands()) {
    INFO(c.name);
    if (c.subcommands.empty())
      CHECK(is_read_only_line(in, c.name) == (c.effect == debugger::Effect::ReadOnly));
    for (const auto& sc : c.subcommands) {
      INFO(sc.name);
      CHECK(is_read_only_line(in, c.name + " " + sc.name) ==
            (sc.effect == debugger::Effect::ReadOnly));
    }
  }
  CHECK_FALSE(is_read_only_line(in, "info display"));
  CHECK_FALSE(is_read_only_line(in, "i disp"));
  CHECK(is_read_only_line(in, "i b"));
}
