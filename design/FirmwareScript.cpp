#include "design/FirmwareScript.h"

#include <fstream>
#include <sstream>

namespace bud::design {

const char* firmware_op_name(FirmwareOp op) {
  switch (op) {
    case FirmwareOp::Write: return "write";
    case FirmwareOp::Read: return "read";
    case FirmwareOp::Poll: return "poll";
    case FirmwareOp::WaitIrq: return "wait_irq";
    case FirmwareOp::Wait: return "wait";
  }
  return "?";
}

namespace {

struct Token {
  std::string text;
  uint32_t column = 0;  // 1-based
};

std::vector<Token> tokens(const std::string& line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == '#') break;
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '#') ++i;
    out.push_back(Token{line.substr(start, i - start), static_cast<uint32_t>(start + 1)});
  }
  return out;
}

std::optional<uint64_t> plain_number(const std::string& s) {
  size_t i = 0;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, i = 2;
  if (i >= s.size()) return std::nullopt;
  uint64_t v = 0;
  bool digit = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_' && digit) continue;
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    digit = true;
  }
  if (!digit) return std::nullopt;
  return v;
}

class LineParser {
 public:
  LineParser(const std::string& file, uint32_t line, std::vector<Token> toks, const FirmwareContext& ctx,
             DesignError& error)
      : file_(file), line_(line), toks_(std::move(toks)), ctx_(ctx), error_(error) {}

  bool fail(uint32_t column, const std::string& msg) {
    error_ = DesignError{Where{file_, line_, column}, msg, kExitBadDesignFile};
    return false;
  }
  uint32_t end_column() const {
    return toks_.empty() ? 1 : toks_.back().column + static_cast<uint32_t>(toks_.back().text.size());
  }
  // The next token as a number named `what` (e.g. "ADDR"), at most `bits` wide.
  bool number(size_t& i, const char* what, uint32_t bits, uint64_t& out) {
    const std::string cmd = toks_[0].text;
    if (i >= toks_.size()) return fail(end_column(), cmd + " needs " + what + " here");
    const Token& t = toks_[i++];
    std::optional<uint64_t> v;
    if (!t.text.empty() && t.text[0] == '@') {
      const size_t plus = t.text.find('+');
      const std::string name = t.text.substr(1, plus == std::string::npos ? std::string::npos : plus - 1);
      const auto r = ctx_.regions.find(name);
      if (r == ctx_.regions.end()) {
        std::string known;
        for (const auto& [n, b] : ctx_.regions) known += (known.empty() ? "" : ", ") + n;
        return fail(t.column, "'" + t.text + "': no [[memory]] named '" + name + "'" +
                                  (known.empty() ? std::string(" (the design declares none)") : " (memories: " + known + ")"));
      }
      uint64_t off = 0;
      if (plus != std::string::npos) {
        const auto o = plain_number(t.text.substr(plus + 1));
        if (!o) return fail(t.column, "'" + t.text + "': the offset after '+' is not a number (decimal or 0x hex)");
        off = *o;
      }
      v = r->second + off;
    } else {
      v = plain_number(t.text);
      if (!v) return fail(t.column, std::string(what) + " '" + t.text + "' is not a number (decimal, 0x hex or @memory+offset)");
    }
    if (bits < 64 && (*v >> bits) != 0)
      return fail(t.column, std::string(what) + " '" + t.text + "' does not fit " + std::to_string(bits) + " bits");
    out = *v;
    return true;
  }
  bool keyword(size_t& i, const char* kw) {
    if (i >= toks_.size()) return fail(end_column(), toks_[0].text + " needs '" + kw + "' here");
    const Token& t = toks_[i++];
    if (t.text != kw) return fail(t.column, "expected '" + std::string(kw) + "', got '" + t.text + "'");
    return true;
  }
  bool end(size_t i) {
    if (i < toks_.size()) return fail(toks_[i].column, "unexpected '" + toks_[i].text + "' after the " + toks_[0].text + " command");
    return true;
  }

  bool parse(FirmwareStep& s) {
    s.line = line_;
    const Token& cmd = toks_[0];
    size_t i = 1;
    const uint32_t ab = ctx_.addr_bits, db = ctx_.data_bits;
    if (cmd.text == "write") {
      s.op = FirmwareOp::Write;
      return number(i, "ADDR", ab, s.addr) && number(i, "VALUE", db, s.value) && end(i);
    }
    if (cmd.text == "read") {
      s.op = FirmwareOp::Read;
      if (!number(i, "ADDR", ab, s.addr)) return false;
      if (i < toks_.size()) {
        s.expect = true;
        if (!keyword(i, "expect") || !number(i, "VALUE", db, s.value)) return false;
        if (i < toks_.size() && (!keyword(i, "mask") || !number(i, "MASK", db, s.mask))) return false;
      }
      return end(i);
    }
    if (cmd.text == "poll") {
      s.op = FirmwareOp::Poll;
      return number(i, "ADDR", ab, s.addr) && number(i, "MASK", db, s.mask) &&
             number(i, "VALUE", db, s.value) && keyword(i, "timeout") &&
             number(i, "CYCLES", 64, s.cycles) && end(i);
    }
    if (cmd.text == "wait_irq") {
      s.op = FirmwareOp::WaitIrq;
      if (!ctx_.has_interrupt)
        return fail(cmd.column, "wait_irq needs an interrupt: [control] has no 'interrupt' signal");
      return keyword(i, "timeout") && number(i, "CYCLES", 64, s.cycles) && end(i);
    }
    if (cmd.text == "wait") {
      s.op = FirmwareOp::Wait;
      return number(i, "CYCLES", 64, s.cycles) && end(i);
    }
    return fail(cmd.column, "unknown command '" + cmd.text + "' (commands: write, read, poll, wait_irq, wait)");
  }

 private:
  const std::string& file_;
  uint32_t line_;
  std::vector<Token> toks_;
  const FirmwareContext& ctx_;
  DesignError& error_;
};

}  // namespace

std::optional<FirmwareScript> parse_firmware_script(const std::string& text, const std::string& file,
                                                    const FirmwareContext& context, DesignError& error) {
  FirmwareScript script;
  script.file = file;
  std::istringstream in(text);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n) {
    auto toks = tokens(line);
    if (toks.empty()) continue;
    FirmwareStep s;
    if (!LineParser(file, n, std::move(toks), context, error).parse(s)) return std::nullopt;
    script.steps.push_back(s);
  }
  return script;
}

std::optional<FirmwareScript> read_firmware_script(const std::string& path,
                                                   const FirmwareContext& context, DesignError& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = DesignError{Where{path, 0, 0}, "cannot read the firmware script", kExitBadDesignFile};
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_firmware_script(ss.str(), path, context, error);
}

FirmwareContext firmware_context(const DesignSpec& spec) {
  const ControlPort& c = *spec.control;
  FirmwareContext ctx;
  for (const auto& m : spec.memories) ctx.regions[m.name] = m.base;
  ctx.addr_bits = c.addr_bits;
  ctx.data_bits = c.data_bits;
  ctx.has_interrupt = !c.interrupt.empty();
  return ctx;
}

std::optional<FirmwareScript> read_control_firmware(const DesignSpec& spec, DesignError& error) {
  return read_firmware_script(spec.control->firmware, firmware_context(spec), error);
}

}  // namespace bud::design
