// End-to-end tests of the `bud` command line: the binary is spawned as a user would run it, with
// stdout, stderr and the exit status captured.
#include <catch2/catch.hpp>
#include "tests/e2e/BudProcess.h"
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

namespace {


/// Number of top-level JSON values in `s` (objects/arrays), with a check that braces balance
/// and strings are closed. Enough to tell "exactly one object" from anything else.
int count_top_level_objects(const std::string& s, bool& well_formed) {
  int depth = 0, values = 0;
  bool in_str = false, esc = false;
  well_formed = true;
  for (char c : s) {
    if (in_str) {
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      if (depth++ == 0) ++values;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) well_formed = false;
    } else if (depth == 0 && !std::isspace(static_cast<unsigned char>(c))) {
      well_formed = false;  // text outside the object
    }
  }
  if (depth != 0 || in_str) well_formed = false;
  return values;
}

}  // namespace

TEST_CASE("bud run gemm_small passes", "[e2e][run]") {
  const auto r = bud({"run", "gemm_small"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "PASS"));
  CHECK_FALSE(contains(r.out, "FAIL"));
  CHECK(contains(r.out, "gemm_small"));
}

TEST_CASE("bud run --json prints exactly one JSON object", "[e2e][run][json]") {
  const auto r = bud({"run", "gemm_small", "--json"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  bool ok = false;
  CHECK(count_top_level_objects(r.out, ok) == 1);
  CHECK(ok);
  REQUIRE(!r.out.empty());
  CHECK(r.out.front() == '{');
  for (const char* key :
       {"\"workload\":", "\"seed\":", "\"cycles\":", "\"passed\":", "\"counters\":"})
    CHECK(contains(r.out, key));
  CHECK(contains(r.out, "\"workload\":\"gemm_small\""));
  CHECK(contains(r.out, "\"passed\":true"));
  CHECK(contains(r.out, "\"retired_end\":1"));
}

TEST_CASE("same seeds give byte-identical --json output", "[e2e][run][json]") {
  const std::vector<std::string> args = {"run", "mlp",         "--json", "--seed",
                                         "9",   "--mem-seed",  "4",      "--mem-jitter",
                                         "30",  "--mem-bursty"};
  const auto a = bud(args);
  const auto b = bud(args);
  INFO(a.err << b.err);
  CHECK(a.status == 0);
  CHECK(b.status == 0);
  CHECK(a.out == b.out);
  CHECK(contains(a.out, "\"seed\":9"));
  CHECK(contains(a.out, "\"mem_seed\":4"));
  // And the memory seed does reach the run: another one changes the timing.
  auto args2 = args;
  args2[6] = "5";
  const auto c = bud(args2);
  CHECK(c.status == 0);
  CHECK(c.out != a.out);
}

TEST_CASE("bud workloads lists the five built-ins", "[e2e][workloads]") {
  const auto r = bud({"workloads"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  for (const char* w : {"compute_bound", "conv", "gemm_small", "mem_bound", "mlp"})
    CHECK(contains(r.out, w));
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 5);
}

TEST_CASE("an unknown workload is a usage error", "[e2e][errors]") {
  const auto r = bud({"run", "no_such_thing"});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "no_such_thing"));
  CHECK(contains(r.err, "neither a built-in workload"));
  CHECK(r.out.empty());
}

TEST_CASE("a workload file with a syntax error names FILE:LINE:COL", "[e2e][errors]") {
  const auto r = bud({"run", "tests/e2e/data/syntax_error.textpb"});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  // The '=' on line 6, column 21.
  CHECK(contains(r.err, "tests/e2e/data/syntax_error.textpb:6:21:"));
  CHECK(r.out.empty());
}

TEST_CASE("an impossible shape names the file and line of the layer", "[e2e][errors]") {
  const auto r = bud({"run", "tests/e2e/data/impossible_shape.textpb"});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "tests/e2e/data/impossible_shape.textpb:10:"));
  CHECK(contains(r.err, "fc2"));
  CHECK(r.out.empty());
}

TEST_CASE("invalid option values and unknown flags are usage errors", "[e2e][errors]") {
  SECTION("--mem-bw 0") {
    const auto r = bud({"run", "gemm_small", "--mem-bw", "0"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "bytes_per_cycle"));
  }
  SECTION("--bogus-flag") {
    const auto r = bud({"run", "--bogus-flag"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--bogus-flag"));
  }
  SECTION("--throttle without a valid period") {
    const auto r = bud({"run", "gemm_small", "--throttle", "3", "--throttle-period", "3"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "throttle"));
  }
}

TEST_CASE("a run that does not finish within --max-cycles is a cycle limit, not a hang",
          "[e2e][run][cycle_limit]") {
  const auto r = bud({"run", "compute_bound", "--max-cycles", "1000"});
  INFO(r.out << r.err);
  CHECK(r.status == 3);
  CHECK(contains(r.out, "FAIL"));
  CHECK(contains(r.out, "cycle limit"));
  CHECK(contains(r.out, "--max-cycles 1000"));
  CHECK_FALSE(contains(r.out, "hang"));
  const auto j = bud({"run", "compute_bound", "--max-cycles", "1000", "--json"});
  CHECK(j.status == 3);
  const auto v = nlohmann::json::parse(j.out);
  CHECK(v.at("state") == "cycle_limit");
  CHECK(v.at("passed") == false);
  CHECK(v.at("cycles") == 1000);
}

TEST_CASE("help texts exit 0 and show an example", "[e2e][help]") {
  const auto top = bud({"--help"});
  CHECK(top.status == 0);
  CHECK(contains(top.out, "Examples:"));
  CHECK(contains(top.out, "bud run gemm_small"));
  const auto run = bud({"run", "--help"});
  CHECK(run.status == 0);
  CHECK(contains(run.out, "Examples:"));
  CHECK(contains(run.out, "bud run compute_bound --json"));
  CHECK(contains(run.out, "--mem-seed"));
}

namespace {


/// An error object: `error` and `message` strings, and the exit code it reports is the real one.
void check_error_object(const Result& r, int status) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.status == status);
  const auto v = one_object(r);
  REQUIRE(v.contains("error"));
  CHECK(v.at("error").is_string());
  REQUIRE(v.contains("message"));
  CHECK(v.at("message").is_string());
  CHECK_FALSE(v.at("message").get<std::string>().empty());
  if (v.contains("exit_code")) CHECK(v.at("exit_code") == status);
}



}  // namespace

TEST_CASE("every --json command prints exactly one JSON object on success and on every error", "[e2e][json]") {
  const std::string good = temp_path("good.bpk");
  const auto rec = bud({"run", "gemm_small", "--record", good});
  REQUIRE(rec.status == 0);
  const std::string corrupt = temp_path("corrupt.bpk");
  write_file(corrupt, std::string("not a packet\x01\x02", 14));
  const std::string missing = temp_path("missing.bpk");
  // A file name that is not UTF-8: output must stay valid JSON (bytes replaced).
  const std::string odd = temp_path("bytes\xff\xfe.bpk");
  write_file(odd, slurp(good));
  const std::string odd_missing = temp_path("gone\xff.bpk");

  SECTION("run") {
    CHECK(one_object(bud({"run", "gemm_small", "--json"})).at("passed") == true);
    check_error_object(bud({"run", "nosuch", "--json"}), 2);
    check_error_object(bud({"run", "gemm_small", "--json", "--bogus-flag"}), 2);
    check_error_object(bud({"run", "gemm_small", "--json", "--max-cycles", "x"}), 2);
    check_error_object(bud({"run", "gemm_small", "--json", "--mem-outstanding", "0"}), 2);
    check_error_object(bud({"run", odd_missing, "--json"}), 2);
  }
  SECTION("profile") {
    CHECK(one_object(bud({"profile", "gemm_small", "--json"})).at("run").at("passed") == true);
    check_error_object(bud({"profile", "nosuch", "--json"}), 2);
    check_error_object(bud({"profile", "gemm_small", "--json", "--bogus-flag"}), 2);
    check_error_object(bud({"profile", "gemm_small", "--json", "--mem-outstanding", "0"}), 2);
  }
  SECTION("fit") {
    const auto ok = one_object(bud({"fit", "gemm_small", "--configs", "npu8", "--gemm", "none",
                                    "--sla-p99-us", "500", "--requests", "200", "--json"}));
    CHECK(ok.at("cells").size() == 1);
    CHECK(ok.at("winners").at("production").at("config") == "npu8");
    check_error_object(bud({"fit", "nosuch", "--configs", "npu8", "--sla-p99-us", "500", "--json"}), 2);
    check_error_object(bud({"fit", "gemm_small", "--json"}), 2);  // no SLA
    check_error_object(bud({"fit", "gemm_small@x", "--sla-p99-us", "500", "--json"}), 2);
    check_error_object(bud({"fit", "gemm_small", "--configs", "npu8,npu8", "--sla-p99-us", "500",
                            "--json"}), 2);
    check_error_object(bud({"fit", "gemm_small", "--sla-p99-us", "500", "--load", "1.2", "--json"}), 2);
    check_error_object(bud({"fit", "--json", "--bogus-flag"}), 2);
  }
  SECTION("workloads") {
    const auto r = bud({"workloads", "--json"});
    CHECK(r.status == 0);
    CHECK_NOTHROW(nlohmann::json::parse(r.out));
    check_error_object(bud({"workloads", "--show", "nosuch", "--json"}), 2);
  }
  SECTION("packet inspect") {
    CHECK(one_object(bud({"packet", "inspect", good, "--json"})).is_object());
    const auto o = one_object(bud({"packet", "inspect", odd, "--json"}));
    CHECK(o.dump().find("\xEF\xBF\xBD") != std::string::npos);  // U+FFFD for the stray bytes
    check_error_object(bud({"packet", "inspect", missing, "--json"}), 2);
    check_error_object(bud({"packet", "inspect", corrupt, "--json"}), 2);
    check_error_object(bud({"packet", "inspect", odd_missing, "--json"}), 2);
    check_error_object(bud({"packet", "inspect", "--json"}), 2);  // missing argument
  }
  SECTION("replay") {
    const auto r = bud({"replay", good, "--json"});
    CHECK(r.status == 0);
    CHECK(one_object(r).at("exit_code") == 0);
    check_error_object(bud({"replay", corrupt, "--json"}), 125);
    check_error_object(bud({"replay", missing, "--json"}), 125);
    check_error_object(bud({"replay", odd_missing, "--json"}), 125);
    check_error_object(bud({"replay", good, "--json", "-j", "0"}), 2);
  }
  SECTION("bisect") {
    const auto r = bud({"bisect", good, "--json"});
    CHECK(r.status == 0);
    CHECK(one_object(r).is_object());
    check_error_object(bud({"bisect", corrupt, "--json"}), 125);
    check_error_object(bud({"bisect", missing, "--json"}), 125);
    check_error_object(bud({"bisect", "--json"}), 2);
  }
  SECTION("minimize") {
    check_error_object(bud({"minimize", corrupt, "-o", temp_path("min.bpk"), "--json"}), 125);
    check_error_object(bud({"minimize", missing, "-o", temp_path("min.bpk"), "--json"}), 125);
    check_error_object(bud({"minimize", good, "--json"}), 2);  // -o is required
  }
  SECTION("trigger check") {
    const auto ok =
        bud({"trigger", "check", "examples/triggers/memory_stall_burst.trig", "--json"});
    CHECK(ok.status == 0);
    CHECK(one_object(ok).at("valid") == true);
    const std::string bad = temp_path("bad.trig");
    write_file(bad, "trigger t when nosuch_counter > 3 -> halt\n");
    check_error_object(bud({"trigger", "check", bad, "--json"}), 2);
    check_error_object(bud({"trigger", "check", missing, "--json"}), 2);
  }
  SECTION("debug, serve, attach") {
    check_error_object(bud({"debug", "nosuch", "--json", "--batch"}), 2);
    check_error_object(bud({"serve", "gemm_small", "--json", "--listen", "unix:/missing/dir/s"}),
                       2);
    check_error_object(bud({"attach", "unix:" + temp_path("no.sock"), "--json"}), 2);
  }
  SECTION("corpus merge, submit, record, dashboard") {
    check_error_object(bud({"corpus", "merge", temp_path("m"), missing, "--json"}), 2);
    const std::string dup = temp_path("dup.json");
    write_file(dup, "{\"format\": \"bud-corpus-shard\"}");
    check_error_object(bud({"corpus", "merge", temp_path("m"), dup, "--json"}), 2);
    check_error_object(bud({"corpus", "submit", "--slurm", missing, "--json"}), 2);
    check_error_object(bud({"corpus", "record", temp_path("e.db"), missing, "--run", "r", "--json"}),
                       2);
    check_error_object(bud({"corpus", "dashboard", temp_path("none.db"), "--json"}), 2);
  }
  SECTION("unknown command") { check_error_object(bud({"rn", "--json"}), 2); }
  for (const auto& p : {good, corrupt, odd}) std::remove(p.c_str());
}

TEST_CASE("unknown commands get a suggestion, bud help works", "[e2e][help]") {
  const auto r = bud({"rn"});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "did you mean 'bud run'?"));
  const auto h = bud({"help"});
  CHECK(h.status == 0);
  CHECK(contains(h.out, "Examples:"));
  const auto hr = bud({"help", "replay"});
  CHECK(hr.status == 0);
  CHECK(contains(hr.out, "--junit"));
  const auto hx = bud({"help", "bisekt"});
  CHECK(hx.status == 2);
  CHECK(contains(hx.err, "did you mean 'bud help bisect'?"));
}

TEST_CASE("every subcommand's --help has an Examples section", "[e2e][help]") {
  for (const std::vector<std::string>& sub : {std::vector<std::string>{"run"},
                                             {"workloads"},
                                             {"profile"},
                                             {"debug"},
                                             {"packet"},
                                             {"packet", "inspect"},
                                             {"replay"},
                                             {"bisect"},
                                             {"minimize"},
                                             {"trigger"},
                                             {"trigger", "check"},
                                             {"serve"},
                                             {"attach"},
                                             {"corpus"},
                                             {"corpus", "merge"},
                                             {"corpus", "submit"},
                                             {"corpus", "record"},
                                             {"corpus", "dashboard"}}) {
    auto args = sub;
    args.push_back("--help");
    const auto r = bud(args);
    INFO(sub.front() << (sub.size() > 1 ? " " + sub.back() : ""));
    CHECK(r.status == 0);
    CHECK(contains(r.out, "Examples:"));
    CHECK(contains(r.out, "  bud " + sub.front()));
  }
}

TEST_CASE("bud serve names a missing socket directory in one line", "[e2e][errors]") {
  const auto r = bud({"serve", "gemm_small", "--listen", "unix:/missing/dir/sock"});
  CHECK(r.status == 2);
  CHECK(r.err ==
        "bud serve: --listen unix:/missing/dir/sock: directory /missing/dir does not "
        "exist\n");
}

namespace {

/// The JSON objects `bud debug --batch --json` printed, one per command.
std::vector<nlohmann::json> debug_objects(const Result& r) {
  std::vector<nlohmann::json> v;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

/// A workload file: the conv built-in with `repeat: passes` (docs/workloads.md).
std::string conv_repeated(const std::string& name, int passes) {
  const std::string path = temp_path(name);
  write_file(path, slurp(std::string(BUD_SOURCE_DIR) + "/emu/workload/builtins/conv.textpb") +
                       "repeat: " + std::to_string(passes) + "\n");
  return path;
}

}  // namespace

TEST_CASE("a program longer than the command ring runs, records, replays, bisects and goes to",
          "[e2e][long]") {
  // The conv residual block seven times: 2338 commands through the 2048-entry ring, refilled by
  // the host driver as the NPU retires commands (docs/workloads.md, `repeat`).
  const std::string work = conv_repeated("conv7.textpb", 7);
  const std::string good = temp_path("conv7.bpk");
  const auto run = bud({"run", work, "--json", "--record", good});
  REQUIRE(run.status == 0);
  const auto j = one_object(run);
  CHECK(j.at("passed") == true);  // every stage and output bit-exact against the golden model
  CHECK(j.at("commands").get<uint64_t>() == 7 * 334);
  const uint64_t cycles = j.at("cycles").get<uint64_t>();
  CHECK(cycles > 7 * 27000);

  const auto replay = bud({"replay", good});
  CHECK(replay.status == 0);
  CHECK(contains(replay.out, "passed"));

  // A fault in the last pass: bisect names a command beyond the first ring's worth.
  const std::string bad = temp_path("conv7_bad.bpk");
  const auto faulty = bud({"run", work, "--fault", "flip:compute.accum[0][20]@174474", "--record",
                           bad, "--checkpoint-interval", "65536"});
  REQUIRE(faulty.status == 1);
  CHECK(bud({"replay", bad}).status == 1);
  const auto bis = bud({"bisect", bad, "--json"});
  const auto b = one_object(bis);
  CHECK(b.at("verdict") == "fail");
  CHECK(b.at("first_failing_stage") == "gemm");
  CHECK(b.at("first_divergence_cycle").get<uint64_t>() >= 174474);
  CHECK(b.at("command_index").get<uint64_t>() > 2048);
  CHECK(b.at("layer") == "conv1");
  CHECK(b.at("resimulated_cycles").get<uint64_t>() < cycles / 2);

  // goto a late cycle from the end of the recorded run lands on the state a forward run has.
  const std::string back = temp_path("goto.bud"), fwd = temp_path("until.bud");
  write_file(back, "continue\ngoto 170000\nwhere\ncounters\n");
  write_file(fwd, "until 170000\nwhere\ncounters\n");
  const auto g = debug_objects(bud({"debug", "--packet", good, "-x", back, "--batch", "--json"}));
  const auto f = debug_objects(bud({"debug", work, "-x", fwd, "--batch", "--json"}));
  REQUIRE(g.size() == 4);
  REQUIRE(f.size() == 3);
  CHECK(g[1].at("cycle") == 170000);
  CHECK(g[1].at("data").at("resimulated").get<uint64_t>() < 170000);
  CHECK(g[2].at("data") == f[1].at("data"));  // every engine on the same command (#2062...)
  CHECK(g[2].at("data").at("engines").at(2).at("cmd_id").get<uint64_t>() > 2048);
  for (const auto& [name, c] : f[2].at("data").at("counters").items())
    CHECK(g[3].at("data").at("counters").at(name).at("value") == c.at("value"));
}

TEST_CASE("bud debug --packet keeps at most 64 of a long recording's checkpoints",
          "[e2e][long]") {
  const std::string work = conv_repeated("conv7_dense.textpb", 7);
  const std::string pkt = temp_path("conv7_dense.bpk");
  REQUIRE(bud({"run", work, "--record", pkt, "--digest-interval", "1024", "--checkpoint-interval",
               "1024"})
              .status == 0);  // ~189 checkpoints
  const std::string script = temp_path("dense.bud");
  write_file(script, "info checkpoints\ngoto 150000\nwhere\n");
  const auto d = bud({"debug", "--packet", pkt, "-x", script, "--batch", "--json"});
  REQUIRE(d.status == 0);
  const auto v = debug_objects(d);
  REQUIRE(v.size() == 3);
  size_t named = 0;
  for (const auto& line : v[0].at("output"))
    named += contains(line.get<std::string>(), "packet@");
  CHECK(named >= 32);
  CHECK(named <= 64);
  CHECK(contains(v[0].dump(), "packet@0"));
  CHECK(v[1].at("cycle") == 150000);
  CHECK(v[1].at("data").at("resimulated").get<uint64_t>() < 150000);
}

TEST_CASE("bud run MODEL.onnx passes bit-exactly on the imported production-shape models",
          "[e2e][onnx][models]") {
  for (const char* m :
       {"resnet_tiny", "mobilenet_tiny", "transformer_tiny", "mha_tiny", "qlinear_tiny",
        "lenet_tiny", "inception_tiny"}) {
    const auto r = bud({"run", std::string("examples/onnx/") + m + ".onnx", "--json"});
    INFO(m << ": " << r.out << r.err);
    CHECK(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["passed"] == true);
    // ResNet: the max pool; transformer: softmax, 2 layer norms, gelu (the attention matmuls
    // run on the NPU); multi-head: a softmax per head and the layer norm; LeNet: the max pool
    // and the sigmoid; Inception: the max pool and two concats.
    const size_t host = std::string(m) == "resnet_tiny"        ? 1
                        : std::string(m) == "transformer_tiny" ? 4
                        : std::string(m) == "mha_tiny"         ? 5
                        : std::string(m) == "lenet_tiny"       ? 2
                        : std::string(m) == "inception_tiny"   ? 3
                                                               : 0;
    CHECK(j["host_layers"].size() == host);
    CHECK((j["host_cycles"].get<uint64_t>() > 0) == (host > 0));
  }
}

TEST_CASE("bud import writes a workload that runs exactly like the ONNX model",
          "[e2e][onnx][roundtrip]") {
  const std::string out =
      std::string(BUD_BINARY_DIR) + "/e2e_import_" + std::to_string(getpid()) + ".textpb";
  const auto imp = bud({"import", "examples/onnx/transformer_tiny.onnx", "-o", out});
  INFO(imp.out << imp.err);
  REQUIRE(imp.status == 0);
  CHECK(contains(imp.out, "14 layers (4 on the host)"));
  CHECK(contains(imp.out, "quantisation error vs fp32"));
  const auto from_text = bud({"run", out, "--json"});
  const auto from_onnx = bud({"run", "examples/onnx/transformer_tiny.onnx", "--json"});
  std::remove(out.c_str());
  INFO(from_text.err << from_onnx.err);
  REQUIRE(from_text.status == 0);
  REQUIRE(from_onnx.status == 0);
  const auto a = nlohmann::json::parse(from_text.out), b = nlohmann::json::parse(from_onnx.out);
  CHECK(a["output_digest"] == b["output_digest"]);
  CHECK(a["cycles"] == b["cycles"]);
  CHECK(a["host_cycles"] == b["host_cycles"]);
}

TEST_CASE("bud import --per-channel and bud run --per-channel: per-channel factors, bit-exact, recorded",
          "[e2e][onnx][per_channel]") {
  const std::string base = std::string(BUD_BINARY_DIR) + "/e2e_pc_" + std::to_string(getpid());
  const std::string out = base + ".textpb", packet = base + ".budpkt";
  const auto imp = bud({"import", "examples/onnx/outlier_tiny.onnx", "--per-channel", "--json",
                        "-o", out});
  INFO(imp.out << imp.err);
  REQUIRE(imp.status == 0);
  const auto j = nlohmann::json::parse(imp.out);
  CHECK(j["per_channel"] == true);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(contains(text.str(), "channel_mult"));
  // On the RTL, checked against the golden model and the reference; recorded and replayed.
  const auto run = bud({"run", out, "--json", "--record", packet});
  INFO(run.err);
  CHECK(run.status == 0);
  const auto r = nlohmann::json::parse(run.out);
  CHECK(r["passed"] == true);
  const auto replay = bud({"replay", packet});
  INFO(replay.out << replay.err);
  CHECK(replay.status == 0);
  // `bud run MODEL.onnx --per-channel` imports the same way: the same program and results, and
  // its packet (which embeds the imported text) replays.
  const std::string packet2 = base + "_onnx.budpkt";
  const auto direct = bud({"run", "examples/onnx/outlier_tiny.onnx", "--per-channel", "--json",
                           "--record", packet2});
  INFO(direct.err);
  REQUIRE(direct.status == 0);
  const auto d = nlohmann::json::parse(direct.out);
  CHECK(d["output_digest"] == r["output_digest"]);
  CHECK(d["cycles"] == r["cycles"]);
  CHECK(bud({"replay", packet2}).status == 0);
  const auto plain = nlohmann::json::parse(
      bud({"run", "examples/onnx/outlier_tiny.onnx", "--json"}).out);
  CHECK(plain["output_digest"] != r["output_digest"]);  // per tensor: other weights and factors
  std::remove(out.c_str());
  std::remove(packet.c_str());
  std::remove(packet2.c_str());
}

TEST_CASE("every example workload runs bit-exactly on the RTL", "[e2e][examples]") {
  // examples/workloads: attention (matmuls, a transposed dense), per-channel factors, K chunks.
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(BUD_SOURCE_DIR) + "/examples/workloads"))
    if (e.path().extension() == ".textpb")
      files.push_back("examples/workloads/" + e.path().filename().string());  // bud runs there
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 3);
  for (const auto& f : files) {
    const auto r = bud({"run", f, "--json"});
    INFO(f << ": " << r.err);
    CHECK(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["passed"] == true);
  }
}

TEST_CASE("bud import of a bad model exits 2, names the node and writes nothing",
          "[e2e][onnx][errors]") {
  const std::string out =
      std::string(BUD_BINARY_DIR) + "/e2e_bad_import_" + std::to_string(getpid()) + ".textpb";
  const auto r = bud({"import", "tests/onnx/data/unknown_op.onnx", "-o", out});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "unknown_op.onnx: node 'mystery4' (#1, Sin): unsupported operator"));
  CHECK(std::ifstream(out).good() == false);
  CHECK(std::ifstream(out + ".tmp").good() == false);
  const auto j = bud({"import", "tests/onnx/data/dynamic_shape.onnx", "--json", "-o", out});
  CHECK(j.status == 2);
  bool ok = false;
  CHECK(count_top_level_objects(j.out, ok) == 1);
  CHECK(contains(j.out, "dynamic dimension 0 'N'"));
  CHECK(std::ifstream(out).good() == false);
  const auto run = bud({"run", "tests/onnx/data/bad_attribute.onnx"});
  CHECK(run.status == 2);
  CHECK(contains(run.err, "node 'conv3' (#0, Conv): dilations [2, 2] unsupported"));
}

TEST_CASE("bud run --config selects the array variant and names what is missing", "[e2e][array]") {
  // The default variant by name runs the default design.
  const auto npu8 = bud({"run", "gemm_small", "--config", "npu8", "--json"});
  INFO(npu8.err);
  CHECK(npu8.status == 0);
  const auto v8 = nlohmann::json::parse(npu8.out);
  CHECK(v8["array"]["name"] == "npu8");
  CHECK(v8["array"]["rows"] == 8);
  const auto plain = nlohmann::json::parse(bud({"run", "gemm_small", "--json"}).out);
  CHECK(plain["cycles"] == v8["cycles"]);
  CHECK(plain["model_revision"] == v8["model_revision"]);

  // Not a variant of the table: a usage error naming the variants.
  const auto unknown = bud({"run", "gemm_small", "--config", "npu7"});
  CHECK(unknown.status == 2);
  CHECK(contains(unknown.err, "unknown array configuration 'npu7'"));
  CHECK(contains(unknown.err, "npu16"));
  const auto unknown_json = bud({"run", "gemm_small", "--config", "npu7", "--json"});
  CHECK(unknown_json.status == 2);
  CHECK(nlohmann::json::parse(unknown_json.out)["error"] == "bad_input");

  // A table variant this build lacks: its own exit status, the CMake option in the message.
  for (const std::string v : {"npu16", "npu32"}) {
    const auto probe = bud({"run", "gemm_small", "--config", v, "--max-cycles", "1", "--json"});
    if (probe.status != 5) continue;  // built here (BUD_NPU_VARIANTS): nothing is missing
    INFO(probe.err);
    CHECK(contains(probe.err, "array configuration '" + v + "' is not built"));
    CHECK(contains(probe.err, "-DBUD_NPU_VARIANTS="));
    bool well_formed = false;
    CHECK(count_top_level_objects(probe.out, well_formed) == 1);
    const auto j = nlohmann::json::parse(probe.out);
    CHECK(j["error"] == "not_built");
    CHECK(j["exit_code"] == 5);
    for (const std::string cmd : {"debug", "profile"}) {
      const auto r = bud({cmd, "gemm_small", "--config", v});
      CHECK(r.status == 5);
      CHECK(contains(r.err, "is not built"));
    }
  }
}

TEST_CASE(
    "bud run --tile-rows lowers smaller tiles, records them in the packet and replays bit-exactly",
    "[e2e][tiles]") {
  const auto base = one_object(bud({"run", "mlp", "--json"}));
  const std::string packet = temp_path("mlp_tiles.bpk");
  const auto run = bud({"run", "mlp", "--tile-rows", "8", "--json", "--record", packet});
  REQUIRE(run.status == 0);
  const auto j = one_object(run);
  CHECK(j.at("passed") == true);
  CHECK(j.at("commands").get<uint64_t>() > base.at("commands").get<uint64_t>());
  CHECK(j.at("cycles") != base.at("cycles"));
  // The packet embeds the capped workload text: replay lowers the same program and matches.
  const auto replay = bud({"replay", packet, "--json"});
  CHECK(replay.status == 0);
  const std::string plain = temp_path("mlp_plain.bpk");
  REQUIRE(bud({"run", "mlp", "--record", plain}).status == 0);
  const auto text_bytes = [](const std::string& p) {
    return one_object(bud({"packet", "inspect", p, "--json"})).at("workload").at("text_bytes");
  };
  CHECK(text_bytes(packet).get<uint64_t>() ==
        text_bytes(plain).get<uint64_t>() + std::string("max_tile_rows: 8\n").size());
  const auto prof = one_object(bud({"profile", packet, "--json"}));
  CHECK(prof.at("run").at("cycles") == j.at("cycles"));
  // Bad values are usage errors.
  CHECK(bud({"run", "mlp", "--tile-rows", "0"}).status == 2);
  CHECK(bud({"run", "mlp", "--tile-blocks", "-1"}).status == 2);
}

TEST_CASE("bud run --precision auto reports the fallback and stays bit-exact", "[e2e][precision]") {
  const auto r = bud({"run", "examples/precision/needs_bf16.textpb", "--precision", "auto"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "PASS"));
  CHECK(contains(r.out, "guardrail 20.0 dB"));
  CHECK(contains(r.out, "fallback: int8 SNR"));
  CHECK(contains(r.out, "(readers fc3 too)"));
  const auto j = bud({"run", "examples/precision/needs_bf16.textpb", "--precision", "auto", "--json"});
  CHECK(j.status == 0);
  CHECK(contains(j.out, "\"fallbacks\":[{\"layer\":\"fc2\",\"int8_snr_db\":"));
  CHECK(contains(j.out, "\"below_guardrail\":false"));
}

TEST_CASE("a forced int8 run of the layer that needs BF16 breaks the guardrail and says so",
          "[e2e][precision]") {
  const std::string file = std::string(BUD_BINARY_DIR) + "/e2e_force_int8.prec";
  // The audit: force the fallback back (fc2 and its reader fc3 int8, so fc2's output is int8).
  std::ofstream(file) << "* bf16\nfc2 int8\nfc3 int8\n";
  const auto r = bud({"run", "examples/precision/needs_bf16.textpb", "--precision", file});
  INFO(r.out << r.err);
  CHECK(r.status == 0);  // the run itself is correct; its quality is not
  CHECK(contains(r.out, "below the guardrail"));
  const auto j = bud({"run", "examples/precision/needs_bf16.textpb", "--precision", file, "--json"});
  CHECK(contains(j.out, "\"below_guardrail\":true"));
  const std::string bad_file = std::string(BUD_BINARY_DIR) + "/e2e_bad.prec";
  std::ofstream(bad_file) << "nosuch bf16\n";
  const auto bad = bud({"run", "mlp", "--precision", bad_file, "--json"});
  INFO(bad.out << bad.err);
  CHECK(bad.status == 2);
  CHECK(contains(bad.out + bad.err, "e2e_bad.prec:1:1: workload 'mlp' has no layer 'nosuch'"));
}

TEST_CASE("bud bisect --workload W --good A --bad B names the layer that breaks the guardrail",
          "[e2e][precision][bisect]") {
  const std::string w = "examples/precision/needs_bf16.textpb";
  const std::string repro = temp_path("e2e_repro.prec");
  const auto r = bud({"bisect", "--workload", w, "--good", "auto", "--bad", "int8", "--repro", repro});
  INFO(r.out << r.err);
  CHECK(r.status == 1);  // a regression was localized
  CHECK(contains(r.out, "verdict    quality"));
  CHECK(contains(r.out, "mechanism  precision"));
  CHECK(contains(r.out, "culprit    fc3"));
  CHECK(contains(r.out, "first      fc2"));
  const auto j = one_object(bud({"bisect", "--workload", w, "--good", "auto", "--bad", "int8", "--json"}));
  CHECK(j.at("verdict") == "quality");
  CHECK(j.at("precision").at("culprit") == "fc3");
  // The reproducer is a precision file `bud run` takes, and the run says fc2 breaks.
  const auto run = one_object(bud({"run", w, "--precision", repro, "--json"}));
  CHECK(run.at("passed") == true);
  for (const auto& q : run.at("quality").at("layers"))
    if (q.at("layer") == "fc2") CHECK(q.at("below_guardrail") == true);
  // No regression: exit 0. Usage and input errors: 2 and 125, JSON on every path.
  CHECK(bud({"bisect", "--workload", w, "--good", "auto", "--bad", "bf16"}).status == 0);
  CHECK(bud({"bisect", "--workload", w, "--good", "auto"}).status == 2);
  const auto bad = bud({"bisect", "--workload", w, "--good", "int4", "--bad", "int8", "--json"});
  CHECK(bad.status == 125);
  CHECK(one_object(bad).at("verdict") == "error");
}

TEST_CASE("bud run --precision reports cycles per mode and the output's agreement",
          "[e2e][precision]") {
  const auto j = one_object(
      bud({"run", "examples/precision/needs_bf16.textpb", "--precision", "auto", "--json"}));
  const auto& mix = j.at("precision_mix");
  CHECK(mix.at("int8").at("layers") == 1);
  CHECK(mix.at("bf16").at("layers") == 2);
  const auto& c = j.at("counters");
  CHECK(mix.at("bf16").at("macs_useful") == c.at("macs_useful_bf16"));
  CHECK(mix.at("bf16").at("array_cycles").get<uint64_t>() ==
        c.at("macs_issued_bf16").get<uint64_t>() / 32);  // npu8: 4 x 8 BF16 MACs per iteration
  CHECK(mix.at("int8").at("array_cycles").get<uint64_t>() ==
        (c.at("macs_issued").get<uint64_t>() - c.at("macs_issued_bf16").get<uint64_t>()) / 64);
  // Utilisation against each precision's peak.
  const double util = (c.at("macs_useful").get<double>() + c.at("macs_useful_bf16").get<double>()) /
                      (c.at("cycles").get<double>() * 64);
  CHECK(j.at("mac_utilization").get<double>() == Approx(util));
  const auto& a = j.at("quality").at("agreement");
  CHECK(a.at("inputs") == 8);
  CHECK(a.at("rows") == 8 * 16);  // 16 rows of the 16 x 16 output per input
  CHECK(a.at("top1").get<double>() > 0.5);
  CHECK(a.at("top5").get<double>() >= a.at("top1").get<double>());
  // outlier_tiny's int8 output disagrees with the fp32 network on some rows; BF16 on none.
  auto top1 = [](const char* precision) {
    return one_object(bud({"run", "examples/onnx/outlier_tiny.onnx", "--precision", precision,
                           "--json"}))
        .at("quality").at("agreement").at("top1").get<double>();
  };
  const double int8_top1 = top1("int8"), bf16_top1 = top1("bf16");
  CHECK(int8_top1 < bf16_top1);
  CHECK(bf16_top1 == 1.0);
  // An imported model is also measured against the ONNX model's own fp32 network.
  const auto onnx = one_object(
      bud({"run", "examples/onnx/outlier_tiny.onnx", "--precision", "bf16", "--json"}));
  const auto& q = onnx.at("quality");
  CHECK(q.at("onnx").at("agreement").at("inputs") == 16);
  for (const auto& l : q.at("layers")) CHECK(l.contains("onnx_snr_db"));
  const auto text = bud({"run", "examples/onnx/outlier_tiny.onnx", "--precision", "bf16"});
  CHECK(contains(text.out, "vs the ONNX model's fp32 network"));
  CHECK(contains(text.out, "ONNX dB"));
}

namespace {

// `bud profile WORKLOAD --precision P --thermal --json [--energy-table T]`'s thermal figures.
nlohmann::json thermal_profile(const std::string& precision, const std::string& table) {
  std::vector<std::string> args = {"profile", "compute_bound", "--precision", precision,
                                   "--thermal", "--json"};
  if (!table.empty()) args.insert(args.end(), {"--energy-table", table});
  const auto r = bud(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out)["profile"]["thermal"];
}

}  // namespace

TEST_CASE("int8 vs BF16 under the thermal clamp: the direction follows the BF16 MAC energy",
          "[e2e][precision][thermal]") {
  // docs/power.md, "Precision under a thermal clamp". Under the clamp, sustained throughput is
  // set by energy per inference, so int8's gain over BF16 moves from the cycle ratio towards the
  // energy ratio.
  auto gains = [](const std::string& table) {
    const auto i8 = thermal_profile("int8", table), b16 = thermal_profile("bf16", table);
    const double nominal = i8["nominal_inferences_per_second"].get<double>() /
                           b16["nominal_inferences_per_second"].get<double>();
    const double sustained = i8["sustained_inferences_per_second"].get<double>() /
                             b16["sustained_inferences_per_second"].get<double>();
    return std::tuple{nominal, sustained, i8["clamped_fraction"].get<double>(),
                      b16["clamped_fraction"].get<double>()};
  };
  // The default (Horowitz 45 nm) table: a BF16 lane costs 1.4 pJ, an int8 one 0.3 pJ; BF16
  // burns more per inference, clamps more, and int8's gain widens.
  const auto [n1, s1, c8, c16] = gains("");
  CHECK(n1 == Approx(1.99).margin(0.02));
  CHECK(s1 > n1);
  CHECK(c16 > c8);
  // A BF16 lane at the int8 lane's energy: int8, firing twice the lanes per cycle, runs hotter,
  // clamps more, and the clamp cuts its gain (the case of the domain documents).
  std::string text = slurp(std::string(BUD_SOURCE_DIR) + "/power/tables/npu_45nm.textpb");
  const std::string key = "counter: \"macs_issued_bf16\" pj: ";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  const size_t end = text.find(' ', at + key.size());
  text.replace(at + key.size(), end - at - key.size(), "0");
  const std::string shared = std::string(BUD_BINARY_DIR) + "/e2e_shared_mac.textpb";
  std::ofstream(shared) << text;
  const auto [n2, s2, d8, d16] = gains(shared);
  CHECK(n2 == Approx(n1));
  CHECK(s2 < n2);
  CHECK(d8 > d16);
  // Under a serving load at an SLA (docs/serving.md, "Thermal clamp under load"): the sustained
  // requests/s at p99 <= 4 ms, without and with the clamp over the serving timeline.
  auto sustained_rps = [&](const std::string& precision, bool thermal) {
    std::vector<std::string> args = {"serve-load", "compute_bound", "--precision", precision,
                                     "--energy-table", shared, "--sla-p99-us", "4000",
                                     "--max-batch", "1", "--requests", "400", "--json",
                                     "--load", "0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9"};
    if (thermal) args.push_back("--thermal");
    const auto r = bud(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto sweep = nlohmann::json::parse(r.out).at("sweep");
    CHECK(sweep.at("thermal") == thermal);
    const auto& p = sweep.at("points").at(sweep.at("sustained_point").get<size_t>());
    if (thermal) CHECK(p.at("thermal").at("clamped_fraction").get<double>() > 0);
    return p.at("served_rps").get<double>();
  };
  const double cold = sustained_rps("int8", false) / sustained_rps("bf16", false);
  const double hot = sustained_rps("int8", true) / sustained_rps("bf16", true);
  CHECK(hot < cold);
}

TEST_CASE("writing a report to /dev/null leaves the device a device", "[e2e][output]") {
  // The atomic write (a temporary and a rename) would replace a device or FIFO with a regular
  // file: such a path is written in place.
  REQUIRE(std::filesystem::is_character_file("/dev/null"));
  CHECK(bud({"import", "examples/onnx/outlier_tiny.onnx", "-o", "/dev/null"}).status == 0);
  CHECK(std::filesystem::is_character_file("/dev/null"));
  // A directory is refused with its name.
  const auto r = bud({"import", "examples/onnx/outlier_tiny.onnx", "-o", BUD_BINARY_DIR});
  CHECK(r.status == 2);
}
