#include "design/DesignCheck.h"

#include "debugger/expr/Compiler.h"
#include "design/FirmwareScript.h"

namespace bud::design {

namespace {

using Dir = RtlSignal::Dir;

const char* dir_name(Dir d) {
  return d == Dir::Input ? "input" : d == Dir::Output ? "output" : "internal signal";
}

// Expression names over the RTL's signals (counters' `when`).
class RtlResolver : public debugger::NameResolver {
 public:
  explicit RtlResolver(const RtlSignals& rtl) : rtl_(rtl) {}
  std::optional<debugger::Ref> resolve(std::string_view name,
                                       std::optional<uint32_t> index) override {
    const RtlSignal* s = rtl_.find(std::string(name));
    if (!s) return std::nullopt;
    if (index && *index >= s->elements) return std::nullopt;
    debugger::Ref r;
    r.kind = debugger::RefKind::Other;
    r.id = static_cast<uint32_t>(std::distance(rtl_.signals.begin(), rtl_.signals.find(s->name)));
    r.element = index.value_or(0);
    r.elements = s->elements;
    r.width = s->width == 0 ? 64 : s->width;
    return r;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> n;
    for (const auto& [k, v] : rtl_.signals) n.push_back(k);
    return n;
  }

 private:
  const RtlSignals& rtl_;
};

class Checker {
 public:
  Checker(const DesignSpec& spec, const RtlSignals& rtl) : spec_(spec), rtl_(rtl) {}
  std::optional<DesignError> error;

  void fail(const Where& w, const std::string& message) {
    if (!error) error = DesignError{w, message, kExitRtlMismatch};
  }

  // Names of the top's ports in a direction, for messages.
  std::string ports(Dir d) const {
    std::string s;
    int n = 0;
    for (const auto& [name, sig] : rtl_.signals)
      if (sig.dir == d && n++ < 12) s += (s.empty() ? "" : ", ") + name;
    return s.empty() ? "none" : s;
  }

  void control_input(const ControlSignal& c, const char* what) {
    const RtlSignal* s = rtl_.find(c.name);
    if (!s || s->dir != Dir::Input)
      fail(c.where, std::string(what) + " '" + c.name + "' is not an input of top '" + spec_.top +
                        "' (inputs: " + ports(Dir::Input) + ")");
    else if (s->width != 1)
      fail(c.where, std::string(what) + " '" + c.name + "' is " + std::to_string(s->width) +
                        " bits wide, not 1");
  }

  // A port's signal set: the prefix must match something, then every signal must be there.
  void port(const std::vector<RequiredSignal>& req, const std::string& prefix, const Where& w,
            const std::string& what) {
    bool any = false;
    for (const auto& [name, sig] : rtl_.signals)
      any = any || (sig.is_port() && name.rfind(prefix, 0) == 0);
    if (!any) {
      fail(w, what + ": prefix '" + prefix + "' matches no port of top '" + spec_.top + "'");
      return;
    }
    for (const RequiredSignal& r : req) {
      const RtlSignal* s = rtl_.find(r.name);
      if (!s || !s->is_port()) {
        if (!r.optional)
          fail(w, what + ": no port '" + r.name + "' (" + dir_name(r.dir) + ", " +
                      std::to_string(r.width) + " bit" + (r.width == 1 ? "" : "s") + ")");
        continue;
      }
      if (s->dir != r.dir)
        fail(w, what + ": '" + r.name + "' is an " + dir_name(s->dir) + " but must be an " +
                    dir_name(r.dir));
      else if (s->width != r.width)
        fail(w, what + ": '" + r.name + "' is " + std::to_string(s->width) +
                    " bits wide but the design file says " + std::to_string(r.width));
    }
  }

  void signal(const std::string& name, const Where& w, const std::string& what, bool one_bit) {
    const RtlSignal* s = rtl_.find(name);
    if (!s) {
      fail(w, what + ": no signal '" + name + "' in top '" + spec_.top + "'");
      return;
    }
    if (one_bit && s->width != 1)
      fail(w, what + ": '" + name + "' is " + std::to_string(s->width) + " bits wide, not 1");
  }

  void run() {
    control_input(spec_.clock, "[clock] name");
    if (spec_.has_reset) control_input(spec_.reset, "[reset] name");
    for (const auto& p : spec_.axi4) port(axi4_master_signals(p), p.prefix, p.where, "[[axi4]] " + p.name);
    if (spec_.control) {
      port(axi_lite_slave_signals(*spec_.control), spec_.control->prefix, spec_.control->where,
           "[control]");
      if (!spec_.control->interrupt.empty()) {
        const RtlSignal* s = rtl_.find(spec_.control->interrupt);
        if (!s || s->dir != Dir::Output || s->width != 1)
          fail(spec_.control->where, "[control].interrupt '" + spec_.control->interrupt +
                                         "' is not a 1-bit output of top '" + spec_.top + "'");
      }
    }
    for (const auto& s : spec_.streams) port(stream_signals(s), s.prefix, s.where, "[[stream]] " + s.name);
    RtlResolver resolver(rtl_);
    for (const auto& c : spec_.counters) {
      if (!c.signal.empty()) {
        signal(c.signal, c.expr_where, "[[counter]] " + c.name + ".signal", false);
        continue;
      }
      const auto r = debugger::compile(c.when, resolver);
      if (!r) {
        // The value's column is its opening quote: the expression starts one after it.
        Where w = c.expr_where;
        w.column += r.error.column;
        fail(w, "[[counter]] " + c.name + ".when: " + r.error.to_string());
      }
    }
    for (const auto& s : spec_.stages) {
      signal(s.valid, s.where, "[[stage]] " + s.name + ".valid", true);
      if (!s.ready.empty()) signal(s.ready, s.where, "[[stage]] " + s.name + ".ready", true);
      for (const auto& p : s.payload) signal(p, s.where, "[[stage]] " + s.name + ".payload", false);
    }
  }

 private:
  const DesignSpec& spec_;
  const RtlSignals& rtl_;
};

}  // namespace

std::vector<RequiredSignal> axi4_master_signals(const Axi4Port& p) {
  const std::string& x = p.prefix;
  const uint32_t a = p.addr_bits, d = p.data_bits, id = p.id_bits;
  std::vector<RequiredSignal> r{
      {x + "awaddr", Dir::Output, a},      {x + "awlen", Dir::Output, 8},
      {x + "awsize", Dir::Output, 3},      {x + "awburst", Dir::Output, 2},
      {x + "awvalid", Dir::Output, 1},     {x + "awready", Dir::Input, 1},
      {x + "wdata", Dir::Output, d},       {x + "wstrb", Dir::Output, d / 8},
      {x + "wlast", Dir::Output, 1},       {x + "wvalid", Dir::Output, 1},
      {x + "wready", Dir::Input, 1},       {x + "bresp", Dir::Input, 2},
      {x + "bvalid", Dir::Input, 1},       {x + "bready", Dir::Output, 1},
      {x + "araddr", Dir::Output, a},      {x + "arlen", Dir::Output, 8},
      {x + "arsize", Dir::Output, 3},      {x + "arburst", Dir::Output, 2},
      {x + "arvalid", Dir::Output, 1},     {x + "arready", Dir::Input, 1},
      {x + "rdata", Dir::Input, d},
      {x + "rresp", Dir::Input, 2},        {x + "rlast", Dir::Input, 1},
      {x + "rvalid", Dir::Input, 1},       {x + "rready", Dir::Output, 1},
  };
  if (id > 0)
    for (auto [n, dir] : {std::pair{"awid", Dir::Output}, std::pair{"bid", Dir::Input},
                          std::pair{"arid", Dir::Output}, std::pair{"rid", Dir::Input}})
      r.push_back({x + n, dir, id});
  return r;
}

std::vector<RequiredSignal> axi_lite_slave_signals(const ControlPort& c) {
  const std::string& x = c.prefix;
  const uint32_t a = c.addr_bits, d = c.data_bits;
  return {
      {x + "awaddr", Dir::Input, a},  {x + "awvalid", Dir::Input, 1}, {x + "awready", Dir::Output, 1},
      {x + "wdata", Dir::Input, d},   {x + "wstrb", Dir::Input, d / 8},
      {x + "wvalid", Dir::Input, 1},  {x + "wready", Dir::Output, 1},
      {x + "bresp", Dir::Output, 2},  {x + "bvalid", Dir::Output, 1}, {x + "bready", Dir::Input, 1},
      {x + "araddr", Dir::Input, a},  {x + "arvalid", Dir::Input, 1}, {x + "arready", Dir::Output, 1},
      {x + "rdata", Dir::Output, d},  {x + "rresp", Dir::Output, 2},
      {x + "rvalid", Dir::Output, 1}, {x + "rready", Dir::Input, 1},
  };
}

std::vector<RequiredSignal> stream_signals(const StreamPort& s) {
  // A source is bud driving the design: the design's tdata/tvalid are inputs, tready an output.
  const bool src = s.direction == StreamPort::Direction::Source;
  const Dir in = src ? Dir::Input : Dir::Output, out = src ? Dir::Output : Dir::Input;
  return {{s.prefix + "tdata", in, s.data_bits},
          {s.prefix + "tvalid", in, 1},
          {s.prefix + "tready", out, 1},
          {s.prefix + "tlast", in, 1, true}};
}

CheckResult check_design(const DesignSpec& spec, const RtlSignals& rtl) {
  Checker c(spec, rtl);
  c.run();
  CheckResult r;
  r.error = c.error;
  // The firmware script is part of the design file: its first bad line is exit 2.
  if (!r.error && spec.control) {
    DesignError e;
    if (!read_control_firmware(spec, e)) r.error = e;
  }
  return r;
}

}  // namespace bud::design
