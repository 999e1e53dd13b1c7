#include "emu/core/Fault.h"

#include <cctype>

namespace bud::emu {

const char* fault_kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::Flip: return "flip";
    case FaultKind::Stuck: return "stuck";
    case FaultKind::MemFlip: return "memflip";
    case FaultKind::DramDrop: return "dram-drop";
    case FaultKind::DramDup: return "dram-dup";
    case FaultKind::DramDelay: return "dram-delay";
  }
  return "?";
}

std::string FaultSpec::to_string() const {
  std::string s = fault_kind_name(kind);
  auto sig = [&] {
    std::string t = target;
    if (has_element) t += "[" + std::to_string(element) + "]";
    return t + "[" + std::to_string(bit) + "]";
  };
  switch (kind) {
    case FaultKind::Flip: s += ":" + sig(); break;
    case FaultKind::Stuck: s += ":" + sig() + "=" + (value ? "1" : "0"); break;
    case FaultKind::MemFlip: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
      s += ":" + target + ":" + buf + "[" + std::to_string(bit) + "]";
      break;
    }
    case FaultKind::DramDelay: s += ":" + std::to_string(duration); break;
    default: break;
  }
  s += "@" + std::to_string(cycle);
  if (kind == FaultKind::Stuck && duration) s += "+" + std::to_string(duration);
  return s;
}

namespace {

/// A tiny cursor over the text with column-aware errors.
struct Cursor {
  std::string_view t;
  size_t i = 0;
  std::string* error;
  bool fail(const std::string& what) {
    *error = "column " + std::to_string(i + 1) + ": " + what;
    return false;
  }
  bool eat(char c) {
    if (i < t.size() && t[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool expect(char c) { return eat(c) || fail(std::string("expected '") + c + "'"); }
  bool number(uint64_t& v) {
    size_t start = i;
    int base = 10;
    if (i + 1 < t.size() && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
      base = 16;
      i += 2;
    }
    v = 0;
    size_t digits = 0;
    while (i < t.size()) {
      const char c = t[i];
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else if (c == '_') { ++i; continue; }
      else break;
      if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
        i = start;
        return fail("number too large");
      }
      v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
      ++i;
      ++digits;
    }
    if (!digits) {
      i = start;
      return fail("expected a number");
    }
    return true;
  }
  bool name(std::string& out) {
    size_t start = i;
    while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_' ||
                            t[i] == '.'))
      ++i;
    if (i == start) return fail("expected a name");
    out = std::string(t.substr(start, i - start));
    return true;
  }
  bool index(uint64_t& v) { return expect('[') && number(v) && expect(']'); }
};

}  // namespace

std::optional<FaultSpec> parse_fault(std::string_view text, std::string& error) {
  Cursor c{text, 0, &error};
  FaultSpec f;
  std::string kind;
  while (c.i < text.size() && text[c.i] != ':' && text[c.i] != '@') ++c.i;
  kind = std::string(text.substr(0, c.i));
  if (kind == "flip") f.kind = FaultKind::Flip;
  else if (kind == "stuck") f.kind = FaultKind::Stuck;
  else if (kind == "memflip") f.kind = FaultKind::MemFlip;
  else if (kind == "dram-drop") f.kind = FaultKind::DramDrop;
  else if (kind == "dram-dup") f.kind = FaultKind::DramDup;
  else if (kind == "dram-delay") f.kind = FaultKind::DramDelay;
  else {
    c.i = 0;
    c.fail("unknown fault kind '" + kind +
           "' (flip, stuck, memflip, dram-drop, dram-dup, dram-delay)");
    return std::nullopt;
  }
  uint64_t v = 0;
  switch (f.kind) {
    case FaultKind::Flip:
    case FaultKind::Stuck: {
      if (!c.expect(':') || !c.name(f.target) || !c.index(v)) return std::nullopt;
      if (c.i < text.size() && text[c.i] == '[') {
        // SIGNAL[ELEMENT][BIT]
        f.has_element = true;
        f.element = static_cast<uint32_t>(v);
        if (!c.index(v)) return std::nullopt;
      }
      if (v > 511) {
        c.fail("bit " + std::to_string(v) + " is beyond any signal (0..511)");
        return std::nullopt;
      }
      f.bit = static_cast<uint32_t>(v);
      if (f.kind == FaultKind::Stuck) {
        if (!c.expect('=')) return std::nullopt;
        if (c.eat('0')) f.value = false;
        else if (c.eat('1')) f.value = true;
        else {
          c.fail("expected 0 or 1");
          return std::nullopt;
        }
      }
      break;
    }
    case FaultKind::MemFlip:
      if (!c.expect(':') || !c.name(f.target) || !c.expect(':') || !c.number(f.addr) ||
          !c.index(v))
        return std::nullopt;
      if (v > 7) {
        c.fail("bit must be 0..7 (a bit of the byte at ADDR)");
        return std::nullopt;
      }
      f.bit = static_cast<uint32_t>(v);
      break;
    case FaultKind::DramDelay:
      if (!c.expect(':') || !c.number(f.duration)) return std::nullopt;
      if (f.duration == 0 || f.duration > 1'000'000) {
        c.fail("delay must be 1..1000000 cycles");
        return std::nullopt;
      }
      break;
    default:
      break;
  }
  if (!c.expect('@') || !c.number(f.cycle)) return std::nullopt;
  if (f.kind == FaultKind::Stuck && c.eat('+')) {
    if (!c.number(f.duration)) return std::nullopt;
    if (f.duration == 0) {
      c.fail("duration must be positive (omit +N to hold for ever)");
      return std::nullopt;
    }
  }
  if (c.i != text.size()) {
    c.fail("unexpected '" + std::string(text.substr(c.i)) + "'");
    return std::nullopt;
  }
  return f;
}

}  // namespace bud::emu
