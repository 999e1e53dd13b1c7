#!/usr/bin/env python3
"""Generates every copy of the NPU's shared facts from rtl/npu_facts.toml (python3 stdlib only).

  gen_facts.py TABLE --sv OUT.sv --cpp OUT.h      the SystemVerilog package (of the default
                                                  array variant) and the C++ tables (all variants)
  gen_facts.py TABLE --variant npu16 --sv OUT.sv  the package of one array variant
  gen_facts.py TABLE --list-variants              the variant names, one a line (default first)
  gen_facts.py TABLE --check DOC.md...            exit 1 naming each stale generated doc section
  gen_facts.py TABLE --write DOC.md...            rewrite the generated doc sections in place

Doc sections sit between `<!-- facts:NAME begin ... -->` and `<!-- facts:NAME end -->` lines.
Files are written only when their content changes, so an unchanged table rebuilds nothing.
"""
import argparse
import pathlib
import re
import sys
import tomllib

NOTE = "Generated from rtl/npu_facts.toml by tools/gen_facts.py. Do not edit."


def load(path):
    with open(path, "rb") as f:
        t = tomllib.load(f)
    t["counters"] = counter_list(t)
    check(t, path)
    return t


def counter_list(t):
    """Every counter in index order: (name, sv localparam or None, what it counts)."""
    out = []
    for e in t["engines"]:
        for c in t["cycle_class"]:
            out.append((f"{e}.{c['name']}", None, None))
    for c in t["counter"]:
        out.append((c["name"], c.get("sv"), c["counts"]))
    return out


def check(t, path):
    def fail(msg):
        sys.exit(f"{path}: {msg}")

    names = [c[0] for c in t["counters"]]
    if len(set(names)) != len(names):
        fail("duplicate counter name")
    for key, field in (("opcode", "value"), ("csr", "addr"), ("assertion", "code")):
        vals = [x[field] for x in t[key]]
        if len(set(vals)) != len(vals):
            fail(f"duplicate {key} {field}")
    if sorted(c["priority"] for c in t["cycle_class"]) != list(range(1, len(t["cycle_class"]) + 1)):
        fail("cycle_class priorities must be 1..N")
    for a in t["assertion"]:
        if len(a.get("values", [])) > 2 or any(v["format"] not in ("dec", "bin")
                                               for v in a.get("values", [])):
            fail(f"assertion {a['name']}: at most 2 values, each format dec or bin")
    if len(t["engines"]) > 8:
        fail("engines must fit assert_engine[2:0]")
    for f in t["fsm"]:
        if len(f["states"]) > (1 << f["bits"]):
            fail(f"fsm {f['engine']}: {len(f['states'])} states do not fit {f['bits']} bits")
    check_array(t, fail)
    csrs = {c["name"] for c in t["csr"]}
    for b in t["csr_bit"]:
        if b["csr"] not in csrs:
            fail(f"csr_bit {b['cpp']} names unknown CSR {b['csr']}")


def entry_bytes(buffer, variant):
    """Bytes per entry of `buffer` on `variant`: the buffer's formula of rows and cols."""
    return eval(buffer["entry"], {"__builtins__": {}}, {"rows": variant["rows"],
                                                        "cols": variant["cols"]})


def pow2(x):
    return x > 0 and x & (x - 1) == 0


def check_array(t, fail):
    a = t["array"]
    names = [v["name"] for v in a["variant"]]
    if len(set(names)) != len(names):
        fail("duplicate array variant name")
    if a["default"] not in names:
        fail(f"array.default '{a['default']}' is not a variant")
    req = a["dram_request_bytes"]
    for v in a["variant"]:
        r, c = v["rows"], v["cols"]
        if r != c:
            fail(f"array variant {v['name']}: rows must equal cols (the lowering uses one lane count)")
        if not pow2(r) or not 8 <= r <= 32:
            fail(f"array variant {v['name']}: rows must be a power of two from 8 to 32")
        for b in t["buffer"]:
            n = v["entries"].get(b["name"])
            if n is None or not pow2(n) or n > 32768:
                fail(f"array variant {v['name']}: entries.{b['name']} must be a power of two "
                     "up to 32768 (16-bit entry addresses)")
            e = entry_bytes(b, v)
            if e % 8 or (e > req and e % req) or (e < req and req % e):
                fail(f"array variant {v['name']}: {b['name']} entries of {e} bytes are not a whole "
                     f"number of 8-byte beats dividing or divided by the {req}-byte request")
        if entry_bytes(t["buffer"][3], v) > req:
            fail(f"array variant {v['name']}: OUT entries must fit one {req}-byte store request")


def variants(t):
    """Array variants, the default first."""
    a = t["array"]
    return sorted(a["variant"], key=lambda v: v["name"] != a["default"])


def variant(t, name):
    for v in t["array"]["variant"]:
        if v["name"] == name:
            return v
    sys.exit(f"unknown array variant '{name}' (variants: "
             + ", ".join(v["name"] for v in variants(t)) + ")")


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[_.]", name.lower()))


def write_if_changed(path, text):
    p = pathlib.Path(path)
    if p.exists() and p.read_text() == text:
        return
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


# ---------------------------------------------------------------- SystemVerilog package

def sv_package(t, v):
    L = [f"// {NOTE}", "// NPU package: the architectural constants of docs/isa.md, array variant "
         f"{v['name']}.",
         "/* verilator lint_off UNUSEDPARAM */", "package npu_pkg;", ""]
    L.append("  // Opcodes (w0[3:0]).")
    for o in t["opcode"]:
        L.append(f"  localparam logic [3:0] OP_{o['name']} = 4'd{o['value']};")
    L += ["", f"  // The MAC array (variant {v['name']}): one {v['rows']}-lane input row times a "
          f"{v['rows']}x{v['cols']} weight block", "  // per GEMM iteration."]
    L.append(f"  localparam int ARRAY_ROWS = {v['rows']};")
    L.append(f"  localparam int ARRAY_COLS = {v['cols']};")
    L.append(f"  localparam int DRAM_REQ_BYTES = {t['array']['dram_request_bytes']};")
    L.append("  localparam int MACS_W = $clog2(ARRAY_ROWS * ARRAY_COLS + 1);  // MACs per iteration")
    L.append("  localparam int SAT_W = $clog2(ARRAY_COLS + 1);  // saturations per POST entry")
    L += ["", "  // Scratchpad buffers (w1[49:48]): entry bytes, depths (entries) and banks."]
    for i, b in enumerate(t["buffer"]):
        L.append(f"  localparam logic [1:0] BUF_{b['name'].upper()} = 2'd{i};")
    for b in t["buffer"]:
        n = b["name"].upper()
        L.append(f"  localparam int {n}_BYTES = {entry_bytes(b, v)};  // {b['entry']}")
        L.append(f"  localparam int {n}_DEPTH = {v['entries'][b['name']]};")
        L.append(f"  localparam int {n}_BANKS = {b['banks']};")
    req = t["array"]["dram_request_bytes"]
    segs = max(max(entry_bytes(b, v) // req, 1) for b in t["buffer"])
    L.append(f"  localparam int SEG_BITS = {max(segs.bit_length() - 1, 1)};  // load segment index "
             f"width (widest entry: {segs} x {req}-byte segments)")
    cfg = 0
    for i, b in enumerate(t["buffer"]):
        cfg |= (v["entries"][b["name"]].bit_length() - 1) << (4 * i)
    L.append(f"  localparam logic [31:0] SPAD_CFG_VALUE = 32'h{cfg:08X};  // log2 depths")
    L += ["", "  // Engines (PMU classification order; assert_engine)."]
    for i, e in enumerate(t["engines"]):
        L.append(f"  localparam logic [2:0] ENG_{e.upper()} = 3'd{i};")
    L += ["", "  // DRAM request sources (tag[4:3])."]
    for i, s in enumerate(t["dram_sources"]):
        L.append(f"  localparam logic [1:0] SRC_{s.upper()} = 2'd{i};")
    L += ["", "  // PMU cycle classes: exactly one per engine per cycle."]
    for i, c in enumerate(t["cycle_class"]):
        L.append(f"  localparam logic [2:0] CLS_{c['name'].upper()} = 3'd{i};")
    L += ["",
          f"  localparam int NUM_ENGINES = {len(t['engines'])};  // {', '.join(t['engines'])}",
          f"  localparam int NUM_CLASSES = {len(t['cycle_class'])};",
          f"  localparam int NUM_COUNTERS = {len(t['counters'])};", "",
          "  // Global counter indices (engine classes come first); blocks are indexed base + i."]
    for i, (name, sv, _) in enumerate(t["counters"]):
        if sv:
            L.append(f"  localparam int {sv} = {i};  // {name}")
    L += ["", "  // CSR byte addresses."]
    for c in t["csr"]:
        L.append(f"  localparam logic [7:0] CSR_{c['name']} = 8'h{c['addr']:02X};")
    L.append(f"  localparam logic [31:0] ID_VALUE = 32'h{t['design']['id_value']:08X};")
    L += ["", "  // Engine state encodings."]
    for f in t["fsm"]:
        items = ", ".join(f"{f['sv_prefix']}{s[0]} = {f['bits']}'d{i}"
                          for i, s in enumerate(f["states"]))
        L.append(f"  typedef enum logic [{f['bits'] - 1}:0] {{{items}}} {f['sv_type']};")
    L += ["", "  // Assertion codes latched in assert_code (0 = none)."]
    for a in t["assertion"]:
        L.append(f"  localparam logic [7:0] A_{a['name'].upper()} = 8'd{a['code']};")
    L += ["", "endpackage", "/* verilator lint_on UNUSEDPARAM */", ""]
    return "\n".join(L)


# ---------------------------------------------------------------- C++ tables

def indexed_enum(L, type_name, plural, items, names=None):
    """enum class TYPE {A = 0, ...}, kNumPLURAL and its name array (default kTYPENames)."""
    n = len(items)
    L.append(f"enum class {type_name} : uint8_t {{ "
             + ", ".join(f"{camel(x)} = {i}" for i, x in enumerate(items)) + " };")
    L.append(f"inline constexpr int kNum{plural} = {n};")
    L.append(f"inline constexpr std::array<std::string_view, {n}> {names or 'k' + type_name + 'Names'}"
             " = {" + ", ".join(f'"{x}"' for x in items) + "};")


def cpp_header(t):
    def strs(xs):
        return ", ".join(f'"{x}"' for x in xs)

    n = len(t["counters"])
    L = [f"// {NOTE}", "// The NPU facts as C++ tables; emu/isa/Isa.h is the interface to them.",
         "#pragma once", "", "#include <array>", "#include <cstdint>", "#include <string_view>", "",
         "namespace bud::isa {", ""]
    ops = t["opcode"]
    L.append("enum class Opcode : uint8_t { " +
             ", ".join(f"{camel(o['name'])} = {o['value']}" for o in ops) + " };")
    L.append(f"inline constexpr int kNumOpcodes = {len(ops)};")
    L.append("/// Opcode values and names, in table order.")
    L.append(f"inline constexpr std::array<uint8_t, {len(ops)}> kOpcodeValues = {{"
             + ", ".join(str(o["value"]) for o in ops) + "};")
    L.append(f"inline constexpr std::array<std::string_view, {len(ops)}> kOpcodeNames = {{"
             + strs(o["name"] for o in ops) + "};")
    L.append("")
    bufs = t["buffer"]
    indexed_enum(L, "Buffer", "Buffers", [b["name"] for b in bufs])
    L.append("/// Geometry of one scratchpad.")
    L.append("struct BufferGeometry {")
    L.append("  uint32_t entry_bytes;  ///< bytes per entry")
    L.append("  uint32_t entries;      ///< number of entries")
    L.append("  uint32_t banks;        ///< banks, interleaved on the low entry-address bits")
    L.append("};")
    vs = variants(t)
    L.append("/// A MAC-array variant (rtl/npu_facts.toml [array]; docs/isa.md \"Array sizes\"): a GEMM")
    L.append("/// iteration multiplies one `rows`-lane input row by a rows x cols weight block. Read from")
    L.append("/// the design's CONFIG and SPAD_CFG CSRs at run time (emu/run/Designs.h design_array()).")
    L.append("struct ArrayConfig {")
    L.append("  std::string_view name;  ///< \"npu8\", ...; \"custom\" for a geometry no variant has")
    L.append("  uint32_t rows = 0;       ///< input lanes: reduction elements per iteration")
    L.append("  uint32_t cols = 0;       ///< output lanes: int32 accumulators per iteration")
    L.append(f"  std::array<uint32_t, {len(bufs)}> entries{{}};  ///< scratchpad depths, by Buffer")
    L.append("  /// MACs per GEMM iteration (the array's peak per cycle).")
    L.append("  constexpr uint32_t macs() const { return rows * cols; }")
    L.append("  /// Bytes per scratchpad entry (the [[buffer]] `entry` formulas).")
    L.append("  constexpr uint32_t entry_bytes(Buffer b) const {")
    L.append("    switch (b) {")
    for b in bufs:
        L.append(f"      case Buffer::{camel(b['name'])}:")
        L.append(f"        return {b['entry'].replace('*', ' * ')};")
    L.append("    }")
    L.append("    return 0;")
    L.append("  }")
    L.append("  constexpr uint32_t banks(Buffer b) const {")
    L.append(f"    constexpr std::array<uint32_t, {len(bufs)}> k = {{"
             + ", ".join(str(b["banks"]) for b in bufs) + "};")
    L.append("    return k[static_cast<int>(b)];")
    L.append("  }")
    L.append("  constexpr BufferGeometry geometry(Buffer b) const {")
    L.append("    return {entry_bytes(b), entries[static_cast<int>(b)], banks(b)};")
    L.append("  }")
    L.append("  constexpr bool operator==(const ArrayConfig& o) const {")
    L.append("    return rows == o.rows && cols == o.cols && entries == o.entries;")
    L.append("  }")
    L.append("};")
    L.append(f"inline constexpr uint32_t kDramRequestBytes = {t['array']['dram_request_bytes']};")
    L.append("/// Every array variant of the table, the default (what a plain build Verilates) first.")
    L.append(f"inline constexpr std::array<ArrayConfig, {len(vs)}> kArrayVariants = {{{{")
    for v in vs:
        ent = ", ".join(str(v["entries"][b["name"]]) for b in bufs)
        L.append(f'    {{"{v["name"]}", {v["rows"]}, {v["cols"]}, {{{ent}}}}},')
    L.append("}};")
    L.append("/// Scratchpad geometry of the default variant (tests and tools fixed to it).")
    L.append(f"inline constexpr std::array<BufferGeometry, {len(bufs)}> kBuffers = {{{{"
             + ", ".join(f"kArrayVariants[0].geometry(Buffer::{camel(b['name'])})" for b in bufs)
             + "}};")
    L.append("")
    eng, cls = t["engines"], t["cycle_class"]
    L.append("/// Engines whose every cycle the PMU classifies (also the dataflow stages, in order).")
    indexed_enum(L, "Engine", "Engines", eng)
    L.append("/// Cycle classes; exactly one per engine per cycle, so they sum to `cycles`.")
    indexed_enum(L, "CycleClass", "Classes", [c["name"] for c in cls], names="kClassNames")
    L.append("")
    L.append("/// PMU counter indices of the global counters (class counters: engine * classes +")
    L.append("/// class, class_counter()).")
    L.append("enum class Counter : uint16_t {")
    first = len(eng) * len(cls)
    for i, (name, _, _) in enumerate(t["counters"][first:], start=first):
        L.append(f"  {camel(name)} = {i},")
    L.append("};")
    L.append(f"inline constexpr int kNumCounters = {n};")
    L.append("/// Every counter name, by index: \"load.stall_mem\", \"cycles\", ...")
    L.append(f"inline constexpr std::array<std::string_view, {n}> kCounterNames = {{")
    for name, _, _ in t["counters"]:
        L.append(f'    "{name}",')
    L.append("};")
    L.append("")
    L.append("/// CSR byte addresses and named bits (docs/isa.md, \"CSR map\").")
    L.append("namespace csr {")
    for c in t["csr"]:
        L.append(f"inline constexpr uint32_t k{camel(c['name'])} = 0x{c['addr']:02X};")
    L.append(f"inline constexpr uint32_t kIdValue = 0x{t['design']['id_value']:08X};")
    for b in t["csr_bit"]:
        L.append(f"inline constexpr uint32_t {b['cpp']} = 1u << {b['bit']};  // {b['csr']}")
    L.append("}  // namespace csr")
    L.append("/// A CSR of the table: name, byte address, access (\"RO\", \"RW\", \"WO\", \"W1C\").")
    L.append("struct CsrFact {")
    L.append("  std::string_view name;")
    L.append("  uint32_t addr;")
    L.append("  std::string_view access;")
    L.append("};")
    L.append(f"inline constexpr std::array<CsrFact, {len(t['csr'])}> kCsrs = {{{{")
    for c in t["csr"]:
        L.append(f'    {{"{c["name"]}", 0x{c["addr"]:02X}, "{c["access"]}"}},')
    L.append("}};")
    L.append("")
    L.append("/// Engine state names, indexed by the state encoding the RTL uses.")
    for f in t["fsm"]:
        L.append(f"inline constexpr std::array<std::string_view, {len(f['states'])}> "
                 f"k{camel(f['engine'])}StateNames = {{" + strs(s[1] for s in f["states"]) + "};")
    L.append("")
    asserts = t["assertion"]
    top = max(a["code"] for a in asserts)
    names = ["none"] + ["unknown"] * top
    for a in asserts:
        names[a["code"]] = a["name"]
    L.append("/// Assertion names by assert_code (0 = none).")
    L.append(f"inline constexpr std::array<std::string_view, {top + 1}> kAssertionNames = {{"
             + strs(names) + "};")
    L.append("/// One value an assertion reports on assert_value0/1: its name and whether it is")
    L.append("/// shown in binary.")
    L.append("struct AssertionValueFact {")
    L.append("  std::string_view name;")
    L.append("  bool binary;")
    L.append("};")
    L.append("/// An assertion of the table: code, name, meaning and its values (name empty: unused).")
    L.append("struct AssertionFact {")
    L.append("  uint8_t code;")
    L.append("  std::string_view name;")
    L.append("  std::string_view meaning;")
    L.append("  std::array<AssertionValueFact, 2> values;")
    L.append("};")
    L.append(f"inline constexpr std::array<AssertionFact, {len(asserts)}> kAssertions = {{{{")
    for a in asserts:
        vals = list(a.get("values", [])) + [{"name": "", "format": "dec"}] * 2
        vs = ", ".join(f'{{"{v["name"]}", {"true" if v["format"] == "bin" else "false"}}}'
                       for v in vals[:2])
        L.append(f'    {{{a["code"]}, "{a["name"]}", "{a["meaning"]}", {{{{{vs}}}}}}},')
    L.append("}};")
    L += ["", "}  // namespace bud::isa", ""]
    return "\n".join(L)


# ---------------------------------------------------------------- doc sections

def doc_sections(t):
    eng, cls = t["engines"], t["cycle_class"]
    s = {}
    rows = ["| class | index | meaning |", "|---|---|---|"]
    for c in sorted(cls, key=lambda c: c["priority"]):
        rows.append(f"| `{c['name']}` | {cls.index(c)} | {c['meaning']} |")
    s["cycle-classes"] = rows
    s["engines"] = ["Engines: " + ", ".join(f"`{e}` ({i})" for i, e in enumerate(eng)) + "."]
    rows = ["| index | name | counts |", "|---|---|---|"]
    first = len(eng) * len(cls)
    for i, (name, _, counts) in enumerate(t["counters"][first:], start=first):
        rows.append(f"| {i} | `{name}` | {counts} |")
    s["global-counters"] = rows
    s["counter-count"] = [f"The PMU holds {len(t['counters'])} 64-bit counters: "
                          f"{first} cycle-class counters (indices 0..{first - 1}) and "
                          f"{len(t['counters']) - first} global counters."]
    rows = ["| value | opcode | goes to |", "|---|---|---|"]
    for o in t["opcode"]:
        rows.append(f"| {o['value']} | {o['name']} | {o['queue']} |")
    s["opcodes"] = rows
    rows = ["| addr | name | access | meaning |", "|---|---|---|---|"]
    for c in t["csr"]:
        rows.append(f"| 0x{c['addr']:02X} | {c['name']} | {c['access']} | {c['meaning']} |")
    s["csr-map"] = rows
    rows = ["| engine | states (encoding 0, 1, ...) |", "|---|---|"]
    for f in t["fsm"]:
        rows.append(f"| {f['engine']} | " + ", ".join(f"`{x[1]}`" for x in f["states"]) + " |")
    s["engine-states"] = rows
    rows = ["| code | name | meaning | assert_value0, assert_value1 |", "|---|---|---|---|"]
    for a in t["assertion"]:
        vals = ", ".join(v["name"] + (" (binary)" if v["format"] == "bin" else "")
                         for v in a.get("values", []))
        rows.append(f"| {a['code']} | `{a['name']}` | {a['meaning']} | {vals or '-'} |")
    s["assertions"] = rows
    bufs = t["buffer"]
    rows = ["| variant | array | MACs/cycle | " + " | ".join(
        f"{b['name'].upper()} entry x depth" for b in bufs) + " | scratchpad total | SPAD_CFG |",
            "|---|---|---|" + "---|" * len(bufs) + "---|---|"]
    for v in variants(t):
        cells, total, cfg = [], 0, 0
        for i, b in enumerate(bufs):
            e, n = entry_bytes(b, v), v["entries"][b["name"]]
            total += e * n
            cfg |= (n.bit_length() - 1) << (4 * i)
            cells.append(f"{e} B x {n}")
        dflt = " (default)" if v["name"] == t["array"]["default"] else ""
        rows.append(f"| `{v['name']}`{dflt} | {v['rows']} x {v['cols']} | {v['rows'] * v['cols']} | "
                    + " | ".join(cells) + f" | {total // 1024} KiB | 0x{cfg:04X} |")
    s["array-variants"] = rows
    return s


BEGIN = re.compile(r"^<!-- facts:([a-z-]+) begin")


def render_doc(text, sections, path):
    """Returns (new text, [stale section names]); exits on a marker error."""
    out, stale, lines, i = [], [], text.split("\n"), 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        name = m.group(1)
        if name not in sections:
            sys.exit(f"{path}:{i}: unknown generated section '{name}'")
        end = f"<!-- facts:{name} end -->"
        j = i
        while j < len(lines) and lines[j] != end:
            j += 1
        if j == len(lines):
            sys.exit(f"{path}:{i}: section '{name}' has no '{end}' line")
        if lines[i:j] != sections[name]:
            stale.append(name)
        out += sections[name]
        i = j
    return "\n".join(out), stale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("--sv")
    ap.add_argument("--cpp")
    ap.add_argument("--variant")
    ap.add_argument("--list-variants", action="store_true")
    ap.add_argument("--check", nargs="+", default=[])
    ap.add_argument("--write", nargs="+", default=[])
    a = ap.parse_args()
    t = load(a.table)
    if a.list_variants:
        print("\n".join(v["name"] for v in variants(t)))
    if a.sv:
        write_if_changed(a.sv, sv_package(t, variant(t, a.variant or t["array"]["default"])))
    if a.cpp:
        write_if_changed(a.cpp, cpp_header(t))
    sections = doc_sections(t)
    bad = False
    for path in a.check + a.write:
        text = pathlib.Path(path).read_text()
        new, stale = render_doc(text, sections, path)
        if path in a.write:
            write_if_changed(path, new)
        elif stale:
            bad = True
            for name in stale:
                print(f"{path}: generated section '{name}' differs from {a.table}; rebuild it "
                      "with `cmake --build build --target facts-docs`", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
