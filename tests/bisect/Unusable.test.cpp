// A packet this bud cannot prepare (its embedded workload refused) is unusable: bisect says
// error (exit 125 on the command line), never "fail at ingress" about the design.
#include "BisectTestSupport.h"

using namespace bud;

TEST_CASE("bisect of a packet whose embedded run cannot be prepared is an error, not a failure",
          "[bisect][badinput]") {
  const auto dir = test::temp_dir("unusable");
  const std::string path = (dir / "p.bpk").string();
  REQUIRE(test::record(path, test::options_with("gemm_small")).report.passed);
  auto packet = test::read(path);
  // What an ONNX packet of format 2.2 met when its model file was gone, or any packet whose
  // workload this bud no longer accepts.
  packet.header.mutable_workload()->set_text("layer { name: \"fc\" kind: NO_SUCH_KIND }\n");
  const auto r = debugger::bisect_packet(packet, {});
  INFO(r.text());
  CHECK(r.verdict == debugger::BisectVerdict::Error);
  CHECK_FALSE(r.first_failing_stage);
  CHECK(test::contains(r.message, "unusable packet"));
}
