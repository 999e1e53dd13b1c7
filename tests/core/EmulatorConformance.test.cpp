// The Emulator interface contract, written once (check_conformance) and run against two very
// different designs: the MockEmulator (an LFSR machine) and the Verilated NPU running gemm_small.
// Anything above emu/ that relies only on what is checked here works with either.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "emu/npu/NpuEmulator.h"
#include "emu/run/RunJob.h"
#include "tests/core/MockEmulator.h"

namespace {

using bud::emu::CycleHook;
using bud::emu::Emulator;
using bud::emu::RunState;
using bud::emu::SignalValue;
using bud::emu::Stage;
using bud::emu::StageDigest;
using bud::emu::StageTxn;
using bud::emu::TxnObserver;

/// A design under test.
struct Subject {
  std::string name;
  /// A fresh instance, reset and loaded, at cycle 0 and Ready.
  std::function<std::unique_ptr<Emulator>()> create;
  /// A writable signal the design itself changes every cycle (a deposit must show and then
  /// evolve from the deposited value).
  std::string evolving_signal;
  /// Cycles the program runs before it finishes (the checks stay well inside).
  uint64_t run_cycles = 0;
};

/// Everything that must be equal for two emulators to be in the same state.
struct Observed {
  uint64_t cycle = 0;
  uint64_t digest = 0;
  RunState state = RunState::Ready;
  std::vector<uint64_t> counters;
  std::vector<StageDigest> stages;
  bool operator==(const Observed&) const = default;
};

Observed observe(Emulator& e) {
  Observed o;
  o.cycle = e.cycle();
  o.digest = e.digest();
  o.state = e.state();
  for (int i = 0; i < 64; ++i) o.counters.push_back(e.counter(i));
  for (int s = 0; s < bud::emu::kNumStages; ++s) o.stages.push_back(e.stage_digest(Stage(s)));
  return o;
}

SignalValue value_of(uint32_t width, uint64_t v) {
  SignalValue s;
  s.width = width;
  s.words[0] = v;
  return s;
}

class StopAt final : public CycleHook {
 public:
  explicit StopAt(uint64_t at) : at_(at) {}
  bool after_cycle(uint64_t cycle) override {
    ordered_ = ordered_ && (calls_ == 0 || cycle == last_ + 1);
    last_ = cycle;
    ++calls_;
    return cycle >= at_;
  }
  uint64_t at_, last_ = 0, calls_ = 0;
  bool ordered_ = true;
};

class Recorder final : public TxnObserver {
 public:
  void on_txn(const StageTxn& t) override {
    digests[static_cast<int>(t.stage)].add(t);
    min_cycle = std::min(min_cycle, t.cycle);
    max_cycle = std::max(max_cycle, t.cycle);
    ++total;
  }
  std::array<StageDigest, bud::emu::kNumStages> digests{};
  uint64_t min_cycle = UINT64_MAX, max_cycle = 0, total = 0;
};

/// Owns the instances of one check and destroys them oldest first. NpuEmulators alive side by
/// side must go in that order (tests/npu/EmulatorLifetime.test.cpp: destroying a newer one first
/// leaves Verilator's thread context dangling).
class Instances {
 public:
  explicit Instances(const Subject& s) : s_(s) {}
  Instances(const Instances&) = delete;
  Instances& operator=(const Instances&) = delete;
  ~Instances() {
    for (auto& e : v_) e.reset();
  }
  Emulator* make() {
    v_.push_back(s_.create());
    return v_.back().get();
  }

 private:
  const Subject& s_;
  std::vector<std::unique_ptr<Emulator>> v_;
};

void check_conformance(const Subject& subject) {
  Instances s(subject);
  const uint64_t run_cycles = subject.run_cycles;
  const std::string& evolving_signal = subject.evolving_signal;
  const uint64_t n = run_cycles / 4;  // a cycle well inside the run
  REQUIRE(n >= 20);

  SECTION("a fresh instance is at cycle 0, ready, and names its design") {
    auto e = s.make();
    CHECK(e->cycle() == 0);
    CHECK(e->state() == RunState::Ready);
    CHECK(!e->design().empty());
  }

  SECTION("describe() names each counter once, in counter() order, and every stage port") {
    auto e = s.make();
    const auto& d = e->describe();
    CHECK(d.name == e->design());
    CHECK(&d == &e->describe());  // one object for the emulator's lifetime
    REQUIRE(d.num_counters() > 0);
    std::set<std::string> names(d.counters.begin(), d.counters.end());
    CHECK(names.size() == d.counters.size());
    for (int i = 0; i < d.num_counters(); ++i) {
      CHECK(d.find_counter(d.counters[static_cast<size_t>(i)]) == i);
      CHECK_FALSE(d.counters[static_cast<size_t>(i)].empty());
    }
    CHECK(e->counter(d.num_counters()) == 0);  // past the list: no counter
    CHECK(d.stages.size() == static_cast<size_t>(bud::emu::kNumStages));
    e->step(n);
    bool driven = false;  // a named stage port carries this run's transactions
    for (int st = 0; st < bud::emu::kNumStages; ++st)
      if (!d.stage(Stage(st)).empty() && e->stage_digest(Stage(st)).count > 0) driven = true;
    CHECK(driven);
  }

  SECTION("step advances exactly the requested cycles and says why it stopped") {
    auto e = s.make();
    const auto r = e->step(n);
    CHECK(r.cycles == n);
    CHECK(e->cycle() == n);
    CHECK(r.state == RunState::Ready);
    CHECK(r.reached_limit);
    CHECK_FALSE(r.hook_stop);
    const auto z = e->step(0);
    CHECK(z.cycles == 0);
    CHECK(e->cycle() == n);
  }

  SECTION("the run finishes, and a finished design does not advance") {
    auto e = s.make();
    uint64_t guard = 0;
    while (e->state() == RunState::Ready && guard++ < 1000) e->step(run_cycles);
    REQUIRE(e->state() == RunState::Finished);
    const uint64_t end = e->cycle();
    const auto r = e->step(100);
    CHECK(r.cycles == 0);
    CHECK(r.state == RunState::Finished);
    CHECK_FALSE(r.reached_limit);
    CHECK(e->cycle() == end);
  }

  SECTION("digest is stable and tracks the state") {
    auto a = s.make();
    a->step(n);
    const uint64_t d = a->digest();
    CHECK(a->digest() == d);  // reading it changes nothing
    a->step(1);
    CHECK(a->digest() != d);
  }

  SECTION("save, continue, restore into a fresh instance, continue: identical") {
    auto a = s.make();
    a->step(n);
    const Observed at_n = observe(*a);
    std::vector<uint8_t> bytes;
    a->save(bytes);
    CHECK(observe(*a) == at_n);
    a->step(n);
    const Observed later = observe(*a);

    auto b = s.make();
    std::string err;
    REQUIRE(b->restore(bytes, err));
    CHECK(observe(*b) == at_n);
    b->step(n);
    CHECK(observe(*b) == later);

    // Back into the instance that ran on.
    REQUIRE(a->restore(bytes, err));
    CHECK(observe(*a) == at_n);
    a->step(n);
    CHECK(observe(*a) == later);
  }

  SECTION("save_segments concatenates to save(); an unchanged version means unchanged bytes") {
    auto a = s.make();
    a->step(n);
    auto concat = [](const bud::emu::StateSegments& seg) {
      std::vector<uint8_t> out;
      seg.append_to(out);
      return out;
    };
    bud::emu::StateSegments first;
    a->save_segments(first);
    std::vector<uint8_t> bytes;
    a->save(bytes);
    REQUIRE(first.count() >= 1);
    CHECK(first.size_bytes() == bytes.size());
    CHECK(concat(first) == bytes);
    // Copy the versioned segments' bytes, change the state (run on, write every memory), and
    // check that a segment keeping its key and version kept its bytes.
    std::map<uint64_t, std::pair<uint64_t, std::vector<uint8_t>>> before;
    for (size_t i = 0; i < first.count(); ++i) {
      const auto g = first.at(i);
      if (g.version != 0) before[g.key] = {g.version, {g.bytes.begin(), g.bytes.end()}};
    }
    a->step(n / 2);
    for (const auto& m : a->memories()) {
      const std::vector<uint8_t> word(m.word_bytes, 0x5A);
      REQUIRE(a->write_memory(m.name, 0, word));
    }
    bud::emu::StateSegments second;
    a->save_segments(second);
    std::vector<uint8_t> later;
    a->save(later);
    CHECK(concat(second) == later);
    for (size_t i = 0; i < second.count(); ++i) {
      const auto g = second.at(i);
      auto it = before.find(g.key);
      if (g.version == 0 || it == before.end() || it->second.first != g.version) continue;
      INFO("segment key " << g.key);
      CHECK(std::equal(g.bytes.begin(), g.bytes.end(), it->second.second.begin(),
                       it->second.second.end()));
    }
    // And the segments restore like save()'s bytes.
    auto b = s.make();
    std::string err;
    REQUIRE(b->restore(concat(second), err));
    CHECK(observe(*b) == observe(*a));
  }

  SECTION("bad state bytes are rejected naming a byte offset, state unchanged") {
    auto a = s.make();
    a->step(n);
    std::vector<uint8_t> good;
    a->save(good);
    auto b = s.make();
    b->step(7);
    const Observed before = observe(*b);
    std::vector<std::vector<uint8_t>> bad;
    bad.push_back({});
    bad.emplace_back(good.begin(), good.begin() + static_cast<ptrdiff_t>(good.size() / 2));
    bad.push_back(good);
    bad.back()[good.size() / 2] ^= 0x10;
    bad.push_back(std::vector<uint8_t>(good.size(), 0xA5));
    for (size_t i = 0; i < bad.size(); ++i) {
      INFO("bad state " << i);
      std::string err;
      CHECK_FALSE(b->restore(bad[i], err));
      INFO(err);
      CHECK(err.find("byte") != std::string::npos);
      CHECK(observe(*b) == before);
    }
  }

  SECTION("every listed signal is found by name and readable") {
    auto e = s.make();
    e->step(n);
    const auto& sigs = e->signals();
    REQUIRE(!sigs.empty());
    for (size_t i = 0; i < sigs.size(); ++i) {
      const auto& info = sigs[i];
      INFO("signal " << info.name);
      const auto id = e->find_signal(info.name);
      REQUIRE(id);
      CHECK(*id == i);
      CHECK(info.width > 0);
      CHECK(info.width <= 512);
      CHECK(info.elements >= 1);
      const SignalValue v = e->read_signal(*id, info.elements - 1);
      CHECK(v.width == info.width);
      // No bits above the width.
      for (uint32_t w = 0; w < 8; ++w) {
        const uint32_t lo = w * 64;
        if (lo >= info.width)
          CHECK(v.words[w] == 0);
        else if (info.width - lo < 64)
          CHECK((v.words[w] >> (info.width - lo)) == 0);
      }
    }
    CHECK_FALSE(e->find_signal("no.such.signal"));
    CHECK_FALSE(e->find_signal(""));
  }

  SECTION("read-only signals and out-of-range elements refuse deposits") {
    auto e = s.make();
    const auto& sigs = e->signals();
    int read_only = 0;
    for (size_t i = 0; i < sigs.size(); ++i) {
      const auto id = static_cast<bud::emu::SignalId>(i);
      CHECK_FALSE(e->deposit_signal(id, sigs[i].elements, value_of(sigs[i].width, 1)));
      if (sigs[i].writable) continue;
      ++read_only;
      const SignalValue before = e->read_signal(id);
      CHECK_FALSE(e->deposit_signal(id, 0, value_of(sigs[i].width, 1)));
      CHECK(e->read_signal(id) == before);
    }
    CHECK(read_only > 0);
  }

  SECTION("a deposit is visible at once and the design continues from it") {
    auto a = s.make();
    auto twin = s.make();
    a->step(n);
    twin->step(n);
    const auto id = a->find_signal(evolving_signal);
    REQUIRE(id);
    const auto& info = a->signals()[*id];
    REQUIRE(info.writable);
    const uint64_t mask = info.width >= 64 ? ~uint64_t{0} : (uint64_t{1} << info.width) - 1;
    const SignalValue v = value_of(info.width, 0x5A5A5A5A12345678ull & mask);
    REQUIRE(a->read_signal(*id) != v);
    REQUIRE(a->deposit_signal(*id, 0, v));
    CHECK(a->read_signal(*id) == v);
    // The design owns the signal again: one edge later it has moved on from the deposited
    // value, and differs from the twin that never saw the deposit.
    a->step(1);
    twin->step(1);
    CHECK(a->read_signal(*id) != v);
    CHECK(a->read_signal(*id) != twin->read_signal(*id));
    CHECK(a->digest() != twin->digest());
  }

  SECTION("a force holds until released") {
    auto e = s.make();
    e->step(n);
    const auto id = e->find_signal(evolving_signal);
    REQUIRE(id);
    const SignalValue v = value_of(e->signals()[*id].width, 77);
    REQUIRE(e->force_signal(*id, 0, v));
    for (int i = 0; i < 5; ++i) {
      e->step(1);
      CHECK(e->read_signal(*id) == v);
    }
    // A force is part of the saved state.
    std::vector<uint8_t> bytes;
    e->save(bytes);
    auto f = s.make();
    std::string err;
    REQUIRE(f->restore(bytes, err));
    f->step(3);
    CHECK(f->read_signal(*id) == v);

    e->release_signal(*id, 0);
    e->step(2);
    CHECK(e->read_signal(*id) != v);
  }

  SECTION("memories are readable and writable in range and refuse out of range") {
    auto e = s.make();
    const auto& mems = e->memories();
    REQUIRE(!mems.empty());
    for (const auto& m : mems) {
      INFO("memory " << m.name);
      REQUIRE(m.size_bytes >= m.word_bytes);
      REQUIRE(m.word_bytes >= 1);
      std::vector<uint8_t> word(m.word_bytes);
      CHECK(e->read_memory(m.name, 0, word));
      CHECK(e->read_memory(m.name, m.size_bytes - m.word_bytes, word));
      std::vector<uint8_t> pattern(m.word_bytes);
      for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(0xC3 ^ i);
      const uint64_t last = m.size_bytes - m.word_bytes;
      REQUIRE(e->write_memory(m.name, last, pattern));
      std::vector<uint8_t> back(m.word_bytes);
      REQUIRE(e->read_memory(m.name, last, back));
      CHECK(back == pattern);
      // Out of range: past the end, straddling the end, and a huge offset.
      std::vector<uint8_t> two(2);
      CHECK_FALSE(e->read_memory(m.name, m.size_bytes, word));
      CHECK_FALSE(e->read_memory(m.name, m.size_bytes - 1, two));
      CHECK_FALSE(e->read_memory(m.name, uint64_t{1} << 40, word));
      CHECK_FALSE(e->write_memory(m.name, m.size_bytes - 1, two));
      CHECK_FALSE(e->write_memory(m.name, uint64_t{1} << 40, two));
      REQUIRE(e->read_memory(m.name, last, back));
      CHECK(back == pattern);  // a refused write wrote nothing
    }
    std::vector<uint8_t> b(1);
    CHECK_FALSE(e->read_memory("no_such_memory", 0, b));
    CHECK_FALSE(e->write_memory("no_such_memory", 0, b));
  }

  SECTION("a cycle hook stops the step and is called once per cycle") {
    auto e = s.make();
    e->step(5);
    StopAt hook(15);
    e->set_cycle_hook(&hook);
    const auto r = e->step(1000);
    CHECK(r.hook_stop);
    CHECK_FALSE(r.reached_limit);
    CHECK(r.cycles == 10);
    CHECK(e->cycle() == 15);
    CHECK(hook.calls_ == 10);
    CHECK(hook.ordered_);
    CHECK(hook.last_ == 15);
    e->set_cycle_hook(nullptr);
    const auto r2 = e->step(10);
    CHECK_FALSE(r2.hook_stop);
    CHECK(r2.cycles == 10);
    CHECK(hook.calls_ == 10);
  }

  SECTION("the transaction observer sees exactly what the stage digests count") {
    auto e = s.make();
    e->step(3);
    std::array<StageDigest, bud::emu::kNumStages> before{};
    for (int i = 0; i < bud::emu::kNumStages; ++i) before[i] = e->stage_digest(Stage(i));
    Recorder rec;
    e->set_txn_observer(&rec);
    e->step(run_cycles / 2);
    e->set_txn_observer(nullptr);
    CHECK(rec.total > 0);
    CHECK(rec.min_cycle > 3);
    CHECK(rec.max_cycle <= e->cycle());
    for (int i = 0; i < bud::emu::kNumStages; ++i) {
      INFO("stage " << bud::emu::stage_name(Stage(i)));
      const StageDigest now = e->stage_digest(Stage(i));
      CHECK(now.count - before[i].count == rec.digests[i].count);
      CHECK(now.sum - before[i].sum == rec.digests[i].sum);
    }
    const uint64_t seen = rec.total;
    e->step(run_cycles / 4);
    CHECK(rec.total == seen);  // uninstalled
  }
}

/// Two instances driven identically digest identically (what lets replay and bisect compare
/// digests across emulators). Separate from check_conformance so a design failing only this is
/// still checked for everything else.
void check_digest_across_instances(const Subject& subject) {
  Instances s(subject);
  auto a = s.make();
  auto b = s.make();
  CHECK(a->digest() == b->digest());
  a->step(subject.run_cycles / 4);
  b->step(subject.run_cycles / 4);
  CHECK(a->digest() == b->digest());
}

Subject mock_subject() {
  Subject s;
  s.name = "mock";
  s.create = [] { return std::make_unique<bud::emu::MockEmulator>(bud::emu::MockConfig{7, 2000}); };
  s.evolving_signal = "acc";
  s.run_cycles = 2000;
  return s;
}

Subject npu_subject() {
  static const auto prepared = [] {
    bud::run::RunOptions o;
    o.workload = "gemm_small";
    auto p = bud::run::prepare(o);
    REQUIRE(p.ok());
    return std::move(p).value();
  }();
  Subject s;
  s.name = "npu";
  s.create = []() -> std::unique_ptr<Emulator> {
    auto e = std::make_unique<bud::emu::NpuEmulator>(bud::emu::NpuConfig{});
    const auto err = e->load(prepared.job);
    INFO(err);
    REQUIRE(err.empty());
    return e;
  };
  // The PMU cycle counter advances every cycle; a deposit lands in the counter register and the
  // next edge increments from it.
  s.evolving_signal = "pmu.cycles";
  s.run_cycles = 900;
  return s;
}

}  // namespace

TEST_CASE("MockEmulator conforms to the Emulator interface", "[core][conformance]") {
  check_conformance(mock_subject());
}

TEST_CASE("MockEmulator instances in the same state digest equally", "[core][conformance]") {
  check_digest_across_instances(mock_subject());
}

TEST_CASE("NpuEmulator running gemm_small conforms to the Emulator interface",
          "[core][conformance]") {
  check_conformance(npu_subject());
}

// Known bug, see tests/npu/Determinism.test.cpp: the NPU digest includes uninitialised padding.
TEST_CASE("NpuEmulator instances in the same state digest equally",
          "[core][conformance]") {
  check_digest_across_instances(npu_subject());
}

TEST_CASE("MockEmulator is a function of its seed", "[core][conformance]") {
  bud::emu::MockEmulator a({1, 500}), b({1, 500}), c({2, 500});
  a.step(300);
  b.step(300);
  c.step(300);
  CHECK(a.digest() == b.digest());
  CHECK(a.digest() != c.digest());
  // A state of another configuration is refused.
  std::vector<uint8_t> bytes;
  c.save(bytes);
  std::string err;
  CHECK_FALSE(a.restore(bytes, err));
  CHECK(err.find("byte") != std::string::npos);
}
