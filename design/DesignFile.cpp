#include "design/DesignFile.h"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace bud::design {

std::string Where::to_string() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string DesignError::to_string() const {
  const std::string at = where.to_string();
  return at.empty() ? message : at + ": " + message;
}

namespace {

namespace fs = std::filesystem;

// Reads one design file's tables, remembering the first error.
class Reader {
 public:
  Reader(std::string file, std::string dir, std::optional<Relocation> relocation)
      : file_(std::move(file)), dir_(std::move(dir)), relocation_(std::move(relocation)) {}

  bool failed() const { return error_.has_value(); }
  const DesignError& error() const { return *error_; }

  Where at(const toml::node& n) const {
    const auto& b = n.source().begin;
    return Where{file_, static_cast<uint32_t>(b.line), static_cast<uint32_t>(b.column)};
  }
  void fail(const Where& w, const std::string& message) {
    if (!error_) error_ = DesignError{w, message, kExitBadDesignFile};
  }

  // Every key of `t` must be one of `allowed` (a typo is an error, not a silent default).
  void keys(const toml::table& t, const std::string& what, std::initializer_list<const char*> allowed) {
    for (const auto& [k, v] : t) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || k.str() == a;
      if (ok) continue;
      std::string known;
      for (const char* a : allowed) known += std::string(known.empty() ? "" : ", ") + a;
      fail(at(v), "unknown key '" + std::string(k.str()) + "' in " + what + " (keys: " + known + ")");
    }
  }

  std::string str(const toml::table& t, const char* key, const std::string& what, bool required,
                  const std::string& dflt = {}) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(at(t), what + " needs '" + key + "'");
      return dflt;
    }
    if (auto v = n->value<std::string>()) {
      if (required && v->empty()) fail(at(*n), what + "." + key + " must not be empty");
      return *v;
    }
    fail(at(*n), what + "." + key + " must be a string");
    return dflt;
  }

  uint64_t uint(const toml::table& t, const char* key, const std::string& what, bool required,
                uint64_t dflt, uint64_t lo, uint64_t hi) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(at(t), what + " needs '" + key + "'");
      return dflt;
    }
    auto v = n->value<int64_t>();
    if (!n->is_integer() || !v) {
      fail(at(*n), what + "." + key + " must be an integer");
      return dflt;
    }
    if (*v < 0 || static_cast<uint64_t>(*v) < lo || static_cast<uint64_t>(*v) > hi) {
      fail(at(*n), what + "." + key + " = " + std::to_string(*v) + " is out of range [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return dflt;
    }
    return static_cast<uint64_t>(*v);
  }

  double real(const toml::table& t, const char* key, const std::string& what, double dflt,
              double lo, double hi) {
    const toml::node* n = t.get(key);
    if (!n) return dflt;
    auto v = n->value<double>();
    if (!v || !(n->is_floating_point() || n->is_integer())) {
      fail(at(*n), what + "." + key + " must be a number");
      return dflt;
    }
    if (!(*v >= lo && *v <= hi)) {
      std::ostringstream s;
      s << what << "." << key << " = " << *v << " is out of range [" << lo << ", " << hi << "]";
      fail(at(*n), s.str());
      return dflt;
    }
    return *v;
  }

  std::vector<std::string> strings(const toml::table& t, const char* key, const std::string& what,
                                   bool required) {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(at(t), what + " needs '" + key + "'");
      return out;
    }
    const toml::array* a = n->as_array();
    if (!a) {
      fail(at(*n), what + "." + key + " must be an array of strings");
      return out;
    }
    for (const auto& e : *a) {
      auto v = e.value<std::string>();
      if (!v || !e.is_string()) {
        fail(at(e), what + "." + key + " must hold strings only");
        return out;
      }
      out.push_back(*v);
    }
    if (required && out.empty()) fail(at(*n), what + "." + key + " must not be empty");
    return out;
  }

  // A string-valued table (defines, parameters): integers and booleans are written as text.
  std::map<std::string, std::string> string_map(const toml::table& t, const char* key,
                                                const std::string& what) {
    std::map<std::string, std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::table* m = n->as_table();
    if (!m) {
      fail(at(*n), what + "." + key + " must be a table (NAME = value)");
      return out;
    }
    for (const auto& [k, v] : *m) {
      if (auto s = v.value_exact<std::string>())
        out[std::string(k.str())] = *s;
      else if (auto i = v.value_exact<int64_t>())
        out[std::string(k.str())] = std::to_string(*i);
      else if (auto b = v.value_exact<bool>())
        out[std::string(k.str())] = *b ? "1" : "0";
      else
        fail(at(v), what + "." + key + "." + std::string(k.str()) +
                        " must be a string, an integer or a boolean");
    }
    return out;
  }

  // A path relative to the design file's directory; `must_exist` checks it is readable.
  std::string path(const std::string& p, const toml::node& where, const std::string& what,
                   bool must_exist) {
    if (p.empty()) return p;
    fs::path full = fs::path(p).is_absolute() ? fs::path(p).lexically_normal() : fs::path(dir_) / p;
    if (relocation_ && full.is_absolute()) {
      const fs::path rel = full.lexically_relative(relocation_->from);
      if (!rel.empty() && *rel.begin() != "..") full = fs::path(relocation_->to) / rel;
    }
    if (must_exist && !std::ifstream(full)) fail(at(where), what + ": cannot read '" + full.string() + "'");
    return full.lexically_normal().string();
  }

  // The tables of an array of tables ([[name]]), or an error for anything else.
  std::vector<const toml::table*> tables(const toml::table& root, const char* key) {
    std::vector<const toml::table*> out;
    const toml::node* n = root.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) {
      fail(at(*n), std::string("'") + key + "' must be an array of tables ([[" + key + "]])");
      return out;
    }
    for (const auto& e : *a) {
      if (!e.as_table()) {
        fail(at(e), std::string("each '") + key + "' must be a table ([[" + key + "]])");
        return out;
      }
      out.push_back(e.as_table());
    }
    return out;
  }

  const toml::table* table(const toml::table& root, const char* key, bool required) {
    const toml::node* n = root.get(key);
    if (!n) {
      if (required) fail(Where{file_, 1, 1}, std::string("the design file needs a [") + key + "] table");
      return nullptr;
    }
    if (!n->as_table()) fail(at(*n), std::string("'") + key + "' must be a table ([" + key + "])");
    return n->as_table();
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_, dir_;
  std::optional<Relocation> relocation_;
  std::optional<DesignError> error_;
};

// A name used as an identifier in messages, commands and JSON: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

void read_design(Reader& r, const toml::table& root, DesignSpec& d) {
  r.keys(root, "the design file",
         {"design", "clock", "reset", "memory", "axi4", "control", "stream", "counter", "stage",
          "check"});
  const toml::table* t = r.table(root, "design", true);
  if (!t) return;
  r.keys(*t, "[design]",
         {"name", "top", "sources", "include_dirs", "defines", "parameters"});
  d.top = r.str(*t, "top", "[design]", true);
  d.top_where = t->get("top") ? r.at(*t->get("top")) : r.at(*t);
  d.name = r.str(*t, "name", "[design]", false, d.top);
  if (!r.failed() && !is_identifier(d.name))
    r.fail(t->get("name") ? r.at(*t->get("name")) : r.at(*t),
           "[design].name '" + d.name + "' must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  const auto sources = r.strings(*t, "sources", "[design]", true);
  for (size_t i = 0; i < sources.size(); ++i)
    d.sources.push_back(r.path(sources[i], *t->get("sources")->as_array()->get(i),
                               "[design].sources[" + std::to_string(i) + "]", true));
  for (const auto& inc : r.strings(*t, "include_dirs", "[design]", false))
    d.include_dirs.push_back(r.path(inc, *t->get("include_dirs"), "[design].include_dirs", false));
  d.defines = r.string_map(*t, "defines", "[design]");
  d.parameters = r.string_map(*t, "parameters", "[design]");

  if (const toml::table* c = r.table(root, "clock", true)) {
    r.keys(*c, "[clock]", {"name"});
    d.clock.name = r.str(*c, "name", "[clock]", true);
    d.clock.where = d.clock_where = c->get("name") ? r.at(*c->get("name")) : r.at(*c);
  }
  if (const toml::table* c = r.table(root, "reset", false)) {
    r.keys(*c, "[reset]", {"name", "active", "cycles"});
    d.has_reset = true;
    d.reset.name = r.str(*c, "name", "[reset]", true);
    d.reset.where = c->get("name") ? r.at(*c->get("name")) : r.at(*c);
    const std::string active = r.str(*c, "active", "[reset]", false, "high");
    if (active != "high" && active != "low")
      r.fail(r.at(*c->get("active")), "[reset].active must be \"high\" or \"low\" (got \"" + active + "\")");
    d.reset.active_low = active == "low";
    d.reset.cycles = static_cast<uint32_t>(r.uint(*c, "cycles", "[reset]", false, 4, 1, 1'000'000));
  }
}

void read_ports(Reader& r, const toml::table& root, DesignSpec& d) {
  std::set<std::string> names;  // one namespace for memories, ports and streams
  auto unique = [&](const std::string& name, const toml::table& t, const std::string& what) {
    if (!is_identifier(name))
      r.fail(r.at(t.get("name") ? *t.get("name") : t), what + ".name '" + name + "' must be an identifier");
    else if (!names.insert(name).second)
      r.fail(r.at(t.get("name") ? *t.get("name") : t), what + ".name '" + name + "' is already used");
  };
  for (const toml::table* t : r.tables(root, "memory")) {
    r.keys(*t, "[[memory]]", {"name", "base", "size", "init"});
    MemoryRegion m;
    m.where = r.at(*t);
    m.name = r.str(*t, "name", "[[memory]]", true);
    unique(m.name, *t, "[[memory]]");
    m.base = r.uint(*t, "base", "[[memory]] " + m.name, false, 0, 0, (1ull << 48) - 1);
    m.size = r.uint(*t, "size", "[[memory]] " + m.name, true, 0, 1, 1ull << 32);
    if (const toml::node* n = t->get("init"))
      m.init = r.path(r.str(*t, "init", "[[memory]] " + m.name, false), *n,
                      "[[memory]] " + m.name + ".init", true);
    d.memories.push_back(m);
  }
  for (const toml::table* t : r.tables(root, "axi4")) {
    r.keys(*t, "[[axi4]]", {"name", "prefix", "data_bits", "addr_bits", "id_bits", "memory", "latency",
                            "jitter", "bytes_per_cycle", "max_outstanding", "reorder"});
    Axi4Port p;
    p.where = r.at(*t);
    p.name = r.str(*t, "name", "[[axi4]]", true);
    unique(p.name, *t, "[[axi4]]");
    const std::string what = "[[axi4]] " + p.name;
    p.prefix = r.str(*t, "prefix", what, true);
    p.data_bits = static_cast<uint32_t>(r.uint(*t, "data_bits", what, false, 64, 8, 512));
    if ((p.data_bits & (p.data_bits - 1)) != 0)
      r.fail(r.at(*t->get("data_bits")), what + ".data_bits must be a power of two (8..512)");
    p.addr_bits = static_cast<uint32_t>(r.uint(*t, "addr_bits", what, false, 32, 12, 64));
    p.id_bits = static_cast<uint32_t>(r.uint(*t, "id_bits", what, false, 0, 0, 16));
    auto opt = [&](const char* key, uint64_t lo, uint64_t hi) -> std::optional<uint32_t> {
      if (!t->get(key)) return std::nullopt;
      return static_cast<uint32_t>(r.uint(*t, key, what, false, lo, lo, hi));
    };
    p.latency = opt("latency", 1, 1'000'000);
    p.jitter = opt("jitter", 0, 1'000'000);
    p.bytes_per_cycle = opt("bytes_per_cycle", 1, 4096);
    p.max_outstanding = opt("max_outstanding", 1, 64);
    if (const toml::node* n = t->get("reorder")) {
      if (auto b = n->value_exact<bool>()) p.reorder = *b;
      else r.fail(r.at(*n), what + ".reorder must be true or false");
    }
    p.memory = r.str(*t, "memory", what, false, d.memories.empty() ? "" : d.memories[0].name);
    bool found = false;
    for (const auto& m : d.memories) found = found || m.name == p.memory;
    if (!found && !r.failed())
      r.fail(t->get("memory") ? r.at(*t->get("memory")) : p.where,
             what + " reaches memory '" + p.memory + "', which no [[memory]] declares");
    d.axi4.push_back(p);
  }
  if (const toml::table* t = r.table(root, "control", false)) {
    r.keys(*t, "[control]", {"prefix", "addr_bits", "data_bits", "firmware", "interrupt"});
    ControlPort c;
    c.where = r.at(*t);
    c.prefix = r.str(*t, "prefix", "[control]", true);
    c.addr_bits = static_cast<uint32_t>(r.uint(*t, "addr_bits", "[control]", false, 12, 2, 32));
    c.data_bits = static_cast<uint32_t>(r.uint(*t, "data_bits", "[control]", false, 32, 32, 64));
    if (c.data_bits != 32 && c.data_bits != 64)
      r.fail(r.at(*t->get("data_bits")), "[control].data_bits must be 32 or 64");
    if (const toml::node* n = t->get("firmware"))
      c.firmware = r.path(r.str(*t, "firmware", "[control]", true), *n, "[control].firmware", true);
    else
      r.fail(c.where, "[control] needs 'firmware' (the script that drives it; docs/designs.md)");
    c.interrupt = r.str(*t, "interrupt", "[control]", false);
    d.control = c;
  }
  for (const toml::table* t : r.tables(root, "stream")) {
    r.keys(*t, "[[stream]]", {"name", "prefix", "direction", "data_bits", "file", "rate"});
    StreamPort s;
    s.where = r.at(*t);
    s.name = r.str(*t, "name", "[[stream]]", true);
    unique(s.name, *t, "[[stream]]");
    const std::string what = "[[stream]] " + s.name;
    s.prefix = r.str(*t, "prefix", what, true);
    const std::string dir = r.str(*t, "direction", what, true);
    if (dir != "source" && dir != "sink" && !r.failed())
      r.fail(r.at(*t->get("direction")), what + ".direction must be \"source\" or \"sink\" (got \"" + dir + "\")");
    s.direction = dir == "sink" ? StreamPort::Direction::Sink : StreamPort::Direction::Source;
    s.data_bits = static_cast<uint32_t>(r.uint(*t, "data_bits", what, false, 8, 8, 512));
    if (s.data_bits % 8 != 0)
      r.fail(r.at(*t->get("data_bits")), what + ".data_bits must be a multiple of 8");
    const bool source = s.direction == StreamPort::Direction::Source;
    if (const toml::node* n = t->get("file"))
      s.file = r.path(r.str(*t, "file", what, true), *n, what + ".file", source);
    else if (source)
      r.fail(s.where, what + " needs 'file' (the bytes the source sends)");
    s.rate = r.real(*t, "rate", what, 1.0, 0.01, 1.0);
    d.streams.push_back(s);
  }
}

void read_observation(Reader& r, const toml::table& root, DesignSpec& d) {
  std::set<std::string> names;
  for (const toml::table* t : r.tables(root, "counter")) {
    r.keys(*t, "[[counter]]", {"name", "signal", "when"});
    CounterSpec c;
    c.where = r.at(*t);
    c.name = r.str(*t, "name", "[[counter]]", true);
    if (!is_identifier(c.name) || !names.insert(c.name).second)
      r.fail(r.at(t->get("name") ? *t->get("name") : *t),
             "[[counter]].name '" + c.name + "' must be a new identifier");
    const std::string what = "[[counter]] " + c.name;
    c.signal = r.str(*t, "signal", what, false);
    c.when = r.str(*t, "when", what, false);
    if (c.signal.empty() == c.when.empty())
      r.fail(c.where, what + " needs exactly one of 'signal' (read it) and 'when' (count cycles)");
    if (const toml::node* n = t->get(c.when.empty() ? "signal" : "when")) c.expr_where = r.at(*n);
    d.counters.push_back(c);
  }
  std::set<std::string> stage_names;
  for (const toml::table* t : r.tables(root, "stage")) {
    r.keys(*t, "[[stage]]", {"name", "valid", "ready", "payload", "stream", "axi4", "channel"});
    StageSpec s;
    s.where = r.at(*t);
    s.name = r.str(*t, "name", "[[stage]]", true);
    if (!is_identifier(s.name) || !stage_names.insert(s.name).second)
      r.fail(r.at(t->get("name") ? *t->get("name") : *t),
             "[[stage]].name '" + s.name + "' must be a new identifier");
    const std::string what = "[[stage]] " + s.name;
    // `stream = "in"`: the stream's own handshake and data.
    if (const toml::node* n = t->get("stream")) {
      const std::string st = r.str(*t, "stream", what, true);
      const StreamPort* sp = nullptr;
      for (const auto& x : d.streams)
        if (x.name == st) sp = &x;
      if (!sp) {
        r.fail(r.at(*n), what + ".stream '" + st + "' names no [[stream]]");
      } else {
        s.valid = sp->prefix + "tvalid";
        s.ready = sp->prefix + "tready";
        s.payload = {sp->prefix + "tdata"};
      }
    } else if (const toml::node* an = t->get("axi4")) {
      // `axi4 = "mem", channel = "w"`: one channel's handshake of an AXI4 master port, its
      // payload the channel's address/data fields (ids too).
      s.axi4 = r.str(*t, "axi4", what, true);
      s.channel = r.str(*t, "channel", what, true);
      const Axi4Port* ap = nullptr;
      for (const auto& x : d.axi4)
        if (x.name == s.axi4) ap = &x;
      static const std::map<std::string, std::vector<std::string>> fields = {
          {"ar", {"araddr", "arlen", "arsize", "arburst"}},
          {"aw", {"awaddr", "awlen", "awsize", "awburst"}},
          {"r", {"rdata", "rresp", "rlast"}},
          {"w", {"wdata", "wstrb", "wlast"}},
          {"b", {"bresp"}}};
      const auto f = fields.find(s.channel);
      if (!ap && !r.failed()) {
        r.fail(r.at(*an), what + ".axi4 '" + s.axi4 + "' names no [[axi4]] port");
      } else if (f == fields.end() && !r.failed()) {
        r.fail(t->get("channel") ? r.at(*t->get("channel")) : s.where,
               what + ".channel must be \"ar\", \"r\", \"aw\", \"w\" or \"b\" (got \"" + s.channel + "\")");
      } else if (ap) {
        s.valid = ap->prefix + s.channel + "valid";
        s.ready = ap->prefix + s.channel + "ready";
        for (const auto& x : f->second) s.payload.push_back(ap->prefix + x);
        if (ap->id_bits > 0 && s.channel != "w") s.payload.push_back(ap->prefix + s.channel + "id");  // AXI4 W has no id
      }
      for (const char* k : {"valid", "ready", "payload", "stream"})
        if (t->get(k) && !r.failed()) r.fail(r.at(*t->get(k)), what + ": '" + k + "' does not go with 'axi4'");
    } else {
      s.valid = r.str(*t, "valid", what, true);
      s.ready = r.str(*t, "ready", what, false);
      s.payload = r.strings(*t, "payload", what, false);
    }
    d.stages.push_back(s);
  }
  if (const toml::table* t = r.table(root, "check", false)) {
    r.keys(*t, "[check]", {"sink", "memory", "offset", "length", "reference"});
    OutputCheck c;
    c.where = r.at(*t);
    c.sink = r.str(*t, "sink", "[check]", false);
    c.memory = r.str(*t, "memory", "[check]", false);
    if (c.sink.empty() == c.memory.empty())
      r.fail(c.where, "[check] needs exactly one of 'sink' (a sink stream) and 'memory' (a region)");
    if (!c.sink.empty()) {
      bool ok = false;
      for (const auto& s : d.streams) ok = ok || (s.name == c.sink && s.direction == StreamPort::Direction::Sink);
      if (!ok && !r.failed()) r.fail(r.at(*t->get("sink")), "[check].sink '" + c.sink + "' names no sink [[stream]]");
    }
    if (!c.memory.empty()) {
      const MemoryRegion* m = nullptr;
      for (const auto& x : d.memories)
        if (x.name == c.memory) m = &x;
      if (!m && !r.failed()) {
        r.fail(r.at(*t->get("memory")), "[check].memory '" + c.memory + "' names no [[memory]]");
      } else if (m) {
        c.offset = r.uint(*t, "offset", "[check]", false, 0, 0, m->size - 1);
        c.length = r.uint(*t, "length", "[check]", true, 0, 1, m->size - c.offset);
      }
    }
    c.reference = r.strings(*t, "reference", "[check]", true);
    bool expected = false;
    for (const auto& a : c.reference) expected = expected || a.find("{expected}") != std::string::npos;
    if (!expected && !r.failed())
      r.fail(r.at(*t->get("reference")),
             "[check].reference must pass {expected}: the file the command writes the expected bytes to");
    d.check = c;
  }
}

}  // namespace

ParseResult parse_design_text(const std::string& text, const std::string& path,
                              const std::optional<Relocation>& relocation) {
  ParseResult out;
  DesignSpec d;
  d.file = path;
  d.dir = fs::path(path).parent_path().string();
  if (d.dir.empty()) d.dir = ".";
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    out.error = DesignError{Where{path, static_cast<uint32_t>(b.line), static_cast<uint32_t>(b.column)},
                            "not valid TOML: " + std::string(e.description()), kExitBadDesignFile};
    return out;
  }
  Reader r(path, d.dir, relocation);
  read_design(r, root, d);
  if (!r.failed()) read_ports(r, root, d);
  if (!r.failed()) read_observation(r, root, d);
  if (r.failed()) {
    out.error = r.error();
    return out;
  }
  out.spec = std::move(d);
  return out;
}

ParseResult parse_design_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult out;
    out.error = DesignError{Where{path, 0, 0}, "cannot open the design file", kExitBadDesignFile};
    return out;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_design_text(ss.str(), path);
}

}  // namespace bud::design
