#include "design/RtlSignals.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tools/process/Subprocess.h"

namespace bud::design {

namespace {

namespace fs = std::filesystem;

std::string prop(xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  if (!v) return {};
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}
bool is(xmlNode* n, const char* name) {
  return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}
template <class F>
void children(xmlNode* n, F f) {
  for (xmlNode* c = n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE) f(c);
}

// A Verilator constant as it prints it ("32'sh1f", "32'h3"), or nullopt.
std::optional<int64_t> const_value(const std::string& s) {
  const auto h = s.find('h');
  if (h == std::string::npos) return std::nullopt;
  try {
    return std::stoll(s.substr(h + 1), nullptr, 16);
  } catch (...) {
    return std::nullopt;
  }
}

struct Dtype {
  std::string kind;
  uint32_t width = 0, elements = 1;
  std::string sub;  // sub_dtype_id
};

}  // namespace

std::optional<RtlSignals> parse_verilator_xml(const std::string& xml, const std::string& top,
                                              std::string& error) {
  xmlDoc* doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "verilator.xml", nullptr,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) {
    error = "cannot read Verilator's XML output";
    return std::nullopt;
  }
  std::map<std::string, Dtype> dtypes;
  std::map<std::string, std::vector<RtlSignal>> module_vars;  // var widths filled later
  std::map<std::string, std::vector<std::string>> module_var_dtypes;
  xmlNode* cells = nullptr;
  std::function<void(xmlNode*)> walk = [&](xmlNode* n) {
    children(n, [&](xmlNode* c) {
      if (is(c, "cells") && !cells) cells = c;
      if (is(c, "module")) {
        const std::string m = prop(c, "name");
        children(c, [&](xmlNode* v) {
          if (!is(v, "var")) return;
          RtlSignal s;
          s.name = prop(v, "name");
          const std::string dir = prop(v, "dir");
          s.dir = dir == "input" ? RtlSignal::Dir::Input
                  : dir == "output" ? RtlSignal::Dir::Output
                                    : RtlSignal::Dir::Internal;
          if (dir == "inout") s.dir = RtlSignal::Dir::Input;
          module_vars[m].push_back(s);
          module_var_dtypes[m].push_back(prop(v, "dtype_id"));
        });
        return;
      }
      if (c->type == XML_ELEMENT_NODE && prop(c, "id").size() && xmlStrstr(c->name, BAD_CAST "dtype")) {
        Dtype d;
        d.kind = reinterpret_cast<const char*>(c->name);
        d.sub = prop(c, "sub_dtype_id");
        if (d.kind == "basicdtype") {
          const std::string l = prop(c, "left"), r = prop(c, "right");
          d.width = l.empty() ? 1 : static_cast<uint32_t>(std::abs(std::stoi(l) - std::stoi(r)) + 1);
        } else if (d.kind == "unpackarraydtype") {
          children(c, [&](xmlNode* rg) {
            if (!is(rg, "range")) return;
            std::vector<int64_t> b;
            children(rg, [&](xmlNode* k) {
              if (is(k, "const"))
                if (auto v = const_value(prop(k, "name"))) b.push_back(*v);
            });
            if (b.size() == 2) d.elements = static_cast<uint32_t>(std::abs(b[0] - b[1]) + 1);
          });
        }
        dtypes[prop(c, "id")] = d;
      }
      walk(c);
    });
  };
  walk(xmlDocGetRootElement(doc));
  // Width of a dtype, through refs/enums (0 for what bud does not size).
  std::function<std::pair<uint32_t, uint32_t>(const std::string&, int)> size_of =
      [&](const std::string& id, int depth) -> std::pair<uint32_t, uint32_t> {
    auto it = dtypes.find(id);
    if (it == dtypes.end() || depth > 16) return {0, 1};
    const Dtype& d = it->second;
    if (d.kind == "basicdtype") return {d.width, 1};
    if (d.kind == "unpackarraydtype") return {size_of(d.sub, depth + 1).first, d.elements};
    if (!d.sub.empty()) return size_of(d.sub, depth + 1);
    return {0, 1};
  };
  RtlSignals out;
  out.top = top;
  bool found_top = false;
  std::function<void(xmlNode*, const std::string&)> cell = [&](xmlNode* c, const std::string& path) {
    const std::string mod = prop(c, "submodname");
    auto& vars = module_vars[mod];
    const auto& ids = module_var_dtypes[mod];
    for (size_t i = 0; i < vars.size(); ++i) {
      RtlSignal s = vars[i];
      const auto [w, e] = size_of(ids[i], 0);
      s.width = w;
      s.elements = e;
      if (!path.empty()) s.dir = RtlSignal::Dir::Internal;  // a submodule's port is internal
      s.name = path + s.name;
      out.signals.emplace(s.name, s);
    }
    children(c, [&](xmlNode* k) {
      if (is(k, "cell")) cell(k, path + prop(k, "name") + ".");
    });
  };
  if (cells)
    children(cells, [&](xmlNode* c) {
      if (is(c, "cell") && !found_top) {
        found_top = true;
        cell(c, "");
      }
    });
  xmlFreeDoc(doc);
  if (!found_top) {
    error = "Verilator's XML has no top cell";
    return std::nullopt;
  }
  return out;
}

std::vector<std::string> verilator_flags(const DesignSpec& spec) {
  std::vector<std::string> f{"--top-module", spec.top, "-Wno-fatal", "-Wno-lint", "-Wno-style"};
  for (const auto& inc : spec.include_dirs) f.push_back("-I" + inc);
  for (const auto& [k, v] : spec.defines) f.push_back("-D" + k + "=" + v);
  for (const auto& [k, v] : spec.parameters) f.push_back("-G" + k + "=" + v);
  for (const auto& s : spec.sources) f.push_back(s);
  return f;
}

std::optional<RtlSignals> read_rtl_signals(const DesignSpec& spec, DesignError& error) {
  // A private scratch directory, removed afterwards (the XML is all bud keeps).
  std::string tmpl = (fs::temp_directory_path() / "bud-design-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    error = DesignError{spec.top_where, "cannot make a scratch directory for Verilator", kExitElaboration};
    return std::nullopt;
  }
  const fs::path dir = tmpl;
  std::vector<std::string> argv{"verilator", "--xml-only", "--Mdir", dir.string()};
  for (auto& f : verilator_flags(spec)) argv.push_back(f);
  const process::Finished v = process::run(argv);
  std::optional<RtlSignals> out;
  if (v.status != 0) {
    // Verilator's own first error lines name the source file and line.
    std::istringstream lines(v.err);
    std::string line, first;
    int n = 0;
    while (std::getline(lines, line) && n < 4)
      if (line.rfind("%Error", 0) == 0) first += (n++ ? "\n  " : "") + line;
    if (first.empty()) first = v.err.substr(0, 400);
    error = DesignError{spec.top_where,
                        "Verilator cannot elaborate top '" + spec.top + "' from [design].sources:\n  " + first,
                        kExitElaboration};
  } else {
    std::ifstream in(dir / ("V" + spec.top + ".xml"), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string why;
    out = parse_verilator_xml(ss.str(), spec.top, why);
    if (!out) error = DesignError{spec.top_where, why, kExitElaboration};
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

}  // namespace bud::design
