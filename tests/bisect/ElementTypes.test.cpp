// The values bisect reports follow the element type of the data that differs (field trial 3):
// bf16 POST outputs and activations as bf16, fp32 accumulators of a BF16 GEMM as fp32, int8 and
// int32 as integers, and tensor coordinates in elements, not bytes.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "debugger/bisect/DivergenceElement.h"
#include "emu/numeric/Float.h"
#include "tests/bisect/BisectTestSupport.h"

using namespace bud;

namespace {

/// The bits in "V (bf16 0xHHHH)" / "V (fp32 0xHHHHHHHH)", after checking that V is their value.
uint32_t bits_of(const std::string& shown, const char* type) {
  INFO(shown);
  const std::string tag = std::string("(") + type + " 0x";
  const auto at = shown.find(tag);
  REQUIRE(at != std::string::npos);
  const uint32_t bits = static_cast<uint32_t>(std::stoul(shown.substr(at + tag.size()), nullptr, 16));
  const uint32_t f = std::string(type) == "bf16" ? numeric::bf16_to_fp32(static_cast<uint16_t>(bits)) : bits;
  float v;
  std::memcpy(&v, &f, 4);
  CHECK(std::strtof(shown.c_str(), nullptr) == v);
  return bits;
}

}  // namespace

TEST_CASE("bisect prints values in the element type of the layer", "[bisect][types]") {
  const auto dir = test::temp_dir("element_types");
  SECTION("a flipped bit of a bf16 output in OUT: a bf16 value, its lane and tensor element") {
    auto o = test::options_with("gemm_small", {"memflip:out:0x2d1[6]@1280"});
    o.precision = "bf16";
    const std::string path = (dir / "out.bpk").string();
    test::record(path, o);
    const auto r = debugger::bisect_packet(test::read(path), {});
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    INFO(r.text());
    // Byte 0x2d1 of OUT is the high byte of a bf16 lane: bit 6 there is bit 14 of the value.
    const uint32_t e = bits_of(r.expected, "bf16"), a = bits_of(r.actual, "bf16");
    CHECK((e ^ a) == (1u << 14));
    // The tensor element's channel counts bf16 elements: within the layer's channels.
    const auto c0 = r.element.find("[");
    REQUIRE(c0 != std::string::npos);
    const auto last_comma = r.element.rfind(",");
    const int c = std::stoi(r.element.substr(last_comma + 1));
    const auto prepared = run::prepare(o);
    REQUIRE(prepared);
    const auto* t = prepared->program.find_tensor("fc");
    REQUIRE(t);
    CHECK(t->elem_bytes == 2);
    CHECK(c >= 0);
    CHECK(static_cast<uint32_t>(c) < t->c_padded);
  }
  SECTION("a flipped accumulator bit of a BF16 GEMM: fp32 values") {
    auto o = test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"});
    o.precision = "bf16";
    const auto r = test::bisect_live(o);
    INFO(r.text());
    REQUIRE(r.first_divergence_cycle);
    CHECK(test::contains(r.element, "acc["));
    CHECK(test::contains(r.element, "lane 3"));
    // Flipped mid-sum and accumulated on in fp32: a small difference in the low mantissa bits
    // (the int32 view of the same lane would be a meaningless 10^9-sized integer).
    const uint32_t e = bits_of(r.expected, "fp32"), a = bits_of(r.actual, "fp32");
    CHECK(e != a);
    CHECK((e ^ a) < (1u << 8));
    // The transient's detail and the ladder line say it in the same type.
    REQUIRE(!r.transients.empty());
    CHECK(test::contains(r.transients[0].detail, "(fp32 0x"));
  }
  SECTION("int8 and int32 stay integers") {
    const auto r =
        test::bisect_live(test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"}));
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    CHECK_FALSE(test::contains(r.expected, "0x"));
    const long e = std::stol(r.expected), a = std::stol(r.actual);
    CHECK((e - a == 32 || a - e == 32));
  }
}

TEST_CASE("element values are formatted by type", "[bisect][types]") {
  using debugger::ElementType;
  using debugger::format_element;
  const uint8_t bf[2] = {0x85, 0x42};  // 66.5
  CHECK(format_element(ElementType::Bf16, bf) == "66.5 (bf16 0x4285)");
  const uint8_t f[4] = {0x00, 0x00, 0xc9, 0x43};  // 402.0
  CHECK(format_element(ElementType::Fp32, f) == "402 (fp32 0x43c90000)");
  CHECK(format_element(ElementType::Int32, f) == "1137246208");
  const uint8_t i8[1] = {0x85};
  CHECK(format_element(ElementType::Int8, i8) == "-123");
}
