#include "tools/bud/PacketCommand.h"

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "debugger/json/Json.h"
#include "emu/core/StageTxn.h"
#include "emu/run/Designs.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "tools/bud/Output.h"

namespace bud::cli {

using json::Json;

namespace {

// This bud's revision of the design the packet was recorded on ("" if it lacks that design).
std::string design_revision_of(const replay::pb::Header& h) {
  std::string error;
  return emu::packet_design_revision(h.design(), error);
}

std::string hex(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016" PRIx64, v);
  return b;
}

Json packet_json(const replay::Packet& p) {
  const auto& h = p.header;
  Json j = Json::object();
  j["packet"] = p.name;
  j["bytes"] = p.file_bytes;
  j["format"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  j["complete"] = p.complete;
  if (!p.complete) j["incomplete"] = p.incomplete;
  j["model_revision"] = h.model_revision();
  j["design"] = h.design().empty() ? std::string("npu") : h.design();
  j["model_revision_matches"] = h.model_revision() == design_revision_of(h);
  j["verilator"] = h.verilator_version();
  j["tool"] = h.tool_version();
  Json tags = Json::array();
  for (const auto& t : h.build_tags()) tags.push_back(t);
  j["build_tags"] = std::move(tags);
  Json seeds = Json::object();
  seeds["workload"] = h.seeds().workload();
  seeds["memory"] = h.seeds().memory();
  seeds["verilator"] = h.seeds().verilator();
  j["seeds"] = std::move(seeds);
  Json w = Json::object();
  w["name"] = h.workload().name();
  w["origin"] = h.workload().origin();
  w["text_bytes"] = static_cast<uint64_t>(h.workload().text().size());
  w["onnx_model_bytes"] = static_cast<uint64_t>(h.workload().onnx_model().size());
  w["commands"] = h.stimulus().commands();
  j["workload"] = std::move(w);
  const auto& m = h.memory();
  Json mem = Json::object();
  mem["size_bytes"] = m.size_bytes();
  mem["base_latency"] = m.base_latency();
  mem["jitter"] = m.jitter();
  mem["bytes_per_cycle"] = m.bytes_per_cycle();
  mem["max_outstanding"] = m.max_outstanding();
  mem["reorder"] = m.reorder();
  mem["bursty"] = m.bursty();
  j["memory"] = std::move(mem);
  Json faults = Json::array();
  for (const auto& f : h.faults()) faults.push_back(f.text());
  j["faults"] = std::move(faults);
  Json triggers = Json::array();
  for (const auto& t : h.triggers()) triggers.push_back(t);
  j["triggers"] = std::move(triggers);
  j["digest_interval"] = h.intervals().digest();
  j["checkpoint_interval"] = h.intervals().checkpoint();
  j["start_cycle"] = h.start_cycle();
  j["last_cycle"] = p.last_cycle();
  if (h.has_design_run()) {  // a design packet (format 2.4): what `bud design run` was given
    const auto& d = h.design_run();
    Json x = Json::object();
    x["design_file"] = d.design_file();
    x["recorded_root"] = d.recorded_root();
    x["defines"] = Json(std::vector<std::string>(d.defines().begin(), d.defines().end()));
    x["params"] = Json(std::vector<std::string>(d.params().begin(), d.params().end()));
    x["seed"] = d.seed();
    x["max_cycles"] = d.max_cycles();
    x["files"] = p.design_files ? p.design_files->files_size() : 0;
    if (p.result) {
      x["verdict"] = replay::pb::DesignOutcome::Verdict_Name(p.result->design().verdict());
      x["message"] = p.result->design().message();
    }
    j["design_run"] = std::move(x);
  }
  if (p.result) {
    Json r = Json::object();
    r["cycles"] = p.result->cycles();
    r["state"] = p.result->state();
    r["passed"] = p.result->passed();
    r["stopped"] = p.result->stopped();
    r["state_digest"] = hex(p.result->state_digest());
    j["result"] = std::move(r);
  }
  if (p.symptom) {
    Json s = Json::object();
    s["kind"] = replay::symptom_kind_name(p.symptom->kind());
    s["cycle"] = p.symptom->cycle();
    s["message"] = p.symptom->message();
    j["symptom"] = std::move(s);
  } else {
    j["symptom"] = nullptr;
  }
  Json cps = Json::array();
  for (const auto& c : p.checkpoints) {
    Json cp = Json::object();
    cp["cycle"] = c.cycle();
    cp["raw_bytes"] = c.raw_size();
    cp["chunks"] = static_cast<uint64_t>(c.chunks_size());
    cps.push_back(std::move(cp));
  }
  j["checkpoints"] = std::move(cps);
  uint64_t digests = 0;
  for (const auto& w2 : p.windows) digests += w2.digests_size();
  j["windows"] = static_cast<uint64_t>(p.windows.size());
  j["digests"] = digests;
  Json notes = Json::array();
  for (const auto& a : p.annotations) {
    Json n = Json::object();
    n["cycle"] = a.cycle();
    n["text"] = a.text();
    notes.push_back(std::move(n));
  }
  j["annotations"] = std::move(notes);
  Json ivs = Json::array();
  for (const auto& r : p.interventions) {
    Json iv = Json::object();
    iv["cycle"] = r.cycle();
    iv["kind"] = replay::pb::Intervention::Kind_Name(r.kind());
    if (r.kind() == replay::pb::Intervention::MEMORY_WRITE) {
      iv["memory"] = r.memory();
      iv["offset"] = r.offset();
      iv["bytes"] = static_cast<uint64_t>(r.bytes().size());
    } else {
      iv["signal"] = r.signal();
      iv["element"] = r.element();
    }
    ivs.push_back(std::move(iv));
  }
  j["interventions"] = std::move(ivs);
  Json sizes = Json::object();
  for (size_t k = 1; k < p.breakdown.size(); ++k) {
    Json s = Json::object();
    s["records"] = p.breakdown[k].records;
    s["bytes"] = p.breakdown[k].bytes;
    sizes[replay::record_kind_name(static_cast<int>(k))] = std::move(s);
  }
  j["size_by_kind"] = std::move(sizes);
  return j;
}

// Every string from the packet goes through replay::printable(): a packet may come from anyone,
// and terminal escape sequences in it must not reach the terminal.
std::string packet_text(const replay::Packet& p) {
  const auto P = [](const std::string& s) { return replay::printable(s); };
  const auto& h = p.header;
  std::ostringstream o;
  o << "packet       " << P(p.name) << " (" << group_digits(p.file_bytes) << " bytes, format "
    << p.major << "." << p.minor << (p.complete ? ", complete" : ", INCOMPLETE") << ")\n";
  if (!p.complete) o << "             " << P(p.incomplete) << "\n";
  const std::string own = design_revision_of(h);
  o << "model        " << P(h.model_revision());
  if (h.has_design_run())  // built from the packet's own files, checked when replayed
    o << " (design revision)";
  else
    o << (h.model_revision() == own ? " (this bud's)" : " (this bud has ")
      << (h.model_revision() == own ? ""
                                    : (own.empty() ? std::string("no such design") : own) + ")");
  o << "; " << P(h.verilator_version()) << "\n";
  o << "tool         " << P(h.tool_version());
  for (const auto& t : h.build_tags()) o << "; " << P(t);
  o << "\n";
  if (h.has_design_run()) {
    const auto& d = h.design_run();
    o << "design       " << P(h.design()) << ": " << P(d.design_file()) << " and "
      << (p.design_files ? p.design_files->files_size() - 1 : 0) << " more files embedded"
      << " (recorded in " << P(d.recorded_root()) << ")\n";
    o << "run          seed " << d.seed() << ", max-cycles " << d.max_cycles();
    for (const auto& x : d.defines()) o << ", --define " << P(x);
    for (const auto& x : d.params()) o << ", --param " << P(x);
    o << "\n";
    if (p.result)
      o << "cycles       0.." << p.result->cycles() << ": " << P(p.result->design().message())
        << "\n";
  } else {
    o << "workload     " << P(h.workload().name()) << " (from " << P(h.workload().origin()) << ", "
      << h.stimulus().commands() << " commands, text embedded"
      << (h.workload().onnx_model().empty()
              ? std::string()
              : ", ONNX model embedded (" + std::to_string(h.workload().onnx_model().size()) +
                    " bytes)")
      << ")\n";
    o << "seeds        workload " << h.seeds().workload() << ", memory " << h.seeds().memory()
      << ", verilator " << h.seeds().verilator() << "\n";
    const auto& m = h.memory();
    o << "memory       latency " << m.base_latency() << " + 0.." << m.jitter() << ", "
      << m.bytes_per_cycle() << " B/cycle, " << m.max_outstanding() << " outstanding, "
      << (m.reorder() ? "reordering" : "in order") << (m.bursty() ? ", bursty" : "") << "\n";
    o << "limits       max-cycles " << h.limits().max_cycles() << ", hang-cycles "
      << h.limits().hang_cycles();
    if (h.limits().throttle_period())
      o << ", throttle " << h.limits().throttle_on_cycles() << "/" << h.limits().throttle_period();
    o << "\n";
    if (h.has_thermal()) {
      const auto& t = h.thermal();
      o << "thermal      window " << t.window_cycles() << " cycles at " << t.frequency_khz()
        << " kHz, ambient " << t.ambient_mc() << " mC, trip " << t.trip_mc() << " mC, hysteresis "
        << t.hysteresis_mc() << " mC, R " << t.r_mc_per_w() << " mC/W, C " << t.c_nj_per_c()
        << " nJ/C, " << t.counters_size() << " priced counters\n";
    }
    o << "faults      ";
    if (h.faults_size() == 0) o << " none";
    for (const auto& f : h.faults()) o << " " << P(f.text());
    o << "\ntriggers    ";
    if (h.triggers_size() == 0) o << " none";
    for (const auto& t : h.triggers()) o << " " << P(t);
    o << "\n";
    o << "cycles       " << h.start_cycle() << ".." << p.last_cycle();
    if (p.result)
      o << " (" << P(p.result->state()) << (p.result->passed() ? ", passed" : ", failed")
        << (p.result->stopped() ? ", recording stopped early" : "") << ")";
    o << "\n";
  }
  o << "symptom      ";
  if (p.symptom)
    o << replay::symptom_kind_name(p.symptom->kind()) << " at cycle " << p.symptom->cycle() << ": "
      << P(p.symptom->message()) << "\n";
  else
    o << (p.result ? "none" : "none recorded") << "\n";
  uint64_t digests = 0;
  for (const auto& w : p.windows) digests += w.digests_size();
  o << "checkpoints  " << p.checkpoints.size() << " every " << h.intervals().checkpoint()
    << " cycles:";
  size_t shown = 0;
  for (const auto& c : p.checkpoints) {
    if (shown++ == 12) {
      o << " ...";
      break;
    }
    o << " " << c.cycle();
  }
  o << "\n";
  o << "digests      " << digests << " every " << h.intervals().digest() << " cycles in "
    << p.windows.size() << " windows\n";
  for (const auto& a : p.annotations)
    o << "note         @" << a.cycle() << ": " << P(a.text()) << "\n";
  o << "size by record kind:\n";
  for (size_t k = 1; k < p.breakdown.size(); ++k) {
    const auto& b = p.breakdown[k];
    if (b.records == 0) continue;
    char line[128];
    std::snprintf(line, sizeof line, "  %-11s %6" PRIu64 " records %12s bytes %6.1f%%\n",
                  replay::record_kind_name(static_cast<int>(k)), b.records,
                  group_digits(b.bytes).c_str(),
                  p.file_bytes ? 100.0 * static_cast<double>(b.bytes) / p.file_bytes : 0.0);
    o << line;
  }
  return o.str();
}

}  // namespace

void setup_packet(CLI::App& app, PacketOptions& options) {
  auto* sub = app.add_subcommand("packet", "Work with replay packets (see bud replay)");
  sub->require_subcommand(1);
  sub->footer(
      "Examples:\n"
      "  bud packet inspect fail.bpk               # seeds, revision, symptom, checkpoints, sizes\n"
      "  bud packet inspect fail.bpk --json | jq .symptom\n"
      "Run `bud packet inspect --help` for its options; docs/packets.md.");
  auto* inspect = sub->add_subcommand(
      "inspect", "Show a packet's seeds, revision, workload, cycles, symptom, checkpoints, sizes");
  inspect->footer(
      "Examples:\n"
      "  bud run mlp --record mlp.bpk && bud packet inspect mlp.bpk\n"
      "  bud packet inspect fail.bpk --json | jq .symptom\n"
      "Exit status: 0 readable (an incomplete packet is flagged), 2 unreadable or bad usage.");
  inspect->add_option("packet", options.path, "Packet file (.bpk)")->required();
  inspect->add_flag("--json", options.json, "Print one JSON object");
}

int run_packet(const PacketOptions& options) {
  std::string error;
  auto p = replay::read_packet(options.path, error);
  if (!p) {
    return fail_command("packet", options.json, 2, error);
  }
  if (!p->complete)
    std::cerr << "bud packet: warning: " << replay::printable(p->name) << ": incomplete packet ("
              << replay::printable(p->incomplete) << ")\n";
  if (options.json)
    std::cout << packet_json(*p).dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  else
    std::cout << packet_text(*p);
  return 0;
}

}  // namespace bud::cli
