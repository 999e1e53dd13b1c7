// The pieces of the security model on their own: listen addresses and loopback, token files
// and constant-time comparison, output-directory confinement, read-only classification and the
// rewrite of file names in prompt lines.
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
