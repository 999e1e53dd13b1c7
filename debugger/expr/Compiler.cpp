#include "debugger/expr/Compiler.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace bud::debugger {

// ---------------------------------------------------------------------------------------------
// Suggestions

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment with three rolling rows: fine for names, and bounded by the
  // lengths, so a pasted megabyte costs time but never memory beyond 3 * |b|.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

std::string_view first_part(std::string_view s) { return s.substr(0, s.find('.')); }
std::string_view last_part(std::string_view s) {
  const size_t dot = s.rfind('.');
  return dot == std::string_view::npos ? s : s.substr(dot + 1);
}
// Whether `suffix` is `whole` minus one or more leading dotted components.
bool is_dotted_suffix(std::string_view suffix, std::string_view whole) {
  return whole.size() > suffix.size() && whole.ends_with(suffix) &&
         whole[whole.size() - suffix.size() - 1] == '.';
}

}  // namespace

std::vector<std::string> suggest_names(std::string_view name,
                                       const std::vector<std::string>& candidates, size_t max) {
  // (tier, distance, name): tier 0 = within edit distance 2, 1 = one is a dotted suffix of the
  // other (`stall_mem` / `gemm.stall_mem`), 2 = same last component, 3 = same first component.
  std::vector<std::tuple<int, size_t, std::string>> scored;
  std::set<std::string_view> seen;
  const bool dotted = name.find('.') != std::string_view::npos;
  for (const std::string& c : candidates) {
    if (c.empty() || c == name || !seen.insert(c).second) continue;
    // The distance is at least the difference of the lengths: skip the quadratic computation
    // where it cannot reach tier 0 (a pasted megabyte against every design name).
    const size_t diff = name.size() > c.size() ? name.size() - c.size() : c.size() - name.size();
    const size_t d = diff > 2 ? diff : edit_distance(name, c);
    int tier = -1;
    if (d <= 2 && d < std::max(name.size(), c.size())) {
      tier = 0;
    } else if (is_dotted_suffix(name, c) || is_dotted_suffix(c, name)) {
      tier = 1;
    } else if ((dotted || c.find('.') != std::string::npos) && last_part(name) == last_part(c)) {
      tier = 2;
    } else if (dotted && first_part(name) == first_part(c)) {
      tier = 3;
    }
    if (tier >= 0) scored.emplace_back(tier, d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(std::get<2>(scored[i]));
  return out;
}

std::string CompileError::to_string() const {
  std::string s = "column " + std::to_string(column) + ": " + message;
  if (!suggestions.empty()) {
    s += " (did you mean ";
    for (size_t i = 0; i < suggestions.size(); ++i) {
      if (i > 0) s += i + 1 == suggestions.size() ? " or " : ", ";
      s += suggestions[i];
    }
    s += "?)";
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Lexer

namespace {

enum class Tok : uint8_t {
  End,
  Number,
  Name,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  AndAnd,
  OrOr,
  Bang,
};

struct Token {
  Tok kind = Tok::End;
  uint32_t col = 1;
  std::string_view text;
  bool is_real = false;  // Number: a fraction or percentage
  uint64_t integer = 0;
  double real = 0.0;
  uint8_t radix = 10;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
int digit_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

uint32_t column_of(size_t offset) {
  return static_cast<uint32_t>(std::min<size_t>(offset, std::numeric_limits<uint32_t>::max() - 1) +
                               1);
}

std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  static const char* hex = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("\\x") + hex[u >> 4] + hex[u & 15];
}

std::string quote(std::string_view s) {
  constexpr size_t kMax = 40;
  if (s.size() > kMax) return "'" + std::string(s.substr(0, kMax)) + "...'";
  return "'" + std::string(s) + "'";
}

class Lexer {
 public:
  Lexer(std::string_view text, CompileError& error) : text_(text), error_(error) {}

  /// Tokenizes everything; false (error_ set) at the first bad character or number.
  bool run(std::vector<Token>& out) {
    size_t i = 0;
    while (true) {
      while (i < text_.size() &&
             (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r'))
        ++i;
      Token t;
      t.col = column_of(i);
      if (i >= text_.size()) {
        t.kind = Tok::End;
        out.push_back(t);
        return true;
      }
      const char c = text_[i];
      if (is_digit(c)) {
        if (!number(i, t)) return false;
      } else if (is_alpha(c)) {
        if (!name(i, t)) return false;
      } else if (!punct(i, t)) {
        return false;
      }
      out.push_back(t);
    }
  }

 private:
  bool fail(size_t offset, std::string msg) {
    error_.column = column_of(offset);
    error_.message = std::move(msg);
    return false;
  }

  // Digits of `radix` with single '_' separators between digits; accumulates into `v`.
  static bool digits(std::string_view s, uint64_t radix, uint64_t& v, bool& overflow) {
    if (s.empty() || s.front() == '_' || s.back() == '_') return false;
    v = 0;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] == '_') {
        if (s[k + 1] == '_') return false;
        continue;
      }
      const uint64_t d = static_cast<uint64_t>(digit_value(s[k]));
      if (d >= radix) return false;
      if (v > (std::numeric_limits<uint64_t>::max() - d) / radix) overflow = true;
      v = v * radix + d;
    }
    return true;
  }

  bool number(size_t& i, Token& t) {
    const size_t start = i;
    size_t j = i;
    while (j < text_.size() && (is_alnum(text_[j]) || text_[j] == '.')) ++j;
    const std::string_view raw = text_.substr(start, j - start);
    const std::string bad = "malformed number " + quote(raw);
    bool overflow = false;
    t.kind = Tok::Number;
    if (raw.size() > 2 && raw[0] == '0' &&
        (raw[1] == 'x' || raw[1] == 'X' || raw[1] == 'b' || raw[1] == 'B')) {
      t.radix = (raw[1] == 'x' || raw[1] == 'X') ? 16 : 2;
      if (!digits(raw.substr(2), t.radix, t.integer, overflow)) return fail(start, bad);
    } else {
      const size_t dot = raw.find('.');
      if (dot == std::string_view::npos) {
        if (!digits(raw, 10, t.integer, overflow)) return fail(start, bad);
      } else {
        uint64_t ignored = 0;
        bool ignored_overflow = false;
        if (!digits(raw.substr(0, dot), 10, ignored, ignored_overflow) ||
            !digits(raw.substr(dot + 1), 10, ignored, ignored_overflow))
          return fail(start, bad);
        std::string plain;
        for (char ch : raw)
          if (ch != '_') plain.push_back(ch);
        auto res = std::from_chars(plain.data(), plain.data() + plain.size(), t.real);
        if (res.ec != std::errc() || res.ptr != plain.data() + plain.size())
          return fail(start, bad);
        t.is_real = true;
      }
    }
    if (overflow) return fail(start, "number " + quote(raw) + " does not fit in 64 bits");
    // `70%` is a percentage unless an operand follows the '%' (then it is `70 % operand`).
    if (j < text_.size() && text_[j] == '%') {
      size_t k = j + 1;
      while (k < text_.size() && (text_[k] == ' ' || text_[k] == '\t')) ++k;
      const bool operand_follows = k < text_.size() && (is_alnum(text_[k]) || text_[k] == '(' ||
                                                        text_[k] == '!' || text_[k] == '.');
      if (!operand_follows) {
        t.real = (t.is_real ? t.real : static_cast<double>(t.integer)) / 100.0;
        t.is_real = true;
        ++j;
      }
    }
    t.text = text_.substr(start, j - start);
    i = j;
    return true;
  }

  bool name(size_t& i, Token& t) {
    const size_t start = i;
    size_t j = i;
    while (j < text_.size() && is_alnum(text_[j])) ++j;
    while (j < text_.size() && text_[j] == '.') {
      if (j + 1 >= text_.size() || !is_alnum(text_[j + 1]))
        return fail(
            j, "expected a name part after '.' in " + quote(text_.substr(start, j + 1 - start)));
      ++j;
      while (j < text_.size() && is_alnum(text_[j])) ++j;
    }
    t.text = text_.substr(start, j - start);
    t.kind = t.text == "and"   ? Tok::AndAnd
             : t.text == "or"  ? Tok::OrOr
             : t.text == "not" ? Tok::Bang
                               : Tok::Name;
    i = j;
    return true;
  }

  bool punct(size_t& i, Token& t) {
    const char c = text_[i];
    const char n = i + 1 < text_.size() ? text_[i + 1] : '\0';
    size_t len = 1;
    switch (c) {
      case '(':
        t.kind = Tok::LParen;
        break;
      case ')':
        t.kind = Tok::RParen;
        break;
      case '[':
        t.kind = Tok::LBracket;
        break;
      case ']':
        t.kind = Tok::RBracket;
        break;
      case ',':
        t.kind = Tok::Comma;
        break;
      case '+':
        t.kind = Tok::Plus;
        break;
      case '-':
        t.kind = Tok::Minus;
        break;
      case '*':
        t.kind = Tok::Star;
        break;
      case '/':
        t.kind = Tok::Slash;
        break;
      case '%':
        t.kind = Tok::Percent;
        break;
      case '<':
        t.kind = n == '=' ? Tok::Le : Tok::Lt;
        len = n == '=' ? 2 : 1;
        break;
      case '>':
        t.kind = n == '=' ? Tok::Ge : Tok::Gt;
        len = n == '=' ? 2 : 1;
        break;
      case '!':
        t.kind = n == '=' ? Tok::Ne : Tok::Bang;
        len = n == '=' ? 2 : 1;
        break;
      case '=':
        if (n != '=') return fail(i, "unexpected '='; use '==' to compare");
        t.kind = Tok::Eq;
        len = 2;
        break;
      case '&':
        if (n != '&') return fail(i, "unexpected '&'; use '&&' (or 'and')");
        t.kind = Tok::AndAnd;
        len = 2;
        break;
      case '|':
        if (n != '|') return fail(i, "unexpected '|'; use '||' (or 'or')");
        t.kind = Tok::OrOr;
        len = 2;
        break;
      default:
        return fail(i, "unexpected character '" + printable(c) + "'");
    }
    t.text = text_.substr(i, len);
    i += len;
    return true;
  }

  std::string_view text_;
  CompileError& error_;
};

std::string describe(const Token& t) {
  return t.kind == Tok::End ? std::string("the end of the expression") : quote(t.text);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parser and code generation

namespace detail {

class ExprBuilder {
 public:
  ExprBuilder(std::string_view text, NameResolver& resolver, const CompileLimits& limits)
      : text_(text), resolver_(resolver), limits_(limits) {}

  CompileResult run() {
    CompileResult result;
    Lexer lexer(text_, error_);
    if (!lexer.run(toks_)) return failed();
    if (peek().kind == Tok::End) return fail(1, "empty expression"), failed();
    if (!parse_or()) return failed();
    if (peek().kind != Tok::End) {
      const Token& t = peek();
      if (is_cmp(t.kind))
        fail(t.col, "comparisons do not chain; combine them with '&&' (a < b && b < c)");
      else if (t.kind == Tok::RParen)
        fail(t.col, "unmatched ')'");
      else
        fail(t.col, "unexpected " + describe(t) + " after the end of the expression");
      return failed();
    }
    if (over_history_col_) {
      const size_t bytes = history_slots_ * sizeof(uint64_t);
      fail(over_history_col_,
           "the history of this expression would need " + std::to_string(bytes) +
               " bytes, more than the limit of " +
               std::to_string(std::min(limits_.max_history_bytes, kMaxHistoryBytes)));
      error_.history_bytes = bytes;
      return failed();
    }
    if (expr_.nodes_.size() > limits_.max_nodes) {
      fail(1, "the expression has " + std::to_string(expr_.nodes_.size()) +
                  " nodes, more than the limit of " + std::to_string(limits_.max_nodes));
      return failed();
    }
    finish();
    result.expr = std::move(expr_);
    return result;
  }

 private:
  using Op = Expr::Op;
  using Node = Expr::Node;

  enum class Fn : uint8_t { Delta, Rate, Ratio, Rose, Fell, Changed, Count, Held };
  struct FnInfo {
    std::string_view name;
    Fn fn;
    size_t args;
    const char* signature;
  };
  static constexpr FnInfo kFunctions[] = {
      {"delta", Fn::Delta, 2, "delta(X, W)"},    {"rate", Fn::Rate, 2, "rate(X, W)"},
      {"ratio", Fn::Ratio, 3, "ratio(A, B, W)"}, {"rose", Fn::Rose, 1, "rose(X)"},
      {"fell", Fn::Fell, 1, "fell(X)"},          {"changed", Fn::Changed, 1, "changed(X)"},
      {"count", Fn::Count, 1, "count(COND)"},    {"held", Fn::Held, 2, "held(COND, N)"},
  };
  struct Arg {
    size_t begin, end;  // node range
    uint32_t col;
  };

  CompileResult failed() {
    CompileResult r;
    r.error = std::move(error_);
    return r;
  }
  bool fail(uint32_t col, std::string msg, std::vector<std::string> suggestions = {}) {
    error_.column = col;
    error_.message = std::move(msg);
    error_.suggestions = std::move(suggestions);
    return false;
  }
  const Token& peek() const { return toks_[pos_]; }
  void advance() {
    if (toks_[pos_].kind != Tok::End) ++pos_;
  }
  static bool is_cmp(Tok k) {
    return k == Tok::Lt || k == Tok::Le || k == Tok::Gt || k == Tok::Ge || k == Tok::Eq ||
           k == Tok::Ne;
  }
  void emit(Op op) {
    Node n;
    n.op = op;
    expr_.nodes_.push_back(n);
  }
  // Parentheses, unary operators and calls recurse; bounding them bounds the native stack.
  bool enter(const Token& t) {
    if (++depth_ > kMaxNesting)
      return fail(t.col, "expression nested too deeply (more than " + std::to_string(kMaxNesting) +
                             " levels)");
    return true;
  }

  bool parse_or() {
    if (!parse_and()) return false;
    while (peek().kind == Tok::OrOr) {
      advance();
      if (!parse_and()) return false;
      emit(Op::Or);
    }
    return true;
  }
  bool parse_and() {
    if (!parse_not()) return false;
    while (peek().kind == Tok::AndAnd) {
      advance();
      if (!parse_not()) return false;
      emit(Op::And);
    }
    return true;
  }
  bool parse_not() {
    if (peek().kind != Tok::Bang) return parse_cmp();
    if (!enter(peek())) return false;
    advance();
    if (!parse_not()) return false;
    emit(Op::Not);
    --depth_;
    return true;
  }
  bool parse_cmp() {
    if (!parse_sum()) return false;
    const Tok k = peek().kind;
    if (!is_cmp(k)) return true;
    advance();
    if (!parse_sum()) return false;
    emit(k == Tok::Lt   ? Op::Lt
         : k == Tok::Le ? Op::Le
         : k == Tok::Gt ? Op::Gt
         : k == Tok::Ge ? Op::Ge
         : k == Tok::Eq ? Op::Eq
                        : Op::Ne);
    return true;
  }
  bool parse_sum() {
    if (!parse_prod()) return false;
    while (peek().kind == Tok::Plus || peek().kind == Tok::Minus) {
      const Tok k = peek().kind;
      advance();
      if (!parse_prod()) return false;
      emit(k == Tok::Plus ? Op::Add : Op::Sub);
    }
    return true;
  }
  bool parse_prod() {
    if (!parse_unary()) return false;
    while (peek().kind == Tok::Star || peek().kind == Tok::Slash || peek().kind == Tok::Percent) {
      const Tok k = peek().kind;
      advance();
      if (!parse_unary()) return false;
      emit(k == Tok::Star ? Op::Mul : k == Tok::Slash ? Op::Div : Op::Mod);
    }
    return true;
  }
  bool parse_unary() {
    if (peek().kind != Tok::Minus) return parse_primary();
    if (!enter(peek())) return false;
    advance();
    if (!parse_unary()) return false;
    emit(Op::Neg);
    --depth_;
    return true;
  }

  bool parse_primary() {
    const Token t = peek();
    switch (t.kind) {
      case Tok::Number: {
        advance();
        Node n;
        if (t.is_real) {
          n.op = Op::Real;
          n.real = t.real;
        } else {
          n.op = Op::Int;
          n.integer = static_cast<int64_t>(t.integer);
          n.radix = t.radix;
        }
        expr_.nodes_.push_back(n);
        return true;
      }
      case Tok::LParen: {
        if (!enter(t)) return false;
        advance();
        if (!parse_or()) return false;
        if (peek().kind != Tok::RParen)
          return fail(peek().col, "missing ')' to close the '(' at column " +
                                      std::to_string(t.col) + " (found " + describe(peek()) + ")");
        advance();
        --depth_;
        return true;
      }
      case Tok::Name:
        advance();
        if (peek().kind == Tok::LParen) return parse_call(t);
        return parse_name(t);
      case Tok::End:
        return fail(t.col,
                    "unexpected end of the expression; expected a number, name, function call or "
                    "'('");
      case Tok::Bang:
        return fail(t.col, "a negation " + describe(t) +
                               " cannot be an operand here; put it in parentheses");
      default:
        return fail(t.col,
                    "expected a number, name, function call or '(' but found " + describe(t));
    }
  }

  // Names, refs and rings are deduplicated through ordered indexes (a linear search per use
  // made long expressions over many distinct names quadratic).
  uint32_t add_name(std::string spelling) {
    auto& names = expr_.names_;
    const auto [it, added] = name_index_.try_emplace(spelling, static_cast<uint32_t>(names.size()));
    if (added) names.push_back(std::move(spelling));
    return it->second;
  }
  uint32_t add_ref(const Ref& r) {
    auto& refs = expr_.refs_;
    const auto key = std::make_tuple(static_cast<int>(r.kind), r.id, r.element);
    const auto [it, added] = ref_index_.try_emplace(key, static_cast<uint32_t>(refs.size()));
    if (added) refs.push_back(r);
    return it->second;
  }

  bool parse_name(const Token& t) {
    const std::string name(t.text);
    std::optional<uint64_t> index;
    uint32_t lb_col = 0, index_col = 0;
    if (peek().kind == Tok::LBracket) {
      lb_col = peek().col;
      advance();
      const Token& it = peek();
      index_col = it.col;
      if (it.kind != Tok::Number || it.is_real || it.text.find('%') != std::string_view::npos)
        return fail(it.col, "the index of " + quote(name) +
                                " must be a non-negative integer constant, not " + describe(it));
      index = it.integer;
      advance();
      if (peek().kind != Tok::RBracket)
        return fail(peek().col, "missing ']' to close the '[' at column " + std::to_string(lb_col) +
                                    " (found " + describe(peek()) + ")");
      advance();
    }
    const std::optional<Ref> whole = resolver_.resolve(name, std::nullopt);
    if (!whole) {
      for (const FnInfo& f : kFunctions)
        if (f.name == name)
          return fail(t.col, quote(name) + " is a function; call it as " + f.signature);
      return fail(t.col, "unknown name " + quote(name), suggest_names(name, resolver_.names()));
    }
    std::optional<Ref> ref = whole;
    std::string spelling = name;
    if (index) {
      if (whole->elements <= 1)
        return fail(lb_col, quote(name) + " is not an array and cannot be indexed");
      if (*index >= whole->elements)
        return fail(index_col, "index " + std::to_string(*index) + " is out of range for " +
                                   quote(name) + " (" + std::to_string(whole->elements) +
                                   " elements, 0.." + std::to_string(whole->elements - 1) + ")");
      ref = resolver_.resolve(name, static_cast<uint32_t>(*index));
      if (!ref)
        return fail(index_col, "element " + std::to_string(*index) + " of " + quote(name) +
                                   " is not readable");
      spelling += "[" + std::to_string(*index) + "]";
    } else if (whole->elements > 1) {
      return fail(t.col, quote(name) + " is an array of " + std::to_string(whole->elements) +
                             " elements; pick one, e.g. " + name + "[0]");
    }
    Node n;
    n.op = Op::Load;
    n.a = add_ref(*ref);
    n.c = add_name(std::move(spelling));
    expr_.nodes_.push_back(n);
    return true;
  }

  bool parse_call(const Token& name_tok) {
    const FnInfo* fn = nullptr;
    for (const FnInfo& f : kFunctions)
      if (f.name == name_tok.text) fn = &f;
    if (!fn) {
      if (resolver_.resolve(name_tok.text, std::nullopt))
        return fail(name_tok.col, quote(name_tok.text) + " is a signal, not a function");
      std::vector<std::string> fn_names;
      for (const FnInfo& f : kFunctions) fn_names.emplace_back(f.name);
      return fail(name_tok.col, "unknown function " + quote(name_tok.text),
                  suggest_names(name_tok.text, fn_names));
    }
    const std::string call = std::string(fn->name) + "()";
    const Token open = peek();
    if (!enter(open)) return false;
    advance();
    std::vector<Arg> args;
    if (peek().kind == Tok::RParen) {
      advance();
    } else {
      while (true) {
        Arg a{expr_.nodes_.size(), 0, peek().col};
        if (!parse_or()) return false;
        a.end = expr_.nodes_.size();
        args.push_back(a);
        if (peek().kind == Tok::Comma) {
          advance();
          continue;
        }
        if (peek().kind == Tok::RParen) {
          advance();
          break;
        }
        if (peek().kind == Tok::End)
          return fail(peek().col, "missing ')' to close the '(' of " + call + " at column " +
                                      std::to_string(open.col));
        return fail(peek().col, "expected ',' or ')' in the call of " + call + " but found " +
                                    describe(peek()));
      }
    }
    --depth_;
    if (args.size() != fn->args)
      return fail(name_tok.col, call + " takes " + std::to_string(fn->args) +
                                    (fn->args == 1 ? " argument" : " arguments") + ", " +
                                    fn->signature + ", but got " + std::to_string(args.size()));
    return finish_call(*fn, args, name_tok);
  }

  // The Load node of an argument that must be a plain name.
  const Node* name_arg(const Arg& a, const std::string& call, const char* which) {
    if (a.end - a.begin == 1 && expr_.nodes_[a.begin].op == Op::Load) return &expr_.nodes_[a.begin];
    fail(a.col, "the " + std::string(which) + " argument of " + call +
                    " must be a signal or counter name, not an expression");
    return nullptr;
  }
  std::optional<uint32_t> window_arg(const Arg& a, const std::string& call, const char* what) {
    const Node& n = expr_.nodes_[a.begin];
    if (a.end - a.begin == 1 && n.op == Op::Int && n.integer >= 1 && n.integer <= kMaxWindow)
      return static_cast<uint32_t>(n.integer);
    fail(a.col, "the " + std::string(what) + " of " + call +
                    " must be an integer constant from 1 to " + std::to_string(kMaxWindow) +
                    " (cycles)");
    return std::nullopt;
  }
  std::optional<uint32_t> ring(uint32_t ref, uint32_t window, const Token& at) {
    auto& rings = expr_.rings_;
    if (auto it = ring_index_.find({ref, window}); it != ring_index_.end()) return it->second;
    // Past the limit, keep counting (nothing is allocated before finish()) so that the error
    // can say what the whole expression would need.
    const size_t bytes = (history_slots_ + window + 1) * sizeof(uint64_t);
    if (bytes > std::min(limits_.max_history_bytes, kMaxHistoryBytes) && !over_history_col_)
      over_history_col_ = at.col;
    ring_index_.emplace(std::make_pair(ref, window), static_cast<uint32_t>(rings.size()));
    Expr::Ring r;
    r.ref = ref;
    r.window = window;
    r.offset = history_slots_;
    history_slots_ += size_t{window} + 1;
    rings.push_back(r);
    return static_cast<uint32_t>(rings.size() - 1);
  }

  bool finish_call(const FnInfo& fn, const std::vector<Arg>& args, const Token& at) {
    const std::string call = std::string(fn.name) + "()";
    auto& nodes = expr_.nodes_;
    Node out;
    expr_.stateful_ = true;
    switch (fn.fn) {
      case Fn::Delta:
      case Fn::Rate:
      case Fn::Rose:
      case Fn::Fell:
      case Fn::Changed: {
        const Node* x = name_arg(args[0], call, "first");
        if (!x) return false;
        uint32_t w = 1;
        if (fn.fn == Fn::Delta || fn.fn == Fn::Rate) {
          auto win = window_arg(args[1], call, "window");
          if (!win) return false;
          w = *win;
        }
        out.op = fn.fn == Fn::Delta  ? Op::Delta
                 : fn.fn == Fn::Rate ? Op::Rate
                 : fn.fn == Fn::Rose ? Op::Rose
                 : fn.fn == Fn::Fell ? Op::Fell
                                     : Op::Changed;
        out.c = x->c;
        auto r = ring(x->a, w, at);
        if (!r) return false;
        out.a = *r;
        break;
      }
      case Fn::Ratio: {
        const Node* a = name_arg(args[0], call, "first");
        if (!a) return false;
        const Node* b = name_arg(args[1], call, "second");
        if (!b) return false;
        auto win = window_arg(args[2], call, "window");
        if (!win) return false;
        out.op = Op::Ratio;
        out.c = a->c;
        out.d = b->c;
        const uint32_t ref_a = a->a, ref_b = b->a;
        auto ra = ring(ref_a, *win, at);
        if (!ra) return false;
        auto rb = ring(ref_b, *win, at);
        if (!rb) return false;
        out.a = *ra;
        out.b = *rb;
        break;
      }
      case Fn::Count:
        out.op = Op::Count;
        out.a = state_slots_++;
        nodes.push_back(out);  // consumes the condition left on the stack
        return true;
      case Fn::Held: {
        auto n = window_arg(args[1], call, "cycle count N");
        if (!n) return false;
        nodes.resize(args[1].begin);  // drop the constant; the condition stays
        out.op = Op::Held;
        out.a = state_slots_++;
        out.b = *n;
        nodes.push_back(out);
        return true;
      }
    }
    // The arguments are folded into the function node (names became rings, windows constants).
    nodes.resize(args[0].begin);
    nodes.push_back(out);
    return true;
  }

  void finish() {
    expr_.history_.assign(history_slots_, 0);
    expr_.samples_.assign(expr_.refs_.size(), 0);
    expr_.state_.assign(state_slots_, 0);
    size_t depth = 0, max_depth = 1;
    for (const Node& n : expr_.nodes_) {
      switch (n.op) {
        case Op::Int:
        case Op::Real:
        case Op::Load:
        case Op::Delta:
        case Op::Rate:
        case Op::Ratio:
        case Op::Rose:
        case Op::Fell:
        case Op::Changed:
          ++depth;
          break;
        case Op::Neg:
        case Op::Not:
        case Op::Count:
        case Op::Held:
          break;
        default:
          --depth;
          break;
      }
      max_depth = std::max(max_depth, depth);
    }
    expr_.stack_.assign(max_depth, Value{});
  }

  std::string_view text_;
  NameResolver& resolver_;
  CompileLimits limits_;
  CompileError error_;
  std::map<std::string, uint32_t> name_index_;
  std::map<std::tuple<int, uint32_t, uint32_t>, uint32_t> ref_index_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> ring_index_;  ///< (ref, window) -> ring
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  size_t history_slots_ = 0;
  uint32_t over_history_col_ = 0;  ///< column of the first ring past the history limit, or 0
  uint32_t state_slots_ = 0;
  Expr expr_;
};

}  // namespace detail

CompileResult compile(std::string_view text, NameResolver& resolver, const CompileLimits& limits) {
  return detail::ExprBuilder(text, resolver, limits).run();
}

}  // namespace bud::debugger
