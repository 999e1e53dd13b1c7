// Issue 12, items 7-9 on the server: every file `bud serve` writes goes through
// OutputDir::create (symlinks planted under every name it writes, to a file outside, to a
// directory outside and dangling, redirect nothing), a hostile LoadTriggers is refused with the
// server alive, and every string the server puts into a reply is valid UTF-8.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "debugger/remote/OutputDir.h"
#include "debugger/remote/Utf8.h"
#include "debugger/trigger/TriggerFile.h"
#include "tests/remote/RemoteTestSupport.h"

using namespace bud;
using namespace bud::test;
namespace fs = std::filesystem;

namespace {

// What a symlink planted in the output directory points at.
enum class Plant { FileOutside, DirOutside, Dangling };
const Plant kPlants[] = {Plant::FileOutside, Plant::DirOutside, Plant::Dangling};

// A directory outside the output directory with one file in it, and the links planted into the
// output directory; check() says whether anything outside changed.
struct Outside {
  std::string dir, file, missing;
  explicit Outside(const TempDir& t) : dir(t / "outside"), file(dir + "/keep.txt") {
    fs::create_directories(dir);
    std::ofstream(file) << "precious\n";
    missing = dir + "/created-through-a-dangling-link";
  }
  /// Plants `name` (inside `out`) as a symlink of the given kind.
  void plant(const std::string& out, const std::string& name, Plant p) const {
    const std::string target = p == Plant::FileOutside  ? file
                               : p == Plant::DirOutside ? dir
                                                        : missing;
    fs::create_symlink(target, out + "/" + name);
  }
  /// Nothing outside was written: the file keeps its content, no other file appeared.
  bool untouched() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      (void)e;
      ++n;
    }
    return n == 1 && slurp(file) == "precious\n";
  }
};

// Whether every string field of `m` survives a serialize/parse round trip (proto3 parsers refuse
// invalid UTF-8 in string fields: the failure the Python client showed).
template <class Msg>
bool round_trips(const Msg& m) {
  std::string wire;
  if (!m.SerializeToString(&wire)) return false;
  Msg back;
  return back.ParseFromString(wire);
}

}  // namespace

TEST_CASE("OutputDir::create refuses planted symlinks, hard links and special files",
          "[remote][confinement]") {
  TempDir t;
  Outside outside(t);
  std::string e;
  auto out = remote::OutputDir::open(t / "out", e);
  REQUIRE(out);
  const std::string o = out->path();
  fs::create_directory(o + "/sub");

  // Plain names are created as regular files (and reused when they are ours).
  auto p = out->create("w.fst", e);
  REQUIRE(p);
  CHECK(*p == o + "/w.fst");
  CHECK(fs::is_regular_file(*p));
  std::ofstream(*p) << "old";
  REQUIRE(out->create("w.fst", e));
  CHECK(fs::file_size(o + "/w.fst") == 0);  // truncated for the new writer
  CHECK(*out->create("sub/./x.log", e) == o + "/sub/x.log");

  int i = 0;
  for (Plant k : kPlants) {
    const std::string name = "l" + std::to_string(i++);
    outside.plant(o, name, k);
    INFO(name);
    CHECK_FALSE(out->create(name, e));
    CHECK(e.find(name) != std::string::npos);
    CHECK_FALSE(out->create(name + "/x", e));  // through it as a directory
  }
  // A symlinked directory in the middle of the name.
  fs::create_directory_symlink(outside.dir, o + "/dirlink");
  CHECK_FALSE(out->create("dirlink/new.fst", e));
  CHECK_FALSE(out->create("sub/../dirlink/new.fst", e));
  // A hard link to a file outside (same file system) is not truncated.
  fs::create_hard_link(outside.file, o + "/hard");
  CHECK_FALSE(out->create("hard", e));
  // A FIFO does not block the server.
  REQUIRE(mkfifo((o + "/fifo").c_str(), 0600) == 0);
  CHECK_FALSE(out->create("fifo", e));
  for (const char* bad : {"", "/abs", "../x", "..", ".", "sub/", "a\nb", "missing/x"})
    CHECK_FALSE(out->create(bad, e));
  CHECK(outside.untouched());
  // Reads (trigger load) are refused through symlinks too.
  CHECK_FALSE(out->resolve("l0", e));
  CHECK_FALSE(out->resolve("dirlink/keep.txt", e));
}

TEST_CASE("bud serve writes nothing outside its output directory through planted symlinks",
          "[remote][confinement][security]") {
  TempDir t;
  Outside outside(t);
  fs::create_directories(t / "out");
  const std::string o = t / "out";
  // Every kind of file the server writes, under the name it would write, for every plant.
  std::map<std::string, Plant> planted;
  int i = 0;
  for (Plant k : kPlants) {
    const std::string s = std::to_string(i++);
    for (const std::string& name : {"dump" + s + ".fst", "on" + s + ".fst", "rec" + s + ".bpk",
                                   "bp" + s + ".bud", "trig" + s + ".bpk", "cap" + s + "-1.fst",
                                   "logonly" + s + "-1.log", "cap" + s + "-1.fst.hier"})
      outside.plant(o, name, k);
  }
  ServerProcess srv(t, {"gemm_small", "--listen", "unix:" + (t / "s.sock")});
  auto c = attach(srv.address());
  for (int k = 0; k < 3; ++k) {
    const std::string s = std::to_string(k);
    for (const std::string& line :
         {"wave dump 0 20 dump" + s + ".fst", "wave on on" + s + ".fst",
          "record start rec" + s + ".bpk", "save breakpoints bp" + s + ".bud"}) {
      remote::v1::CommandReply r;
      REQUIRE(c->execute(line, r).ok());
      INFO(line << ": " << r.error());
      CHECK_FALSE(r.ok());
      CHECK(r.error().find("output directory") != std::string::npos);
    }
    // Trigger captures (waveform + log) and the record action, named after the trigger.
    auto ctx = c->context();
    remote::v1::LoadTriggersRequest req;
    req.set_text("trigger cap" + s + " shots 1 when cycle == " + std::to_string(30 + k) +
                 " do capture pre 5 post 5, record trig" + s + ".bpk\n" + "trigger logonly" + s +
                 " shots 1 when cycle == " + std::to_string(40 + k) + " do capture pre 1 post 1\n");
    req.set_name("t.trig");
    remote::v1::CommandReply r;
    REQUIRE(c->stub().LoadTriggers(ctx.get(), req, &r).ok());
    INFO(r.error());
    REQUIRE(r.ok());
  }
  ok(*c, "step 200");
  CHECK(outside.untouched());
  // The server is fine and still writes where it may.
  ok(*c, "wave dump 0 20 fine.fst");
  CHECK(fs::file_size(o + "/fine.fst") > 0);
  CHECK(fs::is_symlink(o + "/cap0-1.fst"));  // left as it was
  CHECK(outside.untouched());
}

TEST_CASE("a hostile LoadTriggers is refused and the server stays up", "[remote][limits]") {
  TempDir t;
  ServerProcess srv(t, {"gemm_small", "--listen", "unix:" + (t / "s.sock")});
  auto c = attach(srv.address());
  // 4 KB asking for 60 * 128 MiB of history: aborted bud serve before issue 12.
  std::string text;
  for (int i = 0; text.size() < 4000; ++i)
    text += "trigger t" + std::to_string(i) + " when delta(cycles, 16777216) > 0 do halt\n";
  auto ctx = c->context();
  remote::v1::LoadTriggersRequest req;
  req.set_text(text);
  req.set_name("hostile.trig");
  remote::v1::CommandReply r;
  REQUIRE(c->stub().LoadTriggers(ctx.get(), req, &r).ok());
  CHECK_FALSE(r.ok());
  CHECK(r.error().find("hostile.trig:2:") != std::string::npos);
  CHECK(r.error().find("trigger 't1'") != std::string::npos);
  CHECK(status(*c).cycle() == 0);  // alive and answering
  // Resident memory stayed far below one window's 128 MiB times the triggers.
  CHECK(srv.proc_status("VmHWM") < 1'000'000);  // kB
}

TEST_CASE("strings in replies are valid UTF-8 whatever the client sent", "[remote][utf8]") {
  CHECK(remote::valid_utf8("plain ascii") == "plain ascii");
  CHECK(remote::valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  const std::string fffd = "\xef\xbf\xbd";
  CHECK(remote::valid_utf8("a\xff"
                           "b") == "a" + fffd + "b");
  CHECK(remote::valid_utf8("\xc0\xaf") == fffd + fffd);                        // overlong '/'
  CHECK(remote::valid_utf8("\xed\xa0\x80") == fffd + fffd + fffd);             // a surrogate
  CHECK(remote::valid_utf8("\xf4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // > U+10FFFF
  CHECK(remote::valid_utf8("\xe2\x82") == fffd + fffd);                        // truncated

  TempDir t;
  InProcessServer srv(t, "gemm_small");
  auto c = attach(srv.address);
  std::string e;
  // Clients cannot send invalid UTF-8 in a string field (the server's parser refuses the
  // request), but the server reads files: a trigger file in the output directory with invalid
  // bytes is echoed in the error.
  std::ofstream(*srv.out->create("bad.trig", e)) << "trigger t when cycle > 1 do h\xff\xfe\n";
  remote::v1::CommandReply r;
  REQUIRE(c->execute("trigger load bad.trig", r).ok());
  CHECK_FALSE(r.ok());
  CHECK(r.error().find("bad.trig:1:29") != std::string::npos);
  CHECK(r.error().find("\xef\xbf\xbd") != std::string::npos);
  CHECK(round_trips(r));
  // A token cut for the message is cut between characters.
  CHECK(debugger::shown_token("a" + std::string(30, 'x') +
                              "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9") ==
        "a" + std::string(30, 'x') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9... (41 bytes)");
}
