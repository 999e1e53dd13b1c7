// The recorder's contract: observing a run allocates nothing per cycle and nothing per digest
// point (the window's repeated fields keep their capacity); only closing a window and writing a
// checkpoint (serialisation, compression) allocate, a bounded number of times per window
// (tests/AllocCount.cpp counts every operator new in this executable).
#include <algorithm>

#include "ReplayTestSupport.h"
#include "emu/drive/Driver.h"
#include "emu/npu/NpuEmulator.h"
#include "tests/AllocCount.h"

using namespace bud;
using namespace bud::replay;

TEST_CASE("recording allocates nothing per cycle or per digest point", "[replay][alloc]") {
  const auto dir = test::temp_dir("noalloc");
  run::RunOptions o;
  o.workload = "compute_bound";
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  auto spec = make_spec(o, *prepared);
  REQUIRE(spec);
  emu::NpuEmulator emu(o.emulator);
  REQUIRE(run::start(*prepared, o, emu).empty());
  std::string error;
  auto writer = PacketWriter::create((dir / "a.bpk").string(), error);
  REQUIRE(writer);
  RecordConfig config;
  config.digest_interval = 64;
  config.checkpoint_interval = 16'384;
  Recorder rec(*writer, emu, config);
  REQUIRE(rec.begin(make_header(*spec, *prepared, 64, 16'384, 0), encode_job(prepared->job), {}));
  drive::Driver driver(emu);
  driver.add(rec);
  // Warm-up: two whole windows size the window's fields and the writer's buffers.
  REQUIRE_FALSE(driver.run_until(2 * 16'384 + 64).failed);

  const uint64_t probe = test::allocations();
  ::operator delete(::operator new(16));
  REQUIRE(test::allocations() == probe + 1);  // the counter counts
  // Inside one window: 250 digest points, 16,000 cycles, no window boundary.
  uint64_t before = test::allocations();
  REQUIRE_FALSE(driver.run_until(2 * 16'384 + 64 + 16'000).failed);
  const uint64_t inside = test::allocations() - before;
  CHECK(inside == 0);
  // Across ten window boundaries (each: a window record and a checkpoint): bounded per window,
  // and the same for each (nothing grows with the run).
  std::vector<uint64_t> per_window;
  for (int w = 3; w < 13; ++w) {
    before = test::allocations();
    REQUIRE_FALSE(driver.run_until(uint64_t(w) * 16'384 + 64).failed);
    per_window.push_back(test::allocations() - before);
  }
  INFO("allocations per window: " << per_window.front() << " .. " << per_window.back());
  // 54-67 on Debian 12 (protobuf serialisation, the chunker, zstd): a bound with room, and no
  // growth from one window to the next.
  for (uint64_t n : per_window) CHECK(n <= 128);
  const auto [lo, hi] = std::minmax_element(per_window.begin(), per_window.end());
  CHECK(*hi - *lo <= 32);
  CHECK(rec.end(nullptr, true));
}
