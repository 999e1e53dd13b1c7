// Helpers shared by the replay tests: recording a built-in workload into a temporary packet,
// rewriting a packet with edits (to make divergent, foreign-revision or "fixed" packets), and
// running the bud binary.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"

namespace bud::test {

/// A fresh directory under the build tree for one test's files.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::path(BUD_BINARY_DIR) / "tests" / "replay" / "tmp" / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// Digest points every 256 cycles and a checkpoint window every 1024: many windows on a short
/// run.
inline replay::RecordConfig small_intervals() {
  replay::RecordConfig c;
  c.digest_interval = 256;
  c.checkpoint_interval = 1024;
  return c;
}

/// gemm_small with the L->C tokens stuck at 0 from cycle 100: the compute queue starves and the
/// watchdog reports a hang after 3000 cycles without progress.
inline run::RunOptions starved_queue_run() {
  run::RunOptions o;
  o.workload = "gemm_small";
  o.emulator.hang_cycles = 3000;
  std::string e;
  o.faults.push_back(*emu::parse_fault("stuck:tokens[0][0]=0@100", e));
  return o;
}

/// gemm_small with bit 3 of an input byte flipped in DRAM at cycle 10: a result mismatch.
inline run::RunOptions memflip_run() {
  run::RunOptions o;
  o.workload = "gemm_small";
  std::string e;
  o.faults.push_back(*emu::parse_fault("memflip:dram:0x10000[3]@10", e));
  return o;
}

/// Records `workload` with the given options to `path`; returns the outcome.
inline replay::RecordOutcome record(const std::string& path, run::RunOptions options,
                                    replay::RecordConfig config = {}) {
  auto prepared = run::prepare(options);
  REQUIRE(prepared);
  auto spec = replay::make_spec(options, *prepared);
  REQUIRE(spec);
  auto out = replay::record_run(path, *spec, *prepared, config);
  REQUIRE(out.error.empty());
  return out;
}

/// `n` deterministic pseudo-random bytes (an LCG seeded with `seed`).
inline std::vector<uint8_t> pseudo_random(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<uint8_t>(seed >> 56);
  }
  return v;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
inline void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// Edits applied while rewriting a packet.
struct PacketEdits {
  std::function<void(replay::pb::Header&)> header;
  std::function<void(replay::pb::Window&)> window;
  std::function<void(std::optional<replay::pb::Symptom>&)> symptom;
};

/// Reads `in`, applies `edits`, writes `out` (a complete packet of the same content otherwise).
inline void rewrite_packet(const std::string& in, const std::string& out,
                           const PacketEdits& edits) {
  std::string error;
  auto p = replay::read_packet(in, error);
  REQUIRE(p);
  auto w = replay::PacketWriter::create(out, error);
  REQUIRE(w);
  auto h = p->header;
  if (edits.header) edits.header(h);
  REQUIRE(w->write(replay::pb::RECORD_HEADER, h));
  auto stim = p->stimulus_bytes(error);
  REQUIRE(stim);
  REQUIRE(w->write_stimulus(*stim, 1));
  size_t next_cp = 0;
  for (auto win : p->windows) {
    while (next_cp < p->checkpoints.size() &&
           p->checkpoints[next_cp].cycle() <= win.start_cycle()) {
      auto s = p->checkpoint_state(next_cp, error);
      REQUIRE(s);
      REQUIRE(w->write_checkpoint(p->checkpoints[next_cp].cycle(), *s, 1));
      ++next_cp;
    }
    if (edits.window) edits.window(win);
    REQUIRE(w->write(replay::pb::RECORD_WINDOW, win, win.start_cycle()));
  }
  auto symptom = p->symptom;
  if (edits.symptom) edits.symptom(symptom);
  if (symptom) REQUIRE(w->write(replay::pb::RECORD_SYMPTOM, *symptom, symptom->cycle()));
  if (p->result) REQUIRE(w->write(replay::pb::RECORD_RESULT, *p->result, p->result->cycles()));
  REQUIRE(w->finish());
}

/// Runs a shell command; returns its exit status (128 + signal if killed).
inline int shell(const std::string& cmd) {
  const int s = std::system(cmd.c_str());
  if (WIFEXITED(s)) return WEXITSTATUS(s);
  if (WIFSIGNALED(s)) return 128 + WTERMSIG(s);
  return -1;
}

/// The bud binary, quoted for a shell.
inline std::string bud_exe() { return std::string("'") + BUD_BINARY_DIR + "/bud'"; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace bud::test
