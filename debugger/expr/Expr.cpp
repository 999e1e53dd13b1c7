#include "debugger/expr/Expr.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace bud::debugger {

namespace {

// Integer +, -, *, unary - wrap modulo 2^64: computing in uint64 keeps that defined.
int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t bits(int64_t v) { return static_cast<uint64_t>(v); }

Value arith(uint8_t op_add_sub_mul, const Value& x, const Value& y) {
  if (!x.is_real && !y.is_real) {
    switch (op_add_sub_mul) {
      case 0:
        return Value::make_int(wrap(bits(x.integer) + bits(y.integer)));
      case 1:
        return Value::make_int(wrap(bits(x.integer) - bits(y.integer)));
      default:
        return Value::make_int(wrap(bits(x.integer) * bits(y.integer)));
    }
  }
  const double a = x.as_double(), b = y.as_double();
  switch (op_add_sub_mul) {
    case 0:
      return Value::make_real(a + b);
    case 1:
      return Value::make_real(a - b);
    default:
      return Value::make_real(a * b);
  }
}

Value divide(const Value& x, const Value& y) {
  const double b = y.as_double();
  return Value::make_real(b == 0.0 ? 0.0 : x.as_double() / b);
}

Value modulo(const Value& x, const Value& y) {
  if (!x.is_real && !y.is_real) {
    // x % 0 is defined as 0; x % -1 is 0 mathematically and INT64_MIN % -1 would trap.
    if (y.integer == 0 || y.integer == -1) return Value::make_int(0);
    return Value::make_int(x.integer % y.integer);
  }
  const double b = y.as_double();
  if (b == 0.0) return Value::make_real(0.0);
  return Value::make_real(std::fmod(x.as_double(), b));
}

// -1, 0, 1 for x < y, x == y, x > y; 2 when unordered (NaN), which makes every comparison but
// != false.
int compare(const Value& x, const Value& y) {
  if (!x.is_real && !y.is_real) return x.integer < y.integer ? -1 : (x.integer > y.integer ? 1 : 0);
  const double a = x.as_double(), b = y.as_double();
  if (a < b) return -1;
  if (a > b) return 1;
  if (a == b) return 0;
  return 2;
}

}  // namespace

int64_t Expr::delta(const Ring& r) const {
  // Before a full window has elapsed the window covers the cycles since arming (slot of the
  // armed sample); afterwards exactly W cycles.
  const uint64_t size = uint64_t{r.window} + 1;
  const uint64_t covered = std::min<uint64_t>(elapsed_, r.window);
  // (pos - covered) mod size, without a division on the per-cycle path.
  const uint64_t old_pos = r.pos >= covered ? r.pos - covered : r.pos + size - covered;
  return wrap(history_[r.offset + r.pos] - history_[r.offset + old_pos]);
}

void Expr::arm(Sampler& sampler) {
  for (size_t i = 0; i < refs_.size(); ++i) samples_[i] = read(refs_[i], sampler);
  for (Ring& r : rings_) {
    r.pos = 0;
    history_[r.offset] = samples_[r.ref];
  }
  std::fill(state_.begin(), state_.end(), 0);
  elapsed_ = 0;
  armed_ = true;
  simple_ = nodes_.size() == 3 && refs_.size() == 1 && rings_.empty() && state_.empty() &&
            nodes_[0].op == Op::Load && nodes_[0].a == 0 && nodes_[1].op == Op::Int &&
            (nodes_[2].op == Op::Lt || nodes_[2].op == Op::Le || nodes_[2].op == Op::Gt ||
             nodes_[2].op == Op::Ge || nodes_[2].op == Op::Eq || nodes_[2].op == Op::Ne);
  if (simple_) {
    simple_op_ = nodes_[2].op;
    simple_k_ = nodes_[1].integer;
  }
}

Value Expr::eval(Sampler& sampler) {
  if (!armed_) arm(sampler);
  if (nodes_.empty()) return Value::make_int(0);
  ++elapsed_;
  if (simple_) {
    samples_[0] = read(refs_[0], sampler);
    const int64_t v = wrap(samples_[0]);
    bool r;
    switch (simple_op_) {
      case Op::Lt: r = v < simple_k_; break;
      case Op::Le: r = v <= simple_k_; break;
      case Op::Gt: r = v > simple_k_; break;
      case Op::Ge: r = v >= simple_k_; break;
      case Op::Eq: r = v == simple_k_; break;
      default: r = v != simple_k_; break;
    }
    return Value::make_int(r ? 1 : 0);
  }
  for (size_t i = 0; i < refs_.size(); ++i) samples_[i] = read(refs_[i], sampler);
  for (Ring& r : rings_) {
    r.pos = r.pos == r.window ? 0 : r.pos + 1;
    history_[r.offset + r.pos] = samples_[r.ref];
  }
  Value* sp = stack_.data();  // next free slot
  auto b2i = [](bool b) { return Value::make_int(b ? 1 : 0); };
  for (const Node& n : nodes_) {
    switch (n.op) {
      case Op::Int:
        *sp++ = Value::make_int(n.integer);
        break;
      case Op::Real:
        *sp++ = Value::make_real(n.real);
        break;
      case Op::Load:
        *sp++ = Value::make_int(wrap(samples_[n.a]));
        break;
      case Op::Neg:
        sp[-1] = sp[-1].is_real ? Value::make_real(-sp[-1].real)
                                : Value::make_int(wrap(0 - bits(sp[-1].integer)));
        break;
      case Op::Not:
        sp[-1] = b2i(!sp[-1].truthy());
        break;
      case Op::Add:
        --sp;
        sp[-1] = arith(0, sp[-1], sp[0]);
        break;
      case Op::Sub:
        --sp;
        sp[-1] = arith(1, sp[-1], sp[0]);
        break;
      case Op::Mul:
        --sp;
        sp[-1] = arith(2, sp[-1], sp[0]);
        break;
      case Op::Div:
        --sp;
        sp[-1] = divide(sp[-1], sp[0]);
        break;
      case Op::Mod:
        --sp;
        sp[-1] = modulo(sp[-1], sp[0]);
        break;
      case Op::Lt:
        --sp;
        sp[-1] = b2i(compare(sp[-1], sp[0]) == -1);
        break;
      case Op::Le: {
        --sp;
        const int c = compare(sp[-1], sp[0]);
        sp[-1] = b2i(c == -1 || c == 0);
        break;
      }
      case Op::Gt:
        --sp;
        sp[-1] = b2i(compare(sp[-1], sp[0]) == 1);
        break;
      case Op::Ge: {
        --sp;
        const int c = compare(sp[-1], sp[0]);
        sp[-1] = b2i(c == 1 || c == 0);
        break;
      }
      case Op::Eq:
        --sp;
        sp[-1] = b2i(compare(sp[-1], sp[0]) == 0);
        break;
      case Op::Ne:
        --sp;
        sp[-1] = b2i(compare(sp[-1], sp[0]) != 0);
        break;
      case Op::And:
        --sp;
        sp[-1] = b2i(sp[-1].truthy() && sp[0].truthy());
        break;
      case Op::Or:
        --sp;
        sp[-1] = b2i(sp[-1].truthy() || sp[0].truthy());
        break;
      case Op::Delta:
        *sp++ = Value::make_int(delta(rings_[n.a]));
        break;
      case Op::Rate: {
        const Ring& r = rings_[n.a];
        const uint64_t covered = std::min<uint64_t>(elapsed_, r.window);
        *sp++ = Value::make_real(static_cast<double>(delta(r)) / static_cast<double>(covered));
        break;
      }
      case Op::Ratio: {
        const double den = static_cast<double>(delta(rings_[n.b]));
        const double num = static_cast<double>(delta(rings_[n.a]));
        *sp++ = Value::make_real(den == 0.0 ? 0.0 : num / den);
        break;
      }
      case Op::Rose:
      case Op::Fell:
      case Op::Changed: {
        const Ring& r = rings_[n.a];  // window 1: the other slot is the previous cycle
        const uint64_t now = history_[r.offset + r.pos];
        const uint64_t prev = history_[r.offset + (r.pos ^ 1u)];
        const bool v = n.op == Op::Rose   ? (prev == 0 && now != 0)
                       : n.op == Op::Fell ? (prev != 0 && now == 0)
                                          : prev != now;
        *sp++ = b2i(v);
        break;
      }
      case Op::Count:
        if (sp[-1].truthy()) ++state_[n.a];
        sp[-1] = Value::make_int(wrap(state_[n.a]));
        break;
      case Op::Held: {
        uint64_t& run = state_[n.a];
        run = sp[-1].truthy() ? std::min<uint64_t>(run + 1, n.b) : 0;
        sp[-1] = b2i(run >= n.b);
        break;
      }
    }
  }
  return sp[-1];
}

std::vector<Ref> Expr::refs() const { return refs_; }

std::optional<Expr::SimpleCompare> Expr::simple_compare() const {
  if (nodes_.size() != 3 || refs_.size() != 1 || !rings_.empty() || !state_.empty() ||
      nodes_[0].op != Op::Load || nodes_[0].a != 0 || nodes_[1].op != Op::Int ||
      !refs_[0].direct || refs_[0].direct_bytes != 8)
    return std::nullopt;
  SimpleCompare s;
  s.direct = refs_[0].direct;
  s.k = nodes_[1].integer;
  switch (nodes_[2].op) {
    case Op::Lt: s.cmp = SimpleCompare::Cmp::Lt; break;
    case Op::Le: s.cmp = SimpleCompare::Cmp::Le; break;
    case Op::Gt: s.cmp = SimpleCompare::Cmp::Gt; break;
    case Op::Ge: s.cmp = SimpleCompare::Cmp::Ge; break;
    case Op::Eq: s.cmp = SimpleCompare::Cmp::Eq; break;
    case Op::Ne: s.cmp = SimpleCompare::Cmp::Ne; break;
    default: return std::nullopt;
  }
  return s;
}

const char* Expr::cpp_prelude() {
  // The operations of eval() above with the same types and edge cases (arith, divide, modulo,
  // compare, Value::truthy), for to_cpp().
  return "namespace bud_expr {\n"
         "inline int64_t add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }\n"
         "inline int64_t sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }\n"
         "inline int64_t mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }\n"
         "inline int64_t neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }\n"
         "inline double div(double a, double b) { return b == 0.0 ? 0.0 : a / b; }\n"
         "inline int64_t mod(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }\n"
         "inline double mod(double a, double b) { return b == 0.0 ? 0.0 : std::fmod(a, b); }\n"
         "inline bool truthy(int64_t v) { return v != 0; }\n"
         "inline bool truthy(double v) { return v != 0.0 && !std::isnan(v); }\n"
         "inline double real(uint64_t bits) { double d; std::memcpy(&d, &bits, 8); return d; }\n"
         "}  // namespace bud_expr\n";
}

std::optional<std::string> Expr::to_cpp(const std::string& prefix,
                                         const std::vector<std::string>& loads) const {
  if (stateful_ || !rings_.empty() || !state_.empty() || loads.size() < refs_.size())
    return std::nullopt;
  if (nodes_.empty()) return "const bool " + prefix + " = false;\n";
  // One temporary per node (postfix order), typed as eval() types the node's Value: int64_t or
  // double. Statements rather than one nested expression: a long chain stays linear.
  struct Slot {
    std::string name;
    bool real = false;
  };
  std::vector<Slot> st;
  std::string out;
  auto as_double = [](const Slot& s) { return s.real ? s.name : "static_cast<double>(" + s.name + ")"; };
  auto hex = [](uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "UINT64_C(0x%llx)", static_cast<unsigned long long>(v));
    return std::string(b);
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    const std::string t = prefix + "_" + std::to_string(i);
    std::string code;
    bool real = false;
    switch (n.op) {
      case Op::Int:
        code = "static_cast<int64_t>(" + hex(bits(n.integer)) + ")";
        break;
      case Op::Real: {
        uint64_t b;
        std::memcpy(&b, &n.real, 8);
        code = "bud_expr::real(" + hex(b) + ")";
        real = true;
        break;
      }
      case Op::Load:
        code = "static_cast<int64_t>(" + loads[n.a] + ")";
        break;
      case Op::Neg:
      case Op::Not: {
        const Slot x = st.back();
        st.pop_back();
        if (n.op == Op::Not) code = "static_cast<int64_t>(!bud_expr::truthy(" + x.name + "))";
        else if (x.real) code = "-" + x.name, real = true;
        else code = "bud_expr::neg(" + x.name + ")";
        break;
      }
      case Op::Delta:
      case Op::Rate:
      case Op::Ratio:
      case Op::Rose:
      case Op::Fell:
      case Op::Changed:
      case Op::Count:
      case Op::Held:
        return std::nullopt;  // stateful: their history lives in this object
      default: {
        const Slot y = st.back();
        st.pop_back();
        const Slot x = st.back();
        st.pop_back();
        const bool ints = !x.real && !y.real;
        auto cmp = [&](const char* op) {
          return "static_cast<int64_t>(" + (ints ? x.name : as_double(x)) + " " + op + " " +
                 (ints ? y.name : as_double(y)) + ")";
        };
        auto arith = [&](const char* fn, const char* op) {
          if (ints) return "bud_expr::" + std::string(fn) + "(" + x.name + ", " + y.name + ")";
          real = true;
          return "(" + as_double(x) + " " + op + " " + as_double(y) + ")";
        };
        switch (n.op) {
          case Op::Add: code = arith("add", "+"); break;
          case Op::Sub: code = arith("sub", "-"); break;
          case Op::Mul: code = arith("mul", "*"); break;
          case Op::Div:
            code = "bud_expr::div(" + as_double(x) + ", " + as_double(y) + ")";
            real = true;
            break;
          case Op::Mod:
            code = ints ? "bud_expr::mod(" + x.name + ", " + y.name + ")"
                        : "bud_expr::mod(" + as_double(x) + ", " + as_double(y) + ")";
            real = !ints;
            break;
          case Op::Lt: code = cmp("<"); break;
          case Op::Le: code = cmp("<="); break;
          case Op::Gt: code = cmp(">"); break;
          case Op::Ge: code = cmp(">="); break;
          case Op::Eq: code = cmp("=="); break;
          case Op::Ne: code = cmp("!="); break;
          case Op::And:
          case Op::Or:
            code = "static_cast<int64_t>(bud_expr::truthy(" + x.name + ")" +
                   (n.op == Op::And ? " && " : " || ") + "bud_expr::truthy(" + y.name + "))";
            break;
          default:
            return std::nullopt;
        }
      }
    }
    out += std::string(real ? "const double " : "const int64_t ") + t + " = " + code + ";\n";
    st.push_back({t, real});
  }
  out += "const bool " + prefix + " = bud_expr::truthy(" + st.back().name + ");\n";
  return out;
}

std::vector<uint32_t> Expr::windows() const {
  std::vector<uint32_t> w;
  for (const Ring& r : rings_) w.push_back(r.window);
  for (const Node& n : nodes_)
    if (n.op == Op::Held) w.push_back(n.b);
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

namespace {

// Binding strength used to print minimal parentheses (matches the grammar levels).
enum Prec : int { kOr = 1, kAnd, kNot, kCmp, kSum, kProd, kUnary, kPrimary };

std::string format_real(double v) {
  std::array<char, 512> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed);
  std::string s(buf.data(), res.ptr);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string format_int(uint64_t v, uint8_t radix) {
  if (radix == 10) return std::to_string(v);
  std::string digits;
  const uint64_t base = radix;
  do {
    digits.push_back("0123456789abcdef"[v % base]);
    v /= base;
  } while (v != 0);
  std::reverse(digits.begin(), digits.end());
  return (radix == 16 ? "0x" : "0b") + digits;
}

}  // namespace

std::string Expr::to_string() const {
  // Printed straight into one string from a tree walk with an explicit stack: building each
  // operator's text from its operands' texts copied them at every level, which made a long chain
  // (a + b + c + ...) quadratic, and recursion would overflow the native stack on it.
  const size_t n = nodes_.size();
  if (n == 0) return {};
  // Per Op, in declaration order: binding strength, operands taken from the stack, and the
  // operator as printed.
  struct OpInfo {
    int prec, arity;
    const char* symbol;
  };
  // clang-format off
  static constexpr OpInfo kInfo[] = {
      {kPrimary, 0, ""}, {kPrimary, 0, ""}, {kPrimary, 0, ""},             // Int Real Load
      {kUnary, 1, "-"}, {kNot, 1, "!"},                                      // Neg Not
      {kSum, 2, " + "}, {kSum, 2, " - "},                                    // Add Sub
      {kProd, 2, " * "}, {kProd, 2, " / "}, {kProd, 2, " % "},               // Mul Div Mod
      {kCmp, 2, " < "}, {kCmp, 2, " <= "}, {kCmp, 2, " > "},                 // Lt Le Gt
      {kCmp, 2, " >= "}, {kCmp, 2, " == "}, {kCmp, 2, " != "},               // Ge Eq Ne
      {kAnd, 2, " && "}, {kOr, 2, " || "},                                   // And Or
      {kPrimary, 0, ""}, {kPrimary, 0, ""}, {kPrimary, 0, ""},               // Delta Rate Ratio
      {kPrimary, 0, ""}, {kPrimary, 0, ""}, {kPrimary, 0, ""},               // Rose Fell Changed
      {kPrimary, 1, ""}, {kPrimary, 1, ""},                                  // Count Held
  };
  // clang-format on
  static_assert(std::size(kInfo) == static_cast<size_t>(Op::Held) + 1);
  auto info = [](Op op) -> const OpInfo& { return kInfo[static_cast<size_t>(op)]; };
  auto prec_of = [&](Op op) { return info(op).prec; };
  auto arity = [&](Op op) { return info(op).arity; };
  auto symbol = [&](Op op) { return info(op).symbol; };
  // Operands of each node (postfix order: the operands precede it).
  std::vector<uint32_t> left(n, 0), right(n, 0), st;
  for (uint32_t i = 0; i < n; ++i) {
    const int k = arity(nodes_[i].op);
    if (k == 2) {
      right[i] = st.back();
      st.pop_back();
    }
    if (k >= 1) {
      left[i] = st.back();
      st.pop_back();
    }
    st.push_back(i);
  }
  auto name = [&](uint32_t i) -> const std::string& { return names_[i]; };
  auto window = [&](const Ring& r) { return std::to_string(r.window); };
  // A task prints a node (in parentheses or not) or a literal.
  struct Task {
    uint32_t node = 0;
    bool paren = false;
    const char* text = nullptr;  ///< a literal when set
    int tail = -1;               ///< else an index into `tails` when >= 0
  };
  std::vector<std::string> tails;  ///< held()'s ", N)"
  std::string out;
  std::vector<Task> todo{{st.back(), false, nullptr, -1}};
  while (!todo.empty()) {
    const Task t = todo.back();
    todo.pop_back();
    if (t.text) {
      out += t.text;
      continue;
    }
    if (t.tail >= 0) {
      out += tails[static_cast<size_t>(t.tail)];
      continue;
    }
    const Node& nd = nodes_[t.node];
    if (t.paren) {
      out += '(';
      todo.push_back({0, false, ")", -1});
    }
    const int prec = prec_of(nd.op);
    switch (nd.op) {
      case Op::Int:
        out += format_int(bits(nd.integer), nd.radix);
        break;
      case Op::Real:
        out += format_real(nd.real);
        break;
      case Op::Load:
        out += name(nd.c);
        break;
      case Op::Neg:
      case Op::Not: {
        // Parenthesize any binary operand, even where the grammar would not need it: `!(a < b)`
        // reads better than the equivalent `!a < b`. `!!a` and `--a` need none.
        const int xp = prec_of(nodes_[left[t.node]].op);
        out += symbol(nd.op);
        todo.push_back({left[t.node], xp < kUnary && xp != prec, nullptr, -1});
        break;
      }
      case Op::Count:
        out += "count(";
        todo.push_back({0, false, ")", -1});
        todo.push_back({left[t.node], false, nullptr, -1});
        break;
      case Op::Held:
        out += "held(";
        tails.push_back(", " + std::to_string(nd.b) + ")");
        todo.push_back({0, false, nullptr, static_cast<int>(tails.size() - 1)});
        todo.push_back({left[t.node], false, nullptr, -1});
        break;
      case Op::Delta:
        out += "delta(" + name(nd.c) + ", " + window(rings_[nd.a]) + ")";
        break;
      case Op::Rate:
        out += "rate(" + name(nd.c) + ", " + window(rings_[nd.a]) + ")";
        break;
      case Op::Ratio:
        out += "ratio(" + name(nd.c) + ", " + name(nd.d) + ", " + window(rings_[nd.a]) + ")";
        break;
      case Op::Rose:
        out += "rose(" + name(nd.c) + ")";
        break;
      case Op::Fell:
        out += "fell(" + name(nd.c) + ")";
        break;
      case Op::Changed:
        out += "changed(" + name(nd.c) + ")";
        break;
      default: {
        // Left-associative levels: a left operand of the same level needs no parentheses, a
        // right one does. Comparisons do not chain, so both sides of the same level need them.
        const int lp = prec_of(nodes_[left[t.node]].op);
        const int rp = prec_of(nodes_[right[t.node]].op);
        todo.push_back({right[t.node], rp <= prec, nullptr, -1});
        todo.push_back({0, false, symbol(nd.op), -1});
        todo.push_back({left[t.node], prec == kCmp ? lp <= prec : lp < prec, nullptr, -1});
        break;
      }
    }
  }
  return out;
}

}  // namespace bud::debugger
