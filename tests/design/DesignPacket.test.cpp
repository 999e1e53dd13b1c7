// Design packets (design/DesignPacket.h, DesignReplay.h): a recorded run of the fir_stream example
// reads back as written, records to the same bytes twice, replays bit-exactly from its embedded
// files after the design's directory is gone, and a packet whose files no longer build the
// recorded revision, or whose stimulus was changed, is refused or reported as diverged.
#include "design/DesignPacket.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "design/DesignReplay.h"
#include "design/DesignTarget.h"
#include "design/ModelBuild.h"
#include "replay/PacketReader.h"
#include "replay/PacketWriter.h"

using namespace bud;
using namespace bud::design;
namespace fs = std::filesystem;

namespace {

const std::string kExample = std::string(BUD_SOURCE_DIR) + "/examples/designs/fir_stream";
const std::string kWork = std::string(BUD_BINARY_DIR) + "/tests/design/packet_test";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh copy of the example (without its generated sums.bin) at `dir`.
std::string copy_example(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* sub : {"rtl", "data", "ref"})
    fs::copy(fs::path(kExample) / sub, dir / sub, fs::copy_options::recursive);
  fs::copy_file(fs::path(kExample) / "fir_stream.toml", dir / "fir_stream.toml");
  return (dir / "fir_stream.toml").string();
}

RunOptions run_options() {
  RunOptions o;
  o.seed = 3;
  o.cache_dir = kWork + "/cache";
  return o;
}

// Writes `records` as a packet (the way write_design_packet does), for tampered copies.
void write_records(const std::string& path, const DesignPacketRecords& p) {
  std::string error;
  auto w = replay::PacketWriter::create(path, error);
  REQUIRE(w);
  REQUIRE(w->write(replay::pb::RECORD_HEADER, p.header));
  REQUIRE(w->write(replay::pb::RECORD_DESIGN_FILES, p.files));
  if (p.symptom) REQUIRE(w->write(replay::pb::RECORD_SYMPTOM, *p.symptom));
  REQUIRE(w->write(replay::pb::RECORD_RESULT, p.result));
  REQUIRE(w->finish());
}

}  // namespace

TEST_CASE("a design's revision does not depend on where its directory is", "[design][packet]") {
  const auto a = parse_design_file(copy_example(kWork + "/where_a"));
  const auto b = parse_design_file(copy_example(kWork + "/deeper/where_b"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  DesignError e;
  const std::string ra = model_revision(*a.spec, e);
  CHECK(ra.size() == 16);
  CHECK(ra == model_revision(*b.spec, e));
  // Its sources' text still counts.
  std::ofstream(kWork + "/deeper/where_b/rtl/fir_stream.sv", std::ios::app) << "// edited\n";
  CHECK(ra != model_revision(*b.spec, e));
}

TEST_CASE("a design packet holds its run and replays bit-exactly from its own files",
          "[design][packet]") {
  const fs::path dir = kWork + "/example";
  const std::string file = copy_example(dir);
  auto parsed = parse_design_file(file);
  REQUIRE(parsed.ok());
  TargetOptions overrides;
  overrides.params = {"C3=2"};  // the file's own value: the run passes
  REQUIRE_FALSE(apply_overrides(*parsed.spec, overrides));
  const RunOptions ro = run_options();
  DesignError e;
  const auto outcome = run_design(*parsed.spec, ro, e);
  INFO(e.to_string());
  REQUIRE(outcome);
  REQUIRE(outcome->passed);
  const RecordedRun rec{{}, overrides.params, ro.seed, ro.max_cycles, ro.quiet_cycles};
  const std::string p1 = kWork + "/one.bpk", p2 = kWork + "/two.bpk";
  std::string error;
  const auto written = write_design_packet(p1, *parsed.spec, rec, *outcome, error);
  INFO(error);
  REQUIRE(written);
  REQUIRE(write_design_packet(p2, *parsed.spec, rec, *outcome, error));
  // Deterministic: the same run records to the same bytes.
  CHECK(read(p1) == read(p2));
  CHECK(written->bytes == fs::file_size(p1));
  // fir_stream.toml, rtl/fir_stream.sv, data/samples.bin and the reference's script ref/fir.py
  // (its interpreter, python3, is on PATH: not embedded).
  CHECK(written->files == 4);

  auto packet = replay::read_packet(p1, error);
  REQUIRE(packet);
  CHECK(packet->complete);
  CHECK(packet->minor == 4);
  const auto& run = packet->header.design_run();
  CHECK(packet->header.design() == "design:fir_stream");
  CHECK(packet->header.model_revision() == outcome->revision);
  CHECK(run.design_file() == "fir_stream.toml");
  CHECK(run.seed() == 3);
  REQUIRE(run.params_size() == 1);
  CHECK(run.params(0) == "C3=2");
  REQUIRE(packet->design_files);
  const auto bundle = bundle_of(*packet->design_files, run, error);
  REQUIRE(bundle);
  REQUIRE(bundle->files.size() == 4);
  CHECK(bundle->files[0].path == "data/samples.bin");
  CHECK(bundle->files[0].bytes == read(dir / "data/samples.bin"));
  CHECK(bundle->files[2].path == "ref/fir.py");
  CHECK(bundle->files[2].bytes == read(dir / "ref/fir.py"));
  CHECK(bundle->files[3].path == "rtl/fir_stream.sv");
  CHECK(bundle->files[3].bytes == read(dir / "rtl/fir_stream.sv"));
  CHECK(expected_of(*packet->design_files, error) == outcome->expected);
  REQUIRE(packet->result);
  CHECK(packet->result->cycles() == outcome->cycles);
  CHECK(packet->result->design().verdict() == replay::pb::DesignOutcome::PASS);
  REQUIRE(packet->result->stages_size() == static_cast<int>(outcome->stages.size()));
  for (size_t i = 0; i < outcome->stages.size(); ++i) {
    CHECK(packet->result->stages(int(i)).count() == outcome->stages[i].txns);
    CHECK(packet->result->stages(int(i)).sum() == outcome->stages[i].digest);
  }
  CHECK_FALSE(packet->symptom);

  // The design's directory is gone: the packet alone replays, bit for bit.
  fs::remove_all(dir);
  replay::ReplayOptions options;
  const auto again = replay_design_packet(*packet, options, ro.cache_dir);
  INFO(again.message);
  CHECK(again.verdict == replay::Verdict::Passed);
  CHECK(again.end_cycle == outcome->cycles);
  CHECK(again.digests_checked == 2 + outcome->stages.size() + 1);  // one sink

  const DesignPacketRecords records = design_packet_records(*bundle, rec, *outcome, *parsed.spec);
  // The records with embedded file `i` replaced by `bytes` at `path`.
  auto replaced = [&](int i, const std::string& path, const std::string& bytes) {
    DesignBundle one;
    one.files.push_back({path, bytes});
    DesignPacketRecords r = records;
    *r.files.mutable_files(i) =
        design_packet_records(one, rec, *outcome, *parsed.spec).files.files(0);
    return r;
  };
  // Writes `r` as a packet, reads it back and replays it.
  auto replay_records = [&](const std::string& file_name, const DesignPacketRecords& r) {
    const std::string path = kWork + "/" + file_name;
    write_records(path, r);
    auto q = replay::read_packet(path, error);
    REQUIRE(q);
    return replay_design_packet(*q, options, ro.cache_dir);
  };
  SECTION("an edited source no longer builds the recorded revision: refused") {
    REQUIRE(bundle->files[3].path == "rtl/fir_stream.sv");
    const auto o = replay_records(
        "edited.bpk", replaced(3, "rtl/fir_stream.sv", bundle->files[3].bytes + "// edited\n"));
    CHECK(o.verdict == replay::Verdict::Incompatible);
    CHECK(o.exit_code() == 125);
    CHECK_THAT(o.message, Catch::Contains("recorded with design revision " + outcome->revision));
  }
  SECTION("other stimulus builds the same model but not the recorded digests: diverged") {
    std::string samples = bundle->files[0].bytes;
    samples[100] = static_cast<char>(samples[100] ^ 0x40);
    const auto o = replay_records("stimulus.bpk", replaced(0, "data/samples.bin", samples));
    INFO(o.message);
    CHECK(o.verdict == replay::Verdict::Diverged);
    REQUIRE(o.divergence);
    REQUIRE_FALSE(o.divergence->stages.empty());
    CHECK(o.divergence->stages.front() == "ingress");
  }
  SECTION("a path that leaves the packet's tree is refused") {
    const auto o = replay_records("escape.bpk", replaced(0, "../outside.bin", "x"));
    CHECK(o.verdict == replay::Verdict::Incompatible);
    CHECK_THAT(o.message, Catch::Contains("'../outside.bin': not a relative path"));
  }
}
