// Design files: what parses, and one FILE:LINE:COL error naming the key for what does not.
#include <catch2/catch.hpp>

#include "design/DesignFile.h"

using namespace bud::design;

namespace {

const std::string kDir = std::string(BUD_SOURCE_DIR) + "/examples/designs/fir_stream/";

// The error of a design text placed in the example's directory (so its paths resolve).
DesignError error_of(const std::string& text) {
  const auto r = parse_design_text(text, kDir + "t.toml");
  REQUIRE_FALSE(r.ok());
  return r.error;
}

const char* kMinimal = R"([design]
top = "fir_stream"
sources = ["rtl/fir_stream.sv"]
[clock]
name = "clk"
)";

}  // namespace

TEST_CASE("the example design file parses with every section", "[design][file]") {
  const auto r = parse_design_file(kDir + "fir_stream.toml");
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  const DesignSpec& d = *r.spec;
  CHECK(d.name == "fir_stream");
  CHECK(d.sources == std::vector<std::string>{kDir + "rtl/fir_stream.sv"});
  CHECK(d.parameters.at("C1") == "-5");
  CHECK(d.reset.active_low);
  CHECK(d.reset.cycles == 4);
  REQUIRE(d.streams.size() == 2);
  CHECK(d.streams[0].direction == StreamPort::Direction::Source);
  CHECK(d.streams[1].rate == 0.75);
  REQUIRE(d.stages.size() == 3);
  CHECK(d.stages[0].valid == "s_axis_tvalid");  // from `stream = "samples"`
  CHECK(d.stages[1].payload == std::vector<std::string>{"prod"});
  REQUIRE(d.counters.size() == 3);
  CHECK(d.counters[1].when == "s_axis_tready && !s_axis_tvalid");
  REQUIRE(d.check);
  CHECK(d.check->sink == "sums");
}

TEST_CASE("bad design files give one error naming file, line, column and key", "[design][file]") {
  const std::string f = kDir + "t.toml";
  CHECK(error_of("[design\ntop = 1\n").to_string().rfind(f + ":1:", 0) == 0);
  CHECK(error_of("[design]\ntop = \"x\"\n").to_string() ==
        f + ":1:1: [design] needs 'sources'");
  CHECK(error_of(std::string(kMinimal) + "[reset]\nname = \"rst\"\nactive = \"sideways\"\n")
            .to_string() ==
        f + ":8:10: [reset].active must be \"high\" or \"low\" (got \"sideways\")");
  CHECK(error_of(std::string(kMinimal) + "[[stream]]\nname = \"a\"\nprefx = \"s_\"\n").to_string() ==
        f + ":8:9: unknown key 'prefx' in [[stream]] (keys: name, prefix, direction, data_bits, "
            "file, rate)");
  CHECK(error_of("[design]\ntop = \"t\"\nsources = [\"nope.sv\"]\n[clock]\nname = \"c\"\n")
            .to_string() ==
        f + ":3:12: [design].sources[0]: cannot read '" + kDir + "nope.sv'");
  CHECK(error_of(std::string(kMinimal) + "[[axi4]]\nname = \"dma\"\nprefix = \"m_\"\ndata_bits = 48\n")
            .message == "[[axi4]] dma.data_bits must be a power of two (8..512)");
  CHECK(error_of(std::string(kMinimal) + "[[counter]]\nname = \"c\"\nsignal = \"a\"\nwhen = \"b\"\n")
            .message == "[[counter]] c needs exactly one of 'signal' (read it) and 'when' (count cycles)");
  CHECK(error_of(std::string(kMinimal) +
                 "[[stream]]\nname = \"o\"\nprefix = \"m_\"\ndirection = \"sink\"\n"
                 "[check]\nsink = \"o\"\nreference = [\"true\"]\n")
            .message ==
        "[check].reference must pass {expected}: the file the command writes the expected bytes to");
  CHECK(error_of("[design]\ntop = \"t\"\nsources = [\"rtl/fir_stream.sv\"]\n").message ==
        "the design file needs a [clock] table");
  const auto missing = parse_design_file(kDir + "missing.toml");
  CHECK(missing.error.to_string() == kDir + "missing.toml: cannot open the design file");
  for (const auto* e : {&missing}) CHECK(e->error.exit_code == kExitBadDesignFile);
}
