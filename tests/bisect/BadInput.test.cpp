// Bad input to bud bisect: no arguments or half of a good/bad pair is a usage error (2); a file
// that is not a packet, or is cut short, is unusable (125) with one line naming the byte offset.
#include "BisectTestSupport.h"

using namespace bud;

TEST_CASE("bud bisect usage errors exit 2", "[bisect][cli][badinput]") {
  const auto dir = test::temp_dir("usage");
  auto r = test::bud("bisect", dir);
  CHECK(r.status == 2);
  CHECK(test::contains(r.err, "which packet?"));
  CHECK(r.out.empty());
  r = test::bud("bisect --good a.bpk", dir);
  CHECK(r.status == 2);
  CHECK(test::contains(r.err, "both --good and --bad"));
  r = test::bud("bisect x.bpk --good a.bpk --bad b.bpk", dir);
  CHECK(r.status == 2);
  r = test::bud("bisect --no-such-flag x.bpk", dir);
  CHECK(r.status == 2);
}

TEST_CASE("bud bisect of a non-packet or a truncated header exits 125 naming the byte",
          "[bisect][cli][badinput]") {
  const auto dir = test::temp_dir("badfile");
  const std::string good = (dir / "good.bpk").string();
  test::record(good, test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"}));
  const auto bytes = test::slurp(good);

  const std::string text = (dir / "text.bpk").string();
  std::ofstream(text) << "hello, not a packet\n";
  auto r = test::bud("bisect " + test::q(text), dir);
  CHECK(r.status == 125);
  CHECK(test::contains(r.err, "text.bpk: byte 0: not a bud replay packet"));
  CHECK(r.err.find('\n') == r.err.size() - 1);

  const std::string head = (dir / "head.bpk").string();
  std::ofstream(head, std::ios::binary) << bytes.substr(0, 20);
  r = test::bud("bisect " + test::q(head), dir);
  CHECK(r.status == 125);
  CHECK(test::contains(r.err, "head.bpk: byte 16:"));

  r = test::bud("bisect " + test::q((dir / "missing.bpk").string()), dir);
  CHECK(r.status == 125);
  CHECK(test::contains(r.err, "cannot open"));

  // The --good/--bad form: the bad side unusable.
  r = test::bud("bisect --good " + test::q(good) + " --bad " + test::q(text), dir);
  CHECK(r.status == 125);
  CHECK(test::contains(r.err, "byte 0"));
}

// Bug (reported): a packet cut short after its header and stimulus (the recording was killed, no
// windows, no symptom, no footer) is bisected as if it were complete: bud bisect re-simulates the
// run, finds the divergence, sees no recorded symptom and says "transient", exit 0, "re-simulated
// 940 of 0 cycles". bud replay refuses the same file ("incomplete packet (byte 1910: record
// truncated ...)", exit 125). Expected: exit 125 naming the byte offset.
TEST_CASE("bud bisect of a packet cut short exits 125 naming the byte offset",
          "[bisect][cli][badinput]") {
  const auto dir = test::temp_dir("truncated");
  const std::string good = (dir / "good.bpk").string();
  test::record(good, test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"}));
  const auto bytes = test::slurp(good);
  const std::string cut_path = (dir / "cut.bpk").string();
  std::ofstream(cut_path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  // bud replay already refuses it, naming the byte.
  const auto replay = test::bud("replay " + test::q(cut_path), dir);
  CHECK(replay.status == 125);
  CHECK(test::contains(replay.err, "incomplete packet (byte "));
  const auto r = test::bud("bisect " + test::q(cut_path), dir);
  INFO(r.out << r.err);
  CHECK(r.status == 125);
  CHECK(test::contains(r.err, "byte "));
  CHECK_FALSE(test::contains(r.out, "transient"));
}
