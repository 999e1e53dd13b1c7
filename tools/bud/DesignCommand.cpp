#include "tools/bud/DesignCommand.h"

#include <cstdio>
#include <iostream>
#include <tuple>

#include <unistd.h>

#include "debugger/json/Json.h"
#include "design/DesignBisect.h"
#include "design/DesignCheck.h"
#include "design/DesignPacket.h"
#include "design/DesignRun.h"
#include "design/DesignTarget.h"
#include "design/ModelBuild.h"
#include "tools/bud/DesignBisectReport.h"
#include "tools/bud/DesignRunReport.h"
#include "tools/bud/Output.h"

namespace bud::cli {

using json::Json;

void setup_design(CLI::App& app, DesignOptions& options) {
  auto* sub = app.add_subcommand("design", "Check a design file against its RTL (docs/designs.md)");
  sub->require_subcommand(1);
  auto* check = sub->add_subcommand(
      "check", "Parse FILE, elaborate its sources with Verilator and check every port, width, "
               "counter and stage it names");
  check->add_option("FILE", options.file, "The design file (TOML)")->required();
  check->add_flag("--json", options.json, "One JSON object (errors too)");
  check->callback([&options] { options.action = "check"; });
  auto* build = sub->add_subcommand(
      "build", "Check FILE, then Verilate it into a loadable model cached by revision");
  build->add_option("FILE", options.file, "The design file (TOML)")->required();
  build->add_flag("--json", options.json, "One JSON object (errors too)");
  build->add_option("--cache", options.cache,
                    "Model cache directory (default $BUD_DESIGN_CACHE, else "
                    "$XDG_CACHE_HOME/bud/designs, else ~/.cache/bud/designs)");
  build->callback([&options] { options.action = "build"; });
  auto* run = sub->add_subcommand(
      "run", "Build (or find) the model, run it with its streams until drained, check the output "
             "against the reference command");
  run->add_option("FILE", options.file, "The design file (TOML)")->required();
  run->add_flag("--json", options.json, "One JSON object (errors too)");
  run->add_option("--seed", options.seed, "Seed of the streams' valid/ready back-pressure")
      ->capture_default_str();
  run->add_option("--max-cycles", options.max_cycles, "Give up after N cycles (exit 3)")
      ->capture_default_str();
  run->add_option("--out-dir", options.out_dir, "Write the sinks' files here (default: beside the design file)");
  run->add_option("--cache", options.cache, "Model cache directory");
  run->add_option("--record", options.record,
                  "Write the run as a self-contained replay packet (its files, overrides, seed, "
                  "revision and digests; `bud replay FILE` re-runs it)")
      ->type_name("FILE");
  auto* bisect = sub->add_subcommand(
      "bisect", "Run FILE and a changed design from the same stimulus and find the first stage "
                "whose transactions differ (docs/designs.md, \"Bisecting a design\")");
  bisect->add_option("FILE", options.file, "The good design file (TOML)")->required();
  bisect->add_option("--bad", options.bad_file, "The changed design file (default: FILE)");
  bisect->add_option("--bad-define", options.bad_defines,
                     "NAME=VALUE: a define of the changed design only (repeatable)");
  bisect->add_option("--bad-param", options.bad_params,
                     "NAME=VALUE: a parameter of the changed design only (repeatable)");
  bisect->add_flag("--json", options.json, "One JSON object (errors too)");
  bisect->add_option("--seed", options.seed, "Seed of both runs' back-pressure and DRAM timing")
      ->capture_default_str();
  bisect->add_option("--max-cycles", options.max_cycles, "Give up on a run after N cycles")
      ->capture_default_str();
  bisect->add_option("--cache", options.cache, "Model cache directory");
  bisect->callback([&options] { options.action = "bisect"; });
  bisect->footer(
      "Exit status: 0 no stage differs; 1 a stage differs (the first failing stage is named) or\n"
      "the runs end differently (a hang, an AXI error, a firmware timeout);\n"
      "2 bad input (the two designs' [[stage]] lists differ); otherwise as `bud design build`.\n"
      "Example:\n"
      "  bud design bisect examples/designs/vec_dma/vec_dma.toml --bad-define BUG_NO_SATURATE");
  for (CLI::App* c : {check, build, run, bisect}) {
    c->add_option("--define", options.defines,
                  "NAME=VALUE: set (or override) a [design].defines entry, e.g. a bug flag "
                  "(repeatable)");
    c->add_option("--param", options.params,
                  "NAME=VALUE: set (or override) a top-level parameter (repeatable)");
  }
  run->callback([&options] { options.action = "run"; });
  run->footer(
      "Exit status: 0 PASS (or no [check]); 1 the output (or a firmware read ... expect) differs;\n"
      "3 cycle limit; 9 the reference command failed; 10 a firmware poll/wait_irq timed out;\n"
      "11 an AXI run error (access outside a memory region, protocol violation, error response);\n"
      "otherwise as `bud design build`.\n"
      "Example:\n"
      "  bud design run examples/designs/vec_dma/vec_dma.toml --define BUG_DROP_LAST_BEAT=1\n"
      "  bud design run examples/designs/fir_stream/fir_stream.toml --record fir.bpk; bud replay "
      "fir.bpk\n"
      "A run that ends in an error (exit 9, 10, 11) writes no packet.");
  build->footer(
      "Exit status: as `bud design check`, and 8 the generated model does not compile or link\n"
      "(the log is named). A second build of the same revision is a cache hit.");
  check->footer(
      "Exit status: 0 the file matches its RTL; 2 unreadable or bad TOML/key, or a bad firmware\n"
      "script line (FILE:LINE:COL);\n"
      "6 it names a port, width or signal the RTL lacks; 7 Verilator cannot elaborate the sources.\n"
      "Example:\n"
      "  bud design check examples/designs/fir_stream/fir_stream.toml");
}

namespace {

const char* dir_name(design::RtlSignal::Dir d) {
  using D = design::RtlSignal::Dir;
  return d == D::Input ? "in" : d == D::Output ? "out" : "internal";
}

Json port_json(const std::vector<design::RequiredSignal>& req, const design::RtlSignals& rtl) {
  Json a = Json::array();
  for (const auto& r : req) {
    const auto* s = rtl.find(r.name);
    if (!s) continue;  // an optional signal the design does not have
    Json j = Json::object();
    j["signal"] = r.name;
    j["dir"] = dir_name(s->dir);
    j["width"] = s->width;
    a.push_back(j);
  }
  return a;
}

}  // namespace

namespace {

int run_bisect(const DesignOptions& o) {
  const std::string cmd = "design bisect";
  design::TargetOptions to;
  to.defines = o.defines;
  to.params = o.params;
  to.cache_dir = o.cache;
  to.seed = o.seed;
  design::DesignError err;
  const auto good = design::prepare_design(o.file, to, err);
  if (!good) return fail_command(cmd, o.json, err.exit_code, err.to_string());
  design::TargetOptions tb = to;
  tb.defines.insert(tb.defines.end(), o.bad_defines.begin(), o.bad_defines.end());
  tb.params.insert(tb.params.end(), o.bad_params.begin(), o.bad_params.end());
  const auto bad = design::prepare_design(o.bad_file.empty() ? o.file : o.bad_file, tb, err);
  if (!bad) return fail_command(cmd, o.json, err.exit_code, err.to_string());
  design::BisectOptions bo;
  bo.seed = o.seed;
  bo.max_cycles = o.max_cycles;
  const auto r = design::bisect_designs(*good, *bad, bo, err);
  if (!r) return fail_command(cmd, o.json, err.exit_code, err.to_string());
  const int code = r->first_failing || r->ending_differs ? 1 : 0;
  if (o.json) {
    std::cout << design_bisect_json(*r, good->spec.name, o.seed)
                     .dump(-1, ' ', false, json::Json::error_handler_t::replace)
              << "\n";
    return code;
  }
  std::cout << design_bisect_text(*r, good->spec.name, bad->spec.name);
  return code;
}

}  // namespace

int run_design(const DesignOptions& o) {
  if (o.action == "bisect") return run_bisect(o);
  const std::string cmd = "design " + o.action;
  auto parsed = design::parse_design_file(o.file);
  if (!parsed.ok()) return fail_command(cmd, o.json, parsed.error.exit_code, parsed.error.to_string());
  design::DesignSpec& spec = *parsed.spec;
  design::TargetOptions overrides;
  overrides.defines = o.defines;
  overrides.params = o.params;
  if (auto e = design::apply_overrides(spec, overrides))
    return fail_command(cmd, o.json, e->exit_code, e->to_string());
  const design::DesignSpec& d = spec;
  design::DesignError err;
  const auto rtl = design::read_rtl_signals(d, err);
  if (!rtl) return fail_command(cmd, o.json, err.exit_code, err.to_string());
  const auto checked = design::check_design(d, *rtl);
  if (!checked.ok())
    return fail_command(cmd, o.json, checked.error->exit_code, checked.error->to_string());
  if (o.action == "run") {
    design::RunOptions ro;
    ro.seed = o.seed;
    ro.max_cycles = o.max_cycles;
    ro.cache_dir = o.cache;
    ro.out_dir = o.out_dir;
    const auto r = design::run_design(d, ro, err);
    if (!r) return fail_command(cmd, o.json, err.exit_code, err.to_string());
    const int code = design_run_exit_code(*r);
    std::optional<design::WrittenPacket> packet;
    if (!o.record.empty()) {
      const design::RecordedRun rec{o.defines, o.params, o.seed, o.max_cycles, ro.quiet_cycles};
      std::string why;
      packet = design::write_design_packet(o.record, d, rec, *r, why);
      if (!packet) return fail_command(cmd, o.json, 2, why);
      std::cerr << "bud design run: recorded " << o.record << " (" << packet->bytes << " bytes, "
                << packet->files << " files of " << packet->file_bytes << " bytes embedded)\n";
    }
    // A run that ended in an error (firmware timeout, AXI error) is the command's error, as
    // before; its packet, when recorded, replays to the same error.
    if (r->error) std::cerr << "bud " << cmd << ": " << r->error->to_string() << "\n";
    if (o.json) {
      Json j = design_run_json(*r, o.seed, cmd);
      if (packet)
        j["packet"] = {{"path", o.record}, {"bytes", packet->bytes}, {"files", packet->files},
                       {"file_bytes", packet->file_bytes}};
      std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
      return code;
    }
    if (r->error) return code;  // said on stderr, as every command's error
    std::cout << design_run_text(*r, o.seed) << std::flush;
    return code;
  }
  if (o.action == "build") {
    design::BuildOptions bo;
    bo.cache_dir = o.cache;
    if (!o.json && isatty(2)) std::fprintf(stderr, "building the model of %s ...\n", d.name.c_str());
    const auto built = design::build_model(d, *rtl, bo, err);
    if (!built) return fail_command(cmd, o.json, err.exit_code, err.to_string());
    if (o.json) {
      Json j = Json::object();
      j["design"] = d.name;
      j["revision"] = built->revision;
      j["model"] = built->library;
      j["cached"] = built->cached;
      std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    } else {
      std::printf("design     %s\nrevision   %s\nmodel      %s (%s)\n", d.name.c_str(),
                  built->revision.c_str(), built->library.c_str(),
                  built->cached ? "cached" : "built");
    }
    return 0;
  }

  size_t ports = 0;
  for (const auto& [n, s] : rtl->signals) ports += s.is_port();
  Json j = Json::object();
  j["design"] = d.name;
  j["top"] = d.top;
  j["file"] = d.file;
  j["sources"] = d.sources;
  j["ports"] = ports;
  j["signals"] = rtl->signals.size();
  j["clock"] = d.clock.name;
  if (d.has_reset) {
    Json r = Json::object();
    r["name"] = d.reset.name;
    r["active"] = d.reset.active_low ? "low" : "high";
    r["cycles"] = d.reset.cycles;
    j["reset"] = r;
  }
  Json mem = Json::array();
  for (const auto& m : d.memories) {
    Json x = Json::object();
    x["name"] = m.name;
    x["base"] = m.base;
    x["size"] = m.size;
    x["init"] = m.init;
    mem.push_back(x);
  }
  j["memories"] = mem;
  Json axi = Json::array();
  for (const auto& p : d.axi4) {
    Json x = Json::object();
    x["name"] = p.name;
    x["prefix"] = p.prefix;
    x["memory"] = p.memory;
    x["signals"] = port_json(design::axi4_master_signals(p), *rtl);
    axi.push_back(x);
  }
  j["axi4"] = axi;
  if (d.control) {
    Json x = Json::object();
    x["prefix"] = d.control->prefix;
    x["firmware"] = d.control->firmware;
    x["interrupt"] = d.control->interrupt;
    x["signals"] = port_json(design::axi_lite_slave_signals(*d.control), *rtl);
    j["control"] = x;
  }
  Json streams = Json::array();
  for (const auto& s : d.streams) {
    Json x = Json::object();
    x["name"] = s.name;
    x["direction"] = s.direction == design::StreamPort::Direction::Source ? "source" : "sink";
    x["data_bits"] = s.data_bits;
    x["file"] = s.file;
    x["rate"] = s.rate;
    x["signals"] = port_json(design::stream_signals(s), *rtl);
    streams.push_back(x);
  }
  j["streams"] = streams;
  Json counters = Json::array();
  for (const auto& c : d.counters) {
    Json x = Json::object();
    x["name"] = c.name;
    if (!c.signal.empty()) x["signal"] = c.signal;
    else x["when"] = c.when;
    counters.push_back(x);
  }
  j["counters"] = counters;
  Json stages = Json::array();
  for (const auto& s : d.stages) {
    Json x = Json::object();
    x["name"] = s.name;
    x["valid"] = s.valid;
    x["ready"] = s.ready;
    x["payload"] = s.payload;
    stages.push_back(x);
  }
  j["stages"] = stages;
  j["valid"] = true;
  if (o.json) {
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::printf("design     %s (top %s, %zu source%s, %zu ports, %zu signals)\n", d.name.c_str(),
              d.top.c_str(), d.sources.size(), d.sources.size() == 1 ? "" : "s", ports,
              rtl->signals.size());
  std::printf("clock      %s", d.clock.name.c_str());
  if (d.has_reset)
    std::printf("   reset %s (active %s, %u cycles)", d.reset.name.c_str(),
                d.reset.active_low ? "low" : "high", d.reset.cycles);
  std::printf("\n");
  for (const auto& m : d.memories)
    std::printf("memory     %-10s base 0x%llx size %llu%s%s\n", m.name.c_str(),
                static_cast<unsigned long long>(m.base), static_cast<unsigned long long>(m.size),
                m.init.empty() ? "" : " init ", m.init.c_str());
  for (const auto& p : d.axi4)
    std::printf("axi4       %-10s %s* (%u data, %u addr, %u id bits) -> %s\n", p.name.c_str(),
                p.prefix.c_str(), p.data_bits, p.addr_bits, p.id_bits, p.memory.c_str());
  if (d.control)
    std::printf("control    axi4-lite  %s* firmware %s%s%s\n", d.control->prefix.c_str(),
                d.control->firmware.c_str(), d.control->interrupt.empty() ? "" : " interrupt ",
                d.control->interrupt.c_str());
  for (const auto& s : d.streams)
    std::printf("stream     %-10s %s %s* %u bits, rate %.2f, %s\n", s.name.c_str(),
                s.direction == design::StreamPort::Direction::Source ? "source" : "sink  ",
                s.prefix.c_str(), s.data_bits, s.rate, s.file.c_str());
  for (const auto& c : d.counters)
    std::printf("counter    %-10s %s\n", c.name.c_str(),
                (c.signal.empty() ? "cycles where " + c.when : c.signal).c_str());
  for (size_t i = 0; i < d.stages.size(); ++i)
    std::printf("stage %zu    %-10s %s%s%s\n", i, d.stages[i].name.c_str(), d.stages[i].valid.c_str(),
                d.stages[i].ready.empty() ? "" : " && ", d.stages[i].ready.c_str());
  std::printf("result     OK: every port, width, counter and stage matches the RTL\n");
  return 0;
}

}  // namespace bud::cli
