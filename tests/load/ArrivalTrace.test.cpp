#include <catch2/catch.hpp>

#include "load/ArrivalTrace.h"
#include "load/Arrivals.h"

using namespace bud::load;

TEST_CASE("arrival traces parse one timestamp per line or a JSON array", "[load][trace]") {
  auto t = parse_arrival_trace("t.txt", "# recorded\n0\n\n1.5  # after\n1.5\n10\n");
  CHECK(t.error.empty());
  CHECK(t.times_us == std::vector<double>{0, 1.5, 1.5, 10});
  auto j = parse_arrival_trace("t.json", " [0, 2, 2.5]");
  CHECK(j.error.empty());
  CHECK(j.times_us == std::vector<double>{0, 2, 2.5});
}

TEST_CASE("bad arrival traces name the file, line or index and the reason", "[load][trace]") {
  CHECK(parse_arrival_trace("t.txt", "1\nabc\n").error == "t.txt:2: not a number: 'abc'");
  CHECK(parse_arrival_trace("t.txt", "# c\n-1\n").error == "t.txt:2: negative timestamp");
  CHECK(parse_arrival_trace("t.txt", "5\n4\n").error == "t.txt:2: decreasing timestamp");
  CHECK(parse_arrival_trace("t.txt", "# only\n\n").error == "t.txt: empty trace (no timestamps)");
  CHECK(parse_arrival_trace("t.json", "[1, \"x\"]").error == "t.json: index 1: not a number");
  CHECK(parse_arrival_trace("t.json", "[3, 2]").error == "t.json: index 1: decreasing timestamp");
  CHECK(parse_arrival_trace("t.json", "[]").error == "t.json: empty trace (no timestamps)");
  CHECK(parse_arrival_trace("t.json", "[1,").error == "t.json: not a JSON array of numbers");
}

TEST_CASE("a trace's time axis is scaled to the offered rate", "[load][trace]") {
  ArrivalSpec s;
  s.kind = ArrivalSpec::Kind::Trace;
  s.trace_us = {100, 101, 103, 110};  // 4 requests over 10 us: 400,000 requests/s
  s.frequency_mhz = 1000;
  s.rate_per_s = 200000;  // half the trace's rate: twice as slow
  REQUIRE(s.validate().empty());
  CHECK(arrivals(s) == std::vector<uint64_t>{0, 2000, 6000, 20000});
  s.trace_us = {5, 5};
  CHECK_FALSE(s.validate().empty());
}
