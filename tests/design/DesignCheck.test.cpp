// Checking a design file against the RTL Verilator elaborates: each mismatch is one error with
// the key's position, the signal and what differs (exit code 6); bad sources are exit code 7.
#include <catch2/catch.hpp>

#include "design/DesignCheck.h"

using namespace bud::design;

namespace {

const std::string kDir = std::string(BUD_SOURCE_DIR) + "/examples/designs/fir_stream/";

std::string base_text() {
  return R"([design]
top = "fir_stream"
sources = ["rtl/fir_stream.sv"]
[clock]
name = "clk"
[reset]
name = "rst_n"
active = "low"
)";
}

// The check's error for a design text in the example's directory ("" when it passes).
std::string check_error(const std::string& text, int* code = nullptr) {
  const auto p = parse_design_text(text, kDir + "t.toml");
  INFO(p.error.to_string());
  REQUIRE(p.ok());
  DesignError e;
  const auto rtl = read_rtl_signals(*p.spec, e);
  if (!rtl) {
    if (code) *code = e.exit_code;
    return e.to_string();
  }
  const auto r = check_design(*p.spec, *rtl);
  if (code) *code = r.ok() ? 0 : r.error->exit_code;
  return r.ok() ? "" : r.error->to_string();
}

}  // namespace

TEST_CASE("Verilator's elaboration names ports, widths and internal signals", "[design][rtl]") {
  const auto p = parse_design_file(kDir + "fir_stream.toml");
  REQUIRE(p.ok());
  DesignError e;
  const auto rtl = read_rtl_signals(*p.spec, e);
  INFO(e.to_string());
  REQUIRE(rtl);
  const RtlSignal* d = rtl->find("m_axis_tdata");
  REQUIRE(d);
  CHECK(d->dir == RtlSignal::Dir::Output);
  CHECK(d->width == 32);
  CHECK(rtl->find("s_axis_tdata")->width == 8);
  CHECK(rtl->find("mul_valid")->dir == RtlSignal::Dir::Internal);
  CHECK(rtl->find("prod")->elements == 4);
  CHECK(rtl->find("prod")->width == 32);
  CHECK(check_design(*p.spec, *rtl).ok());
}

TEST_CASE("a design file that does not match its RTL names the key and the signal",
          "[design][rtl]") {
  const std::string f = kDir + "t.toml";
  int code = 0;
  // A prefix that matches nothing.
  CHECK(check_error(base_text() + "[[stream]]\nname = \"o\"\nprefix = \"m_axi_\"\ndirection = "
                                  "\"sink\"\ndata_bits = 32\n",
                    &code) ==
        f + ":9:1: [[stream]] o: prefix 'm_axi_' matches no port of top 'fir_stream'");
  CHECK(code == kExitRtlMismatch);
  // A width mismatch.
  CHECK(check_error(base_text() + "[[stream]]\nname = \"o\"\nprefix = \"m_axis_\"\ndirection = "
                                  "\"sink\"\ndata_bits = 16\n") ==
        f + ":9:1: [[stream]] o: 'm_axis_tdata' is 32 bits wide but the design file says 16");
  // The wrong direction.
  CHECK(check_error(base_text() + "[[stream]]\nname = \"o\"\nprefix = \"m_axis_\"\ndirection = "
                                  "\"source\"\ndata_bits = 32\nfile = \"data/samples.bin\"\n") ==
        f + ":9:1: [[stream]] o: 'm_axis_tdata' is an output but must be an input");
  // A missing clock.
  std::string text = base_text();
  text.replace(text.find("\"clk\""), 5, "\"clock\"");
  CHECK(check_error(text, &code).rfind(f + ":5:8: [clock] name 'clock' is not an input of top "
                                           "'fir_stream' (inputs: clk, m_axis_tready, rst_n",
                                       0) == 0);
  CHECK(code == kExitRtlMismatch);
  // A counter expression naming a signal the design lacks: the column of the name.
  CHECK(check_error(base_text() + "[[counter]]\nname = \"c\"\nwhen = \"s_axis_tvalid && "
                                  "!s_axis_tredy\"\n") ==
        f + ":11:27: [[counter]] c.when: column 19: unknown name 's_axis_tredy' (did you mean "
            "s_axis_tready or m_axis_tready?)");
  // A stage whose valid is not one bit.
  CHECK(check_error(base_text() + "[[stage]]\nname = \"s\"\nvalid = \"m_axis_tdata\"\n") ==
        f + ":9:1: [[stage]] s.valid: 'm_axis_tdata' is 32 bits wide, not 1");
  // Sources Verilator cannot elaborate (a top the sources lack): exit 7.
  text = base_text();
  text.replace(text.find("top = \"fir_stream\""), 18, "top = \"fir\"");
  const std::string e = check_error(text, &code);
  CHECK(code == kExitElaboration);
  CHECK(e.rfind(f + ":2:7: Verilator cannot elaborate top 'fir'", 0) == 0);
}
