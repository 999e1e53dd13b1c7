#include "design/DesignMinimize.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "design/DeltaDebug.h"
#include "design/DesignReplay.h"
#include "design/ModelBuild.h"
#include "design/OpenedPacket.h"
#include "emu/core/Hash.h"

namespace bud::design {

namespace {

namespace fs = std::filesystem;

// One input the search may reduce: a file of the packet's bundle and how it is cut.
struct Input {
  enum class Kind : uint8_t { Stream, Memory, Firmware };
  Kind kind = Kind::Stream;
  std::string name;  // the stream's or region's name, or the script's file name
  std::string path;  // in the bundle
  uint32_t unit = 1;  // bytes of a beat or word
};

// The inputs of one candidate, and the run parameters it may lower.
struct Candidate {
  std::vector<std::string> bytes;  // per Input
  uint64_t quiet = 0, max_cycles = 0;
  uint64_t key() const {
    Hasher h;
    for (const auto& b : bytes) {
      h.add_u64(b.size());
      h.add({reinterpret_cast<const uint8_t*>(b.data()), b.size()});
    }
    h.add_u64(quiet).add_u64(max_cycles);
    return h.digest();
  }
};

struct Trial {
  bool accepted = false;
  FailureSignature signature;
  uint64_t good_cycles = 0, bad_cycles = 0;
  std::string reference_error;  // why the reference failed, when it did
};

std::string bundle_path(const std::string& dir, const std::string& file) {
  return fs::absolute(file).lexically_normal().lexically_relative(fs::path(dir)).generic_string();
}

const DesignBundle::File* find_file(const DesignBundle& b, const std::string& path) {
  for (const auto& f : b.files)
    if (f.path == path) return &f;
  return nullptr;
}

// The search: one private copy of the packet's files whose inputs are rewritten per candidate.
class Search {
 public:
  Search(const DesignSpec& bad, const std::optional<DesignSpec>& good, const BuiltModel& bad_model,
         const std::optional<BuiltModel>& good_model, std::string dir, const RecordedRun& run,
         const MinimizeOptions& options)
      : bad_(bad), good_(good), bad_model_(bad_model), good_model_(good_model),
        dir_(std::move(dir)), run_(run), options_(options) {}

  std::vector<Input> inputs;
  std::vector<std::string> written;  // what the copy holds now, per input
  std::vector<size_t> reference_inputs;  // the inputs the reference's argv names
  FailureSignature target;
  uint32_t tried = 0, kept = 0;
  bool exhausted = false;
  uint64_t simulated = 0;

  // Runs the candidate (once: results are remembered by content); nullopt when the budget is
  // spent.
  std::optional<Trial> evaluate(const Candidate& c) {
    const uint64_t key = c.key();
    if (auto it = seen_.find(key); it != seen_.end()) return it->second;
    if (tried >= options_.max_candidates) {
      exhausted = true;
      return std::nullopt;
    }
    ++tried;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (written[i] == c.bytes[i]) continue;
      std::ofstream out(fs::path(dir_) / inputs[i].path, std::ios::binary | std::ios::trunc);
      out << c.bytes[i];
      written[i] = c.bytes[i];
    }
    Trial t;
    // The reference sees its inputs through its argv ({input:NAME}): a candidate that changes
    // none of them has the output the reference already wrote for them.
    Hasher rh;
    for (size_t i : reference_inputs) rh.add_u64(c.bytes[i].size()).add(
        {reinterpret_cast<const uint8_t*>(c.bytes[i].data()), c.bytes[i].size()});
    const uint64_t ref_key = rh.digest();
    const auto known = expected_.find(ref_key);
    RunOptions ro;
    if (known != expected_.end()) ro.expected = known->second;
    ro.seed = run_.seed;
    ro.max_cycles = c.max_cycles;
    ro.quiet_cycles = c.quiet;
    ro.cache_dir = options_.cache_dir;
    ro.write_sinks = false;
    std::optional<RunOutcome> g;
    DesignError ge;
    if (good_) {
      ro.model = good_model_;
      g = run_design(*good_, ro, ge);  // runs the reference on the candidate's inputs
      t.signature.good = ending_of(g, ge);
      if (g) {
        t.good_cycles = g->cycles;
        if (g->expected) ro.expected = g->expected;
      }
    }
    ro.model = bad_model_;
    DesignError be;
    const auto b = run_design(bad_, ro, be);
    t.signature.bad = ending_of(b, be);
    if (b) t.bad_cycles = b->cycles;
    if (ro.expected) expected_.emplace(ref_key, *ro.expected);
    else if (b && b->expected) expected_.emplace(ref_key, *b->expected);
    if (g && b) t.signature.first_stage = first_differing_stage(*g, *b);
    simulated += t.good_cycles + t.bad_cycles;
    const bool reference_failed = t.signature.bad == Ending::ReferenceFailed ||
                                  t.signature.good == Ending::ReferenceFailed;
    if (reference_failed)
      t.reference_error = (t.signature.good == Ending::ReferenceFailed ? ge : be).to_string();
    t.accepted = !reference_failed && (tried == 1 || t.signature == target);
    if (t.accepted && tried > 1) ++kept;
    seen_.emplace(key, t);
    if (options_.progress) options_.progress(tried, kept);
    return t;
  }

  // The test the searches ask: does `c` fail the same way?
  std::optional<bool> accepts(const Candidate& c) {
    const auto t = evaluate(c);
    if (!t) return std::nullopt;
    return t->accepted;
  }

 private:
  const DesignSpec& bad_;
  const std::optional<DesignSpec>& good_;
  const BuiltModel& bad_model_;
  const std::optional<BuiltModel>& good_model_;
  std::string dir_;
  RecordedRun run_;
  const MinimizeOptions& options_;
  std::map<uint64_t, Trial> seen_;
  std::map<uint64_t, std::string> expected_;  // the reference's output by its inputs' hash
};

BuiltModel model_of(const DesignTarget& t) {
  BuiltModel m;
  m.revision = t.revision;
  m.library = t.library;
  m.dir = fs::path(t.library).parent_path().string();
  m.cached = t.cached;
  return m;
}

// The reducible inputs of `spec` (read from `dir`, a copy of `bundle`): each file once; a file
// two inputs share is left alone (cutting it for one would cut it for the other).
std::vector<Input> inputs_of(const DesignSpec& spec, const DesignBundle& bundle,
                             const std::string& dir) {
  std::vector<Input> in;
  for (const auto& s : spec.streams)
    if (s.direction == StreamPort::Direction::Source && !s.file.empty())
      in.push_back({Input::Kind::Stream, s.name, bundle_path(dir, s.file), s.data_bits / 8});
  for (const auto& m : spec.memories) {
    if (m.init.empty()) continue;
    uint32_t unit = 1;
    for (const auto& p : spec.axi4)
      if (p.memory == m.name) {
        unit = p.data_bits / 8;
        break;
      }
    in.push_back({Input::Kind::Memory, m.name, bundle_path(dir, m.init), unit});
  }
  if (spec.control && !spec.control->firmware.empty())
    in.push_back({Input::Kind::Firmware, fs::path(spec.control->firmware).filename().string(),
                  bundle_path(dir, spec.control->firmware), 1});
  std::vector<Input> out;
  for (const auto& i : in) {
    const auto n = std::count_if(in.begin(), in.end(), [&](const Input& x) { return x.path == i.path; });
    if (n == 1 && find_file(bundle, i.path)) out.push_back(i);
  }
  return out;
}

// A private copy of `bundle` the search rewrites: `<cache>/packets/.minimize-NAME-XXXXXX`.
std::optional<std::string> work_copy(const DesignBundle& bundle, const std::string& name,
                                     const std::string& cache_dir, std::string& error) {
  const fs::path root = fs::absolute(fs::path(cache_root(cache_dir)) / "packets");
  std::error_code ec;
  fs::create_directories(root, ec);
  std::string tmpl = (root / (".minimize-" + name + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) {
    error = "cannot create a directory in '" + root.string() + "' for the search";
    return std::nullopt;
  }
  for (const auto& f : bundle.files) {
    fs::create_directories((fs::path(tmpl) / f.path).parent_path(), ec);
    std::ofstream out(fs::path(tmpl) / f.path, std::ios::binary);
    out << f.bytes;
    if (!out) {
      error = "cannot write '" + (fs::path(tmpl) / f.path).string() + "'";
      return std::nullopt;
    }
  }
  return tmpl;
}

uint64_t units(const std::string& bytes, uint32_t unit) { return bytes.size() / unit; }

// `original` cut to `n` units (the whole of it, a partial last unit included, at its count).
std::string cut(const std::string& original, uint32_t unit, uint64_t n) {
  return n >= units(original, unit) ? original : original.substr(0, n * unit);
}

}  // namespace

const char* ending_name(Ending e) {
  switch (e) {
    case Ending::Pass: return "pass";
    case Ending::OutputMismatch: return "output-mismatch";
    case Ending::FirmwareMismatch: return "firmware-mismatch";
    case Ending::CycleLimit: return "cycle-limit";
    case Ending::FirmwareTimeout: return "firmware-timeout";
    case Ending::AxiError: return "axi-error";
    case Ending::ReferenceFailed: return "reference-failed";
    case Ending::Error: return "error";
  }
  return "?";
}

namespace {

Ending ending_of_error(const DesignError& error) {
  switch (error.exit_code) {
    case kExitReference: return Ending::ReferenceFailed;
    case kExitFirmwareTimeout: return Ending::FirmwareTimeout;
    case kExitAxiError: return Ending::AxiError;
    default: return Ending::Error;
  }
}

}  // namespace

Ending ending_of(const std::optional<RunOutcome>& r, const DesignError& error) {
  if (!r) return ending_of_error(error);
  // A run that ended in an error of the design's own making (a firmware timeout, an AXI error).
  if (r->error) return ending_of_error(*r->error);
  if (r->cycle_limit) return Ending::CycleLimit;
  if (!r->checked || r->passed) return Ending::Pass;
  // A firmware `expect` fails before any output is compared: no mismatch offset.
  return r->first_mismatch ? Ending::OutputMismatch : Ending::FirmwareMismatch;
}

std::optional<size_t> first_differing_stage(const RunOutcome& good, const RunOutcome& bad) {
  const size_t n = std::min(good.stages.size(), bad.stages.size());
  for (size_t i = 0; i < n; ++i)
    if (good.stages[i].txns != bad.stages[i].txns || good.stages[i].digest != bad.stages[i].digest)
      return i;
  if (good.stages.size() != bad.stages.size()) return n;
  return std::nullopt;
}

std::vector<size_t> firmware_command_lines(const std::string& text) {
  std::vector<size_t> out;
  size_t line = 0, at = 0;
  while (at <= text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + at, end - at);
    l = l.substr(0, std::min(l.find('#'), l.size()));
    if (l.find_first_not_of(" \t\r") != std::string_view::npos) out.push_back(line);
    if (end == text.size()) break;
    at = end + 1;
    ++line;
  }
  return out;
}

std::string drop_lines(const std::string& text, const std::vector<size_t>& drop) {
  std::string out;
  size_t line = 0, at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    if (!std::binary_search(drop.begin(), drop.end(), line))
      out.append(text, at, end - at + (last ? 0 : 1));
    at = end + 1;
    ++line;
  }
  return out;
}

MinimizeResult minimize_design_packet(const replay::Packet& packet, const std::string& output,
                                      const MinimizeOptions& options) {
  MinimizeResult r;
  r.packet = packet.name;
  r.output = output;
  const auto fail = [&](int code, std::string message) {
    r.exit_code = code;
    r.message = std::move(message);
    return r;
  };
  // 1. The packet must reproduce: what is minimized is the failure it recorded.
  const Reproduction rep =
      reproduce(packet, options.cache_dir, options.allow_revision_mismatch, "minimize");
  r.simulated_cycles += rep.replay.end_cycle;
  if (!rep.fails) return fail(rep.passes ? 1 : 125, rep.message);
  const OpenedPacket* opened = &*rep.opened;
  r.design = opened->design;
  r.overrides = opened->overrides_text();
  std::string why;

  // 2. A private copy to rewrite, the bad design read from it, the good side on its inputs.
  const auto dir = work_copy(opened->bundle, opened->design, options.cache_dir, why);
  if (!dir) return fail(125, packet.name + ": " + why);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{*dir};
  auto bad_spec = spec_in(opened->bundle, *dir, opened->target_options({}), why);
  if (!bad_spec) return fail(125, packet.name + ": " + why);
  const bool no_good = !options.good.packet && !options.good.overrides &&
                       opened->run.defines.empty() && opened->run.params.empty();
  DesignError derr;
  if (!no_good) {
    r.good = good_side(*opened, *bad_spec, options.good, derr);
    if (!r.good) return fail(derr.exit_code, derr.to_string());
  }
  const TargetOptions to = opened->target_options(options.cache_dir);
  const auto bad = prepare_spec(*bad_spec, to, derr);
  if (!bad) return fail(125, packet.name + ": the recorded design: " + derr.to_string());
  std::optional<DesignSpec> good_spec;
  std::optional<BuiltModel> good_model;
  if (r.good) {
    const auto g = prepare_spec(r.good->spec, to, derr);
    if (!g)
      return fail(derr.exit_code, "the good side (" + r.good->description + "): " + derr.to_string());
    good_spec = r.good->spec;
    good_model = model_of(*g);
  }
  const BuiltModel bad_model = model_of(*bad);
  Search search(*bad_spec, good_spec, bad_model, good_model, *dir, opened->run, options);
  search.inputs = inputs_of(*bad_spec, opened->bundle, *dir);
  if (bad_spec->check)
    for (size_t i = 0; i < search.inputs.size(); ++i)
      for (const auto& a : bad_spec->check->reference)
        if (search.inputs[i].kind != Input::Kind::Firmware &&
            a.find("{input:" + search.inputs[i].name + "}") != std::string::npos) {
          search.reference_inputs.push_back(i);
          break;
        }
  Candidate best;
  for (const auto& i : search.inputs) best.bytes.push_back(find_file(opened->bundle, i.path)->bytes);
  search.written = best.bytes;
  best.quiet = opened->run.quiet_cycles;
  best.max_cycles = opened->run.max_cycles;

  // 3. The whole packet's signature: what every candidate must keep.
  const auto first = search.evaluate(best);
  if (!first) return fail(1, "no candidate may be run (--max-candidates 0)");
  if (first->signature.bad == Ending::ReferenceFailed ||
      first->signature.good == Ending::ReferenceFailed)
    return fail(kExitReference, packet.name +
                                    ": the design's [check].reference fails on the packet's own "
                                    "inputs in its copy " + *dir + " (a packet recorded before "
                                    "bud embedded the reference's files lacks them): " +
                                    first->reference_error);
  if (first->signature.bad == Ending::Pass)
    return fail(1, packet.name + ": the recorded design passes here: nothing to minimize");
  search.target = first->signature;
  Trial best_trial = *first;
  const Trial original = *first;

  // 4. The reductions, repeated while one of them still removes something.
  const auto try_set = [&](const Candidate& c) {
    const auto t = search.evaluate(c);
    if (t && t->accepted) best_trial = *t;
    return t ? std::optional<bool>(t->accepted) : std::nullopt;
  };
  for (int round = 0; round < 3 && !search.exhausted; ++round) {
    const uint64_t before = best.key();
    for (size_t i = 0; i < search.inputs.size() && !search.exhausted; ++i) {
      const Input& in = search.inputs[i];
      const std::string current = best.bytes[i];
      if (in.kind == Input::Kind::Firmware) {
        const auto lines = firmware_command_lines(current);
        const auto kept = ddmin(lines.size(), [&](const std::vector<size_t>& keep) {
          std::vector<size_t> drop;
          for (size_t k = 0, j = 0; k < lines.size(); ++k) {
            if (j < keep.size() && keep[j] == k) ++j;
            else drop.push_back(lines[k]);
          }
          Candidate c = best;
          c.bytes[i] = drop_lines(current, drop);
          return try_set(c);
        });
        std::vector<size_t> drop;
        for (size_t k = 0, j = 0; k < lines.size(); ++k) {
          if (j < kept.kept.size() && kept.kept[j] == k) ++j;
          else drop.push_back(lines[k]);
        }
        best.bytes[i] = drop_lines(current, drop);
        continue;
      }
      const auto n = shortest_passing(0, units(current, in.unit), [&](uint64_t k) {
        Candidate c = best;
        c.bytes[i] = cut(current, in.unit, k);
        return try_set(c);
      });
      best.bytes[i] = cut(current, in.unit, n.length);
    }
    // A shorter quiet period needs a good run to show the design still finishes its work.
    if (good_spec && !search.exhausted) {
      const auto q = shortest_passing(1, best.quiet, [&](uint64_t k) {
        Candidate c = best;
        c.quiet = k;
        return try_set(c);
      });
      best.quiet = q.length;
    }
    if (best.key() == before) break;
  }
  // 5. The cycle limit: just past what the failure needs.
  if (!search.exhausted) {
    if (search.target.bad == Ending::CycleLimit) {
      const auto m = shortest_passing(1, best.max_cycles, [&](uint64_t k) {
        Candidate c = best;
        c.max_cycles = k;
        return try_set(c);
      });
      best.max_cycles = m.length;
    } else if (best_trial.bad_cycles) {
      Candidate c = best;
      c.max_cycles = std::min(best.max_cycles,
                              std::max(best_trial.good_cycles, best_trial.bad_cycles) + best.quiet);
      if (try_set(c).value_or(false)) best.max_cycles = c.max_cycles;
    }
  }
  // The best candidate's own trial (each accepted search step ends on it; re-read for safety).
  if (const auto t = search.evaluate(best); t && t->accepted) best_trial = *t;
  r.candidates = search.tried;
  r.kept = search.kept;
  r.budget_exhausted = search.exhausted;
  r.simulated_cycles += search.simulated;
  r.signature = search.target;
  if (r.signature.first_stage && *r.signature.first_stage < bad_spec->stages.size())
    r.first_stage = bad_spec->stages[*r.signature.first_stage].name;
  for (size_t i = 0; i < search.inputs.size(); ++i) {
    const Input& in = search.inputs[i];
    const std::string& was = find_file(opened->bundle, in.path)->bytes;
    if (in.kind == Input::Kind::Firmware) {
      r.reductions.push_back({"firmware " + in.name, "commands", firmware_command_lines(was).size(),
                              firmware_command_lines(best.bytes[i]).size()});
    } else {
      r.reductions.push_back({(in.kind == Input::Kind::Stream ? "stream " : "memory ") + in.name,
                              in.kind == Input::Kind::Stream ? "beats" : "words",
                              units(was, in.unit), units(best.bytes[i], in.unit)});
    }
  }
  r.reductions.push_back({"quiet cycles", "cycles", opened->run.quiet_cycles, best.quiet});
  r.reductions.push_back({"max cycles", "cycles", opened->run.max_cycles, best.max_cycles});
  r.reductions.push_back({"run cycles", "cycles", original.bad_cycles, best_trial.bad_cycles});

  // 6. The reduced files as a packet of their own, recorded from a fresh copy and replayed.
  DesignBundle reduced = opened->bundle;
  for (size_t i = 0; i < search.inputs.size(); ++i)
    for (auto& f : reduced.files)
      if (f.path == search.inputs[i].path) f.bytes = best.bytes[i];
  const auto copy = materialise(reduced, opened->design, options.cache_dir, why);
  if (!copy) return fail(125, why);
  auto spec = spec_in(reduced, *copy, opened->target_options({}), why);
  if (!spec) return fail(125, packet.name + ": " + why);
  RecordedRun run = opened->run;
  run.quiet_cycles = best.quiet;
  run.max_cycles = best.max_cycles;
  RunOptions rec;
  rec.seed = run.seed;
  rec.max_cycles = run.max_cycles;
  rec.quiet_cycles = run.quiet_cycles;
  rec.cache_dir = options.cache_dir;
  rec.write_sinks = false;
  rec.model = bad_model;
  const auto outcome = run_design(*spec, rec, derr);
  if (!outcome) return fail(1, "the minimized run could not be made: " + derr.to_string());
  r.simulated_cycles += outcome->cycles;
  r.symptom = outcome->message;
  r.written = write_design_packet(output, reduced, *spec, run, *outcome, why);
  if (!r.written) return fail(2, why);
  const auto written = replay::read_packet(output, why);
  if (!written) return fail(1, why);
  const auto check = replay_design_packet(*written, {}, options.cache_dir);
  r.simulated_cycles += check.end_cycle;
  r.replay = check.verdict;
  r.replay_message = check.message;
  if (check.verdict != replay::Verdict::Reproduced)
    return fail(1, output + " does not reproduce (replay: " + replay::verdict_name(check.verdict) +
                       ", " + check.message + ")");
  r.exit_code = 0;
  r.message = "minimized: " + r.symptom;
  return r;
}

}  // namespace bud::design
