// Hostile input to the packet reader and the state restore (issue 12): a packet cut anywhere,
// the documented limits at and just past each bound, decompression bombs, reserved flags,
// crafted emulator states whose checksums are valid, and file arguments that are not packets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ReplayTestSupport.h"
#include "emu/npu/NpuEmulator.h"
#include "replay/Chunker.h"
#include "replay/Framing.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/PacketWriter.h"

using namespace bud;
using namespace bud::replay;

namespace {

pb::Header small_header() {
  pb::Header h;
  h.set_format_major(kFormatMajor);
  h.set_format_minor(kFormatMinor);
  h.set_model_revision("test");
  h.mutable_memory()->set_size_bytes(1 << 20);
  return h;
}

// Header, stimulus, three checkpoints with windows, an annotation, a result, the footer.
std::string write_packet(const std::string& path) {
  std::string error;
  auto w = PacketWriter::create(path, error);
  REQUIRE(w);
  REQUIRE(w->write(pb::RECORD_HEADER, small_header()));
  REQUIRE(w->write_stimulus(test::pseudo_random(3000, 9), 1));
  auto state = test::pseudo_random(40000, 1);
  for (uint32_t i = 0; i < 3; ++i) {
    state[1000 + 9000 * i] ^= 1;
    REQUIRE(w->write_checkpoint(100 * i, state, 1));
    pb::Window win;
    win.set_index(i);
    win.set_start_cycle(100 * i);
    win.set_end_cycle(100 * (i + 1));
    win.add_digests()->set_cycle(100 * (i + 1));
    REQUIRE(w->write(pb::RECORD_WINDOW, win));
  }
  pb::Annotation a;
  a.set_text(std::string(3000, 'n'));  // so that the last 4 KB hold several records
  REQUIRE(w->write(pb::RECORD_ANNOTATION, a));
  pb::Result r;
  r.set_cycles(300);
  REQUIRE(w->write(pb::RECORD_RESULT, r));
  REQUIRE(w->finish());
  return path;
}

// Re-frames record `index` of `bytes` (its payload replaced by `payload`, its flags set), fixing
// every later offset and the trailer.
std::vector<uint8_t> reframe(const std::vector<uint8_t>& bytes, size_t index,
                             const std::string& payload, uint16_t flags = 0) {
  std::string error;
  auto p = parse_packet(bytes, "in", error);
  REQUIRE(p);
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + kFileHeaderBytes);
  uint64_t index_at = 0;
  for (size_t i = 0; i < p->records.size(); ++i) {
    const auto& r = p->records[i];
    std::string pl(reinterpret_cast<const char*>(bytes.data() + r.offset + kFrameHeaderBytes),
                   r.payload_bytes);
    if (i == index) pl = payload;
    if (r.kind == pb::RECORD_INDEX) index_at = out.size();
    uint8_t h[kFrameHeaderBytes];
    put_u32(h, static_cast<uint32_t>(pl.size()));
    put_u16(h + 4, static_cast<uint16_t>(r.kind));
    put_u16(h + 6, i == index ? flags : 0);
    const std::span<const uint8_t> span(reinterpret_cast<const uint8_t*>(pl.data()), pl.size());
    put_u32(h + 8, crc32c(span, crc32c({h, 8})));
    out.insert(out.end(), h, h + kFrameHeaderBytes);
    out.insert(out.end(), span.begin(), span.end());
  }
  uint8_t t[kTrailerBytes];
  put_u64(t, index_at);
  std::memcpy(t + 8, kTrailerMagic, 8);
  out.insert(out.end(), t, t + kTrailerBytes);
  return out;
}

size_t first_of(const Packet& p, int kind) {
  for (size_t i = 0; i < p.records.size(); ++i)
    if (p.records[i].kind == kind) return i;
  FAIL("no record of kind " << kind);
  return 0;
}

}  // namespace

TEST_CASE(
    "a packet cut at any byte of its last 4 KB or at any record boundary keeps every "
    "complete record",
    "[replay][hardening][cut]") {
  const auto dir = test::temp_dir("hardening_cut");
  const auto bytes = test::read_bytes(write_packet((dir / "p.bpk").string()));
  std::string error;
  auto whole = parse_packet(bytes, "p", error);
  REQUIRE(whole);
  REQUIRE(whole->complete);
  const auto& records = whole->records;
  const uint64_t header_end = records[0].offset + kFrameHeaderBytes + records[0].payload_bytes;
  std::vector<size_t> cuts;
  for (size_t n = bytes.size() > 4096 ? bytes.size() - 4096 : 0; n <= bytes.size(); ++n)
    cuts.push_back(n);
  for (const auto& r : records) {
    cuts.push_back(r.offset);
    cuts.push_back(r.offset + kFrameHeaderBytes + r.payload_bytes);
  }
  size_t checked = 0;
  for (const size_t n : cuts) {
    INFO("cut at byte " << n << " of " << bytes.size());
    std::vector<uint8_t> b(bytes.begin(), bytes.begin() + static_cast<long>(n));
    error.clear();
    auto p = parse_packet(b, "cut", error);
    if (n < header_end) {
      CHECK_FALSE(p);
      CHECK(error.find("cut: byte ") == 0);
      continue;
    }
    REQUIRE(p);
    size_t complete = 0;
    for (const auto& r : records)
      if (r.offset + kFrameHeaderBytes + r.payload_bytes <= n) ++complete;
    CHECK(p->records.size() == complete);
    CHECK(p->complete == (n == bytes.size()));
    if (!p->complete) CHECK_FALSE(p->incomplete.empty());
    for (size_t c = 0; c < p->checkpoints.size(); ++c) CHECK(p->checkpoint_state(c, error));
    ++checked;
  }
  CHECK(checked >= 4096);
  // Killed between the index and the trailer (before they were one write): the index is there.
  const uint64_t index_end = bytes.size() - kTrailerBytes;
  std::vector<uint8_t> b(bytes.begin(), bytes.begin() + static_cast<long>(index_end));
  auto p = parse_packet(b, "cut", error);
  REQUIRE(p);
  CHECK_FALSE(p->complete);
  CHECK(p->incomplete.find("without the trailer") != std::string::npos);
  CHECK(p->result);
}

TEST_CASE("the reader's limits: at each limit reads, one past it is one clear error",
          "[replay][hardening][limits]") {
  // The documented defaults (docs/packets.md, "Limits").
  const ReadLimits defaults;
  CHECK(defaults.max_file_bytes == (1ull << 30));
  CHECK(defaults.max_record_bytes == (256u << 20));
  CHECK(defaults.max_state_bytes == (1ull << 30));
  CHECK(defaults.max_checkpoints == 65536u);
  CHECK(kStateOverheadBytes == (64ull << 20));

  const auto dir = test::temp_dir("hardening_limits");
  const auto path = write_packet((dir / "p.bpk").string());
  const auto bytes = test::read_bytes(path);
  std::string error;
  auto whole = parse_packet(bytes, "p", error);
  REQUIRE(whole);
  uint32_t largest_record = 0;
  for (const auto& r : whole->records) largest_record = std::max(largest_record, r.payload_bytes);

  SECTION("file size, through the file reader") {
    ReadLimits at;
    at.max_file_bytes = bytes.size();
    CHECK(read_packet(path, error, at));
    ReadLimits past = at;
    past.max_file_bytes = bytes.size() - 1;
    CHECK_FALSE(read_packet(path, error, past));
    CHECK(error == path + ": " + std::to_string(bytes.size()) + " bytes, more than the " +
                       std::to_string(bytes.size() - 1) + "-byte limit on packets");
  }
  SECTION("record size") {
    ReadLimits at;
    at.max_record_bytes = largest_record;
    CHECK(parse_packet(bytes, "p", error, at));
    ReadLimits past = at;
    past.max_record_bytes = largest_record - 1;
    CHECK_FALSE(parse_packet(bytes, "p", error, past));
    CHECK(error.find("-byte limit on records") != std::string::npos);
  }
  SECTION("state size: chunk batches and reassembled states") {
    ReadLimits at;
    at.max_state_bytes = 40000;  // the checkpoints' size, and the largest batch
    auto p = parse_packet(bytes, "p", error, at);
    REQUIRE(p);
    CHECK(p->checkpoint_state(2, error));
    ReadLimits past = at;
    past.max_state_bytes = 39999;
    CHECK_FALSE(parse_packet(bytes, "p", error, past));
    CHECK(error.find("claims 40000 bytes, more than the 39999-byte limit on states") !=
          std::string::npos);
  }
  SECTION("checkpoint count") {
    ReadLimits at;
    at.max_checkpoints = 3;
    CHECK(parse_packet(bytes, "p", error, at));
    ReadLimits past = at;
    past.max_checkpoints = 2;
    CHECK_FALSE(parse_packet(bytes, "p", error, past));
    CHECK(error.find("more than 2 checkpoints") != std::string::npos);
  }
  SECTION("state size bounded by the header's DRAM size") {
    CHECK(whole->max_state_bytes == (1u << 20) + kStateOverheadBytes);
  }
}

TEST_CASE("decompression bombs are refused before anything is inflated",
          "[replay][hardening][bomb]") {
  const auto dir = test::temp_dir("hardening_bomb");
  const auto bytes = test::read_bytes(write_packet((dir / "p.bpk").string()));
  std::string error;
  auto p = parse_packet(bytes, "p", error);
  REQUIRE(p);
  SECTION("a checkpoint claiming 1.5 GiB") {
    pb::Checkpoint cp = p->checkpoints[0];
    cp.set_raw_size(1536ull << 20);
    auto b = reframe(bytes, first_of(*p, pb::RECORD_CHECKPOINT), cp.SerializeAsString());
    auto q = parse_packet(b, "bomb", error);
    REQUIRE(q);
    CHECK_FALSE(q->checkpoint_state(0, error));
    CHECK(error.find("record claims 1610612736 bytes, more than the") != std::string::npos);
  }
  SECTION("a chunk list claiming 1.5 GiB") {
    pb::Chunks c;
    for (int i = 0; i < 49152; ++i) {
      c.add_ids(static_cast<uint64_t>(i));
      c.add_sizes(32768);
    }
    c.set_data("tiny");
    auto b = reframe(bytes, first_of(*p, pb::RECORD_CHUNKS), c.SerializeAsString());
    CHECK_FALSE(parse_packet(b, "bomb", error));
    CHECK(error.find("chunks record claims 1610612736 bytes") != std::string::npos);
  }
  SECTION("a chunk larger than the chunker makes") {
    pb::Chunks c;
    c.add_ids(1);
    c.add_sizes(kChunkMax + 1);
    auto b = reframe(bytes, first_of(*p, pb::RECORD_CHUNKS), c.SerializeAsString());
    CHECK_FALSE(parse_packet(b, "bomb", error));
    CHECK(error.find("chunks are 1..32768 bytes") != std::string::npos);
  }
  SECTION("a zstd frame that declares another size than its chunk list") {
    pb::Chunks c;
    pb::Chunks orig;
    const auto& r = p->records[first_of(*p, pb::RECORD_CHUNKS)];
    REQUIRE(orig.ParseFromArray(bytes.data() + r.offset + kFrameHeaderBytes,
                                static_cast<int>(r.payload_bytes)));
    orig.set_sizes(0, orig.sizes(0) - 1);
    auto b = reframe(bytes, first_of(*p, pb::RECORD_CHUNKS), orig.SerializeAsString());
    CHECK_FALSE(parse_packet(b, "bomb", error));
    CHECK(error.find("is not one zstd frame of the") != std::string::npos);
  }
}

TEST_CASE("record flags other than 0 are refused", "[replay][hardening][flags]") {
  const auto dir = test::temp_dir("hardening_flags");
  const auto bytes = test::read_bytes(write_packet((dir / "p.bpk").string()));
  std::string error;
  auto p = parse_packet(bytes, "p", error);
  REQUIRE(p);
  const auto& r = p->records[2];
  const std::string payload(
      reinterpret_cast<const char*>(bytes.data() + r.offset + kFrameHeaderBytes), r.payload_bytes);
  CHECK(parse_packet(reframe(bytes, 2, payload, 0), "f", error));
  CHECK_FALSE(parse_packet(reframe(bytes, 2, payload, 1), "f", error));
  CHECK(error == "f: byte " + std::to_string(r.offset + 6) +
                     ": record flags 1 are not defined in format " + std::to_string(kFormatMajor) + " (must be 0)");
}

TEST_CASE("printable() escapes what a terminal would act on", "[replay][hardening][text]") {
  CHECK(printable("plain ascii / ünïcödé") == "plain ascii / ünïcödé");
  CHECK(printable("\x1b]0;owned\x07") == "\\x1b]0;owned\\x07");
  CHECK(printable("a\nb\tc\r") == "a\\nb\\tc\\r");
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\xc2\\x9b31m");  // C1 CSI
  CHECK(printable("bad \xff\xfe utf8") == "bad \\xff\\xfe utf8");
  CHECK(printable("\x7f") == "\\x7f");
  CHECK(printable(printable("\x1b[2J")) == printable("\x1b[2J"));
}

TEST_CASE("file arguments that are not regular readable files get one clear error",
          "[replay][hardening][files]") {
  const auto dir = test::temp_dir("hardening_files");
  std::string error;
  CHECK_FALSE(read_packet(dir.string(), error));
  CHECK(error == dir.string() + ": is a directory, not a regular file");
  const auto fifo = dir / "fifo.bpk";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(read_packet(fifo.string(), error));  // returns at once: nobody writes it
  CHECK(error == fifo.string() + ": is a FIFO (named pipe), not a regular file");
  CHECK_FALSE(read_packet("/dev/zero", error));
  CHECK(error == "/dev/zero: is a character device, not a regular file");
  const std::string bad_name = (dir / "bad\xff\x1b.bpk").string();
  CHECK_FALSE(read_packet(bad_name, error));
  CHECK(error == printable(bad_name) + ": cannot open: No such file or directory");
  CHECK(error.find('\x1b') == std::string::npos);
  if (::geteuid() != 0) {  // root reads anything
    const auto locked = dir / "locked.bpk";
    test::write_bytes(locked.string(), {1, 2, 3});
    ::chmod(locked.c_str(), 0);
    CHECK_FALSE(read_packet(locked.string(), error));
    CHECK(error == locked.string() + ": cannot open: Permission denied");
  }
  // A big file that is not a packet: refused after its magic, whatever its size.
  const auto big = dir / "big.bin";
  {
    const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t{8} << 30) == 0);  // sparse: 8 GiB of zeros
    ::close(fd);
  }
  CHECK_FALSE(read_packet(big.string(), error));
  CHECK(error == big.string() + ": byte 0: not a bud replay packet (bad magic)");
  std::filesystem::remove(big);
}

// ---- Crafted emulator states: every checksum valid, one field hostile. ----

namespace {

struct Loaded {
  run::RunOptions options;
  run::PreparedRun prepared;
  std::unique_ptr<emu::NpuEmulator> emu;
};

std::unique_ptr<Loaded> loaded_emulator() {
  auto l = std::make_unique<Loaded>();
  l->options.workload = "gemm_small";
  auto p = run::prepare(l->options);
  REQUIRE(p);
  l->prepared = std::move(*p);
  l->emu = std::make_unique<emu::NpuEmulator>(l->options.emulator);
  REQUIRE(run::start(l->prepared, l->options, *l->emu).empty());
  l->emu->step(300);
  return l;
}

// Byte offset of the force list's count in a state (docs/architecture.md, "State save/restore").
size_t forces_at(const std::vector<uint8_t>& s) {
  uint32_t rev_len = 0;
  std::memcpy(&rev_len, s.data() + 8, 4);
  return 8 + 4 + rev_len + 8 + 8 + 4 + 8 + 1 + 8 + emu::kNumStages * (8 + 8 + 4 + 8 + 8);
}

}  // namespace

TEST_CASE("a saved force's element is checked before it is written",
          "[replay][hardening][restore]") {
  auto l = loaded_emulator();
  auto& e = *l->emu;
  std::optional<emu::SignalId> id;
  for (emu::SignalId i = 0; i < e.signals().size(); ++i)
    if (e.signals()[i].elements > 1 && e.signals()[i].writable) {
      id = i;
      break;
    }
  REQUIRE(id);
  const uint32_t elements = e.signals()[*id].elements;
  emu::SignalValue v;
  v.width = e.signals()[*id].width;
  REQUIRE(e.force_signal(*id, elements - 1, v));
  std::vector<uint8_t> state;
  e.save(state);
  const size_t nf_at = forces_at(state);
  uint32_t nf = 0, saved_id = 0;
  std::memcpy(&nf, state.data() + nf_at, 4);
  std::memcpy(&saved_id, state.data() + nf_at + 4, 4);
  REQUIRE(nf == 1);
  REQUIRE(saved_id == *id);
  const size_t element_at = nf_at + 8;
  std::string error;
  SECTION("the last element restores") {
    auto s = state;
    REQUIRE(emu::NpuEmulator::seal_state(s));
    CHECK(e.restore(s, error));
    e.step(10);
  }
  SECTION("one past the last element is refused") {
    auto s = state;
    std::memcpy(s.data() + element_at, &elements, 4);
    REQUIRE(emu::NpuEmulator::seal_state(s));
    CHECK_FALSE(e.restore(s, error));
    CHECK(error.find("force #0 names signal " + std::to_string(*id) + " element " +
                     std::to_string(elements) + ", which this model cannot force") !=
          std::string::npos);
  }
  SECTION("a huge element (the SIGSEGV of issue 12) is refused") {
    auto s = state;
    const uint32_t huge = 0x7FFFFFFF;
    std::memcpy(s.data() + element_at, &huge, 4);
    REQUIRE(emu::NpuEmulator::seal_state(s));
    CHECK_FALSE(e.restore(s, error));
    e.step(10);  // the emulator is unchanged and still runs
  }
}

TEST_CASE("crafted host driver and DRAM fields are refused", "[replay][hardening][restore]") {
  auto l = loaded_emulator();
  auto& e = *l->emu;
  std::vector<uint8_t> state;
  e.save(state);
  // The host driver's state ends the payload: magic u32, fingerprint u64, phase u8,
  // setup_pos u32, pushed u64, tail u32, dirty u8, countdown u32, last_read u8, status u32, u8.
  const size_t host_at = state.size() - 8 - 40;
  uint32_t magic = 0;
  std::memcpy(&magic, state.data() + host_at, 4);
  REQUIRE(magic == 0x48535431);  // "HST1"
  std::string error;
  auto patched = [&](size_t at, const void* v, size_t n) {
    auto s = state;
    std::memcpy(s.data() + at, v, n);
    REQUIRE(emu::NpuEmulator::seal_state(s));
    return s;
  };
  const uint32_t ring = l->prepared.job.ring_entries;
  CHECK_FALSE(e.restore(patched(host_at + 25, &ring, 4), error));
  CHECK(error.find("ring tail inconsistent") != std::string::npos);
  const uint64_t pushed = l->prepared.job.commands.size() + 1;
  CHECK_FALSE(e.restore(patched(host_at + 17, &pushed, 8), error));
  CHECK(error.find("more commands pushed than the job has") != std::string::npos);
  const uint32_t setup_past = 7;
  const uint8_t setup_phase = 1;
  auto s = patched(host_at + 13, &setup_past, 4);
  std::memcpy(s.data() + host_at + 12, &setup_phase, 1);
  REQUIRE(emu::NpuEmulator::seal_state(s));
  CHECK_FALSE(e.restore(s, error));
  CHECK(error.find("setup step past the end") != std::string::npos);
  CHECK(e.restore(patched(host_at, &magic, 4), error));  // unchanged: restores
}

TEST_CASE("randomly mutated states with valid checksums never crash restore or the next steps",
          "[replay][hardening][restore][fuzz]") {
  auto l = loaded_emulator();
  auto& e = *l->emu;
  std::vector<uint8_t> state;
  e.save(state);
  std::mt19937_64 rng(12);
  std::string error;
  int restored = 0, refused = 0;
  // Mutations aimed at the head (scalars, forces, model image, DRAM model bookkeeping) and the
  // host driver, where every field decides something; page contents are plain data.
  const size_t head = std::min<size_t>(state.size(), 4096);
  for (int i = 0; i < 400; ++i) {
    auto s = state;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % 2 ? rng() % head : state.size() - 8 - 1 - rng() % 48;
      s[at] = static_cast<uint8_t>(rng());
    }
    if (!emu::NpuEmulator::seal_state(s)) continue;
    if (e.restore(s, error)) {
      ++restored;
      e.step(20);
    } else {
      ++refused;
      CHECK_FALSE(error.empty());
    }
  }
  CHECK(refused > 0);
  CHECK(restored + refused > 300);
}

// ---- Through the bud binary. ----

namespace {

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace

TEST_CASE("every packet command: a directory, a FIFO, a device or a bad name is one clear error",
          "[replay][hardening][files][cli]") {
  const auto dir = test::temp_dir("hardening_cli_files");
  const auto fifo = dir / "fifo.bpk";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto sub = dir / "sub.bpk";
  std::filesystem::create_directories(sub);
  struct Command {
    std::string args;  // PACKET is replaced
    int code;          // the command's documented exit status for an unusable packet
  };
  const std::vector<Command> commands = {{"packet inspect PACKET", 2},
                                         {"replay PACKET", 125},
                                         {"bisect PACKET", 125},
                                         {"minimize PACKET -o " + q(dir / "min.bpk"), 125},
                                         {"debug --batch --packet PACKET", 2}};
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {q(sub), "is a directory, not a regular file"},
      {q(fifo), "is a FIFO (named pipe), not a regular file"},
      {"/dev/null", "is a character device, not a regular file"},
      {q(dir / "bad\xff.bpk"), "bad\\xff.bpk: cannot open: No such file or directory"}};
  for (const auto& c : commands) {
    for (const auto& [input, expect] : inputs) {
      // `bud replay DIR` is corpus mode (docs/packets.md): a directory is not an error there.
      if (c.args.rfind("replay", 0) == 0 && input == q(sub)) continue;
      std::string args = c.args;
      args.replace(args.find("PACKET"), 6, input);
      INFO("bud " << args);
      const auto err = dir / "err.txt";
      const auto out = dir / "out.json";
      CHECK(test::shell("timeout 60 " + test::bud_exe() + " " + args + " </dev/null >/dev/null 2>" +
                        q(err)) == c.code);
      const auto msg = test::slurp(err.string());
      CHECK(msg.find(expect) != std::string::npos);
      CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);
      CHECK(test::shell("timeout 60 " + test::bud_exe() + " " + args + " --json </dev/null >" +
                        q(out) + " 2>/dev/null") == c.code);
      const auto j = test::slurp(out.string());
      CHECK(j.rfind("{", 0) == 0);
      CHECK(std::count(j.begin(), j.end(), '\n') == 1);
      CHECK(j.find(expect.substr(expect.size() - 10)) != std::string::npos);
    }
  }
}

TEST_CASE("packet inspect escapes packet strings, bisect refuses what replay refuses",
          "[replay][hardening][cli]") {
  const auto dir = test::temp_dir("hardening_cli_packets");
  const auto good = dir / "good.bpk";
  REQUIRE(test::shell(test::bud_exe() +
                      " run gemm_small --fault 'memflip:dram:0x10000[3]@10' "
                      "--record " +
                      q(good) + " >/dev/null 2>&1") == 1);
  SECTION("terminal escape sequences in a symptom") {
    const auto evil = dir / "evil.bpk";
    test::PacketEdits edits;
    edits.symptom = [](std::optional<pb::Symptom>& s) {
      s->set_message("\x1b]0;owned\x07\x1b[2J gone");
    };
    test::rewrite_packet(good.string(), evil.string(), edits);
    CHECK(test::shell(test::bud_exe() + " packet inspect " + q(evil) + " >" + q(dir / "i.txt")) ==
          0);
    const auto text = test::slurp((dir / "i.txt").string());
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find("\\x1b]0;owned\\x07\\x1b[2J gone") != std::string::npos);
  }
  SECTION("a stimulus that does not match its fingerprint") {
    const auto bad = dir / "fingerprint.bpk";
    test::PacketEdits edits;
    edits.header = [](pb::Header& h) {
      h.mutable_stimulus()->set_job_fingerprint(h.stimulus().job_fingerprint() ^ 1);
    };
    test::rewrite_packet(good.string(), bad.string(), edits);
    CHECK(test::shell(test::bud_exe() + " replay " + q(bad) + " >/dev/null 2>&1") == 125);
    CHECK(test::shell(test::bud_exe() + " bisect " + q(bad) + " >/dev/null 2>" + q(dir / "e")) ==
          125);
    CHECK(test::slurp((dir / "e").string()).find("does not match its fingerprint") !=
          std::string::npos);
    CHECK(test::shell(test::bud_exe() + " bisect --json " + q(bad) + " >/dev/null 2>&1") == 125);
  }
  SECTION("a header-only packet") {
    std::string error;
    auto p = read_packet(good.string(), error);
    REQUIRE(p);
    const auto hollow = dir / "hollow.bpk";
    auto w = PacketWriter::create(hollow.string(), error);
    REQUIRE(w);
    REQUIRE(w->write(pb::RECORD_HEADER, p->header));
    REQUIRE(w->finish());
    CHECK(test::shell(test::bud_exe() + " replay " + q(hollow) + " >/dev/null 2>&1") == 125);
    CHECK(test::shell(test::bud_exe() + " bisect " + q(hollow) + " >/dev/null 2>&1") == 125);
    CHECK(test::shell(test::bud_exe() + " bisect --json " + q(hollow) + " >/dev/null 2>&1") == 125);
  }
  SECTION("killed between the index and the trailer") {
    auto bytes = test::read_bytes(good.string());
    bytes.resize(bytes.size() - kTrailerBytes);
    const auto cut = dir / "cut.bpk";
    test::write_bytes(cut.string(), bytes);
    CHECK(test::shell(test::bud_exe() + " replay " + q(cut) + " >/dev/null 2>" + q(dir / "e")) ==
          125);
    CHECK(test::slurp((dir / "e").string()).find("--allow-incomplete") != std::string::npos);
    CHECK(test::shell(test::bud_exe() + " replay --allow-incomplete " + q(cut) +
                      " >/dev/null 2>&1") == 1);
  }
}

TEST_CASE("corpus mode: a packet that exhausts its limits is that test case's error",
          "[replay][hardening][corpus][cli]") {
  const auto dir = test::temp_dir("hardening_corpus");
  const auto corpus = dir / "corpus";
  std::filesystem::create_directories(corpus);
  REQUIRE(test::shell(test::bud_exe() + " run mlp --record " + q(corpus / "b_clean.bpk") +
                      " >/dev/null 2>&1") == 0);
  // The same run claiming 3 GiB of DRAM: its replay cannot allocate it under a 1 GiB limit.
  test::PacketEdits edits;
  edits.header = [](pb::Header& h) { h.mutable_memory()->set_size_bytes(3ull << 30); };
  test::rewrite_packet((corpus / "b_clean.bpk").string(), (corpus / "a_huge.bpk").string(), edits);
  const auto xml = dir / "r.xml";
  CHECK(test::shell(test::bud_exe() + " replay " + q(corpus) + " --limit-memory-mb 1024 --junit " +
                    q(xml) + " --json >" + q(dir / "r.json") + " 2>/dev/null") == 125);
  const auto x = test::slurp(xml.string());
  CHECK(x.find("tests=\"2\" failures=\"0\" errors=\"1\"") != std::string::npos);
  CHECK(x.find("<error type=\"crashed\"") != std::string::npos);
  CHECK(x.find("1073741824 bytes") != std::string::npos);  // the limit is named
  CHECK(x.find("verdict: passed") != std::string::npos);   // the next packet still ran
  const auto j = test::slurp((dir / "r.json").string());
  CHECK(j.find("\"error\":\"crashed\"") != std::string::npos);
  CHECK(j.find("\"verdict\":\"passed\"") != std::string::npos);
}
