#include "debugger/commands/Format.h"

#include <cstdio>

#include "debugger/expr/Compiler.h"

namespace bud::debugger {

std::optional<uint64_t> parse_number(const std::string& text) {
  std::string t;
  for (char c : text)
    if (c != '_') t += c;
  if (t.empty()) return std::nullopt;
  int base = 10;
  size_t i = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) {
    base = 2;
    i = 2;
  }
  uint64_t v = 0;
  for (; i < t.size(); ++i) {
    int d;
    const char c = t[i];
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    if (d >= base) return std::nullopt;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
      return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return v;
}

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string format_value(const emu::SignalValue& v, const std::string& fmt) {
  const uint32_t width = v.width ? v.width : 64;
  if (width > 64) {
    // Wide values: hex, most significant word first.
    std::string s = "0x";
    const int words = static_cast<int>((width + 63) / 64);
    for (int w = words - 1; w >= 0; --w) {
      char buf[20];
      std::snprintf(buf, sizeof buf, w == words - 1 ? "%llx" : "%016llx",
                    static_cast<unsigned long long>(v.words[w]));
      s += buf;
      if (w) s += '_';
    }
    return s;
  }
  const uint64_t x = v.low();
  if (fmt == "x") return hex64(x);
  if (fmt == "d") return std::to_string(x);
  if (fmt == "b") {
    std::string s;
    for (int i = static_cast<int>(width) - 1; i >= 0; --i) s += ((x >> i) & 1) ? '1' : '0';
    return "0b" + s;
  }
  return std::to_string(x) + " (" + hex64(x) + ")";
}

std::optional<Target> resolve_target(emu::Emulator& emu, const std::string& raw,
                                     std::string& error) {
  std::string name = raw;
  std::optional<uint32_t> index;
  if (auto lb = name.find('['); lb != std::string::npos && name.back() == ']') {
    auto n = parse_number(name.substr(lb + 1, name.size() - lb - 2));
    if (!n) {
      error = "bad index in '" + raw + "'";
      return std::nullopt;
    }
    index = static_cast<uint32_t>(*n);
    name = name.substr(0, lb);
  }
  Target t;
  t.name = raw;
  if (name == "cycle") {
    t.kind = Target::Kind::Cycle;
    return t;
  }
  if (auto id = emu.find_signal(name)) {
    const auto& info = emu.signals()[*id];
    if (index && *index >= info.elements) {
      error = "index " + std::to_string(*index) + " out of range for " + name + " (" +
              std::to_string(info.elements) + " elements)";
      return std::nullopt;
    }
    if (!index && info.elements > 1) {
      error = name + " is an array of " + std::to_string(info.elements) + "; say " + name + "[0]";
      return std::nullopt;
    }
    t.kind = Target::Kind::Signal;
    t.id = *id;
    t.element = index.value_or(0);
    return t;
  }
  std::string cname = name.rfind("pmu.", 0) == 0 ? name.substr(4) : name;
  if (auto c = emu.describe().find_counter(cname)) {
    t.kind = Target::Kind::Counter;
    t.counter = *c;
    t.name = cname;
    // Prefer the signal (writable) if the design exposes the counter as one.
    if (auto id = emu.find_signal("pmu." + cname)) {
      t.kind = Target::Kind::Signal;
      t.id = *id;
      t.name = "pmu." + cname;
    }
    return t;
  }
  std::string csr = name.rfind("csr.", 0) == 0 ? name.substr(4) : name;
  for (const auto& c : emu.csrs()) {
    if (c.name == csr) {
      t.kind = Target::Kind::Csr;
      t.csr = c.addr;
      t.name = "csr." + c.name;
      return t;
    }
  }
  std::vector<std::string> all;
  for (const auto& s : emu.signals()) all.push_back(s.name);
  for (const auto& c : emu.describe().counters) all.push_back(c);
  for (const auto& c : emu.csrs()) all.push_back(c.name);
  error = "unknown signal '" + name + "'";
  auto near = suggest_names(name, all, 3);
  if (!near.empty()) {
    error += " (did you mean ";
    for (size_t i = 0; i < near.size(); ++i) error += (i ? ", " : "") + near[i];
    error += "?)";
  }
  return std::nullopt;
}

emu::SignalValue read_target(emu::Emulator& emu, const Target& t) {
  emu::SignalValue v;
  switch (t.kind) {
    case Target::Kind::Signal: return emu.read_signal(t.id, t.element);
    case Target::Kind::Counter:
      v.width = 64;
      v.words[0] = emu.counter(t.counter);
      return v;
    case Target::Kind::Csr:
      v.width = 32;
      v.words[0] = emu.read_csr(t.csr).value_or(0);
      return v;
    case Target::Kind::Cycle:
      v.width = 64;
      v.words[0] = emu.cycle();
      return v;
  }
  return v;
}

}  // namespace bud::debugger
