#include "emu/workload/Lowering.h"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>

#include "emu/workload/Builtins.h"
#include "tests/workload/EdgeWorkloads.h"

using namespace bud::workload;
using bud::isa::Buffer;
using bud::isa::Command;
using bud::isa::Opcode;

namespace {

std::vector<std::pair<std::string, Workload>> all_workloads() {
  std::vector<std::pair<std::string, Workload>> v;
  for (const auto& b : list_builtins()) v.emplace_back(b.name, load_builtin(b.name).value());
  for (const auto& [name, text] : bud::test::edge_workloads()) {
    Result<Workload> w = parse_workload(text, name);
    INFO(name << ": " << w.error());
    REQUIRE(w.ok());
    v.emplace_back(name, std::move(w).value());
  }
  return v;
}

Program lowered(const Workload& w) {
  Result<Program> p = lower(w);
  INFO(p.error());
  REQUIRE(p.ok());
  return std::move(p).value();
}

// Replays the token FIFOs in program order (what the golden model checks) and returns the most
// tokens any FIFO ever held. FIFOs: 0 L->C, 1 C->L, 2 C->S, 3 S->C.
int check_tokens(const Program& p) {
  std::array<int, 4> fifo{};
  int most = 0;
  for (const Command& c : p.commands) {
    INFO(c.to_string());
    const bool compute = c.opcode == Opcode::Gemm || c.opcode == Opcode::Post;
    if (c.opcode == Opcode::Load) REQUIRE_FALSE((c.pop_prev || c.push_prev));
    if (c.opcode == Opcode::Store) REQUIRE_FALSE((c.pop_next || c.push_next));
    if (c.opcode == Opcode::Sync || c.opcode == Opcode::End) {
      REQUIRE_FALSE((c.pop_prev || c.pop_next || c.push_prev || c.push_next));
      REQUIRE(fifo == std::array<int, 4>{});  // every token pushed in a layer is popped in it
    }
    if (c.pop_prev) REQUIRE(fifo[compute ? 0 : 2]-- > 0);
    if (c.pop_next) REQUIRE(fifo[compute ? 3 : 1]-- > 0);
    if (c.push_prev) ++fifo[compute ? 1 : 3];
    if (c.push_next) ++fifo[compute ? 2 : 0];
    for (int f : fifo) most = std::max(most, f);
  }
  return most;
}

}  // namespace

TEST_CASE("programs are well formed: ids, layers, SYNC between layers, END last",
          "[workload][lowering]") {
  for (const auto& [name, w] : all_workloads()) {
    INFO(name);
    const Program p = lowered(w);
    REQUIRE_FALSE(p.commands.empty());
    REQUIRE(p.layers.size() == w.layers.size());
    uint32_t next = 0;
    for (size_t li = 0; li < p.layers.size(); ++li) {
      const LayerInfo& info = p.layers[li];
      CHECK(info.first_cmd == next);
      CHECK(info.name == w.layers[li].name);
      for (uint32_t i = info.first_cmd; i <= info.last_cmd; ++i) {
        CHECK(p.commands[i].cmd_id == i);
        CHECK(p.commands[i].layer == li);
        CHECK(p.layer_of_command(i) == static_cast<int>(li));
      }
      const Opcode last = p.commands[info.last_cmd].opcode;
      CHECK(last == (li + 1 == p.layers.size() ? Opcode::End : Opcode::Sync));
      next = info.last_cmd + 1;
    }
    CHECK(next == p.commands.size());
    CHECK(p.commands.back().end_code == 0);
    CHECK(std::count_if(p.commands.begin(), p.commands.end(),
                        [](const Command& c) { return c.opcode == Opcode::End; }) == 1);
    const DramRegion ring = ring_image(p);
    CHECK(ring.addr == kRingBase);
    CHECK(ring.bytes.size() == p.commands.size() * 32);
  }
}

TEST_CASE("tokens balance per layer and never underflow", "[workload][lowering][tokens]") {
  for (const auto& [name, w] : all_workloads()) {
    INFO(name);
    const int most = check_tokens(lowered(w));
    CHECK(most <= 2);  // load runs at most two tiles ahead: far below the FIFO depth of 255
  }
}

TEST_CASE("tiles stay inside one scratchpad half and alternate", "[workload][lowering]") {
  for (const auto& [name, w] : all_workloads()) {
    INFO(name);
    const Program p = lowered(w);
    for (const Command& c : p.commands) {
      INFO(c.to_string());
      auto in_half = [](uint32_t base, uint32_t count, uint32_t half) {
        return count == 0 || (base / half == (base + count - 1) / half && base + count <= 2 * half);
      };
      switch (c.opcode) {
        case Opcode::Load: {
          const uint32_t n = uint32_t{c.y_size} * c.x_size;
          const uint32_t half = c.buffer == Buffer::Inp   ? kInpHalf
                                : c.buffer == Buffer::Wgt ? kWgtHalf
                                                          : kAccHalf;
          CHECK(in_half(c.sram_base, n, half));
          CHECK(c.dram_addr % 8 == 0);
          CHECK(c.x_stride % 8 == 0);
          CHECK(c.dram_addr >= kDataBase);
          CHECK(c.buffer != Buffer::Out);
          break;
        }
        case Opcode::Store:
          CHECK(in_half(c.sram_base, uint32_t{c.y_size} * c.x_size, kOutHalf));
          CHECK(c.buffer == Buffer::Out);
          CHECK(c.dram_addr >= kDataBase);
          break;
        case Opcode::Gemm: {
          const uint32_t kb = (c.k + 7u) / 8u, nb = (c.n + 7u) / 8u;
          CHECK(in_half(c.inp_base, c.m * kb, kInpHalf));
          CHECK(in_half(c.wgt_base, nb * kb, kWgtHalf));
          CHECK(in_half(c.acc_base, c.m * nb, kAccHalf));
          break;
        }
        case Opcode::Post:
          CHECK(in_half(c.acc_base, c.count, kAccHalf));
          CHECK(in_half(c.out_base, c.count, kOutHalf));
          break;
        default:
          break;
      }
    }
  }
}

TEST_CASE("DRAM map: ring first, tensors aligned, disjoint and inside DRAM",
          "[workload][lowering]") {
  for (const auto& [name, w] : all_workloads()) {
    INFO(name);
    const Program p = lowered(w);
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const TensorInfo& t : p.tensors) {
      INFO(t.name);
      CHECK(t.addr >= kDataBase);
      CHECK(t.addr % kTensorAlign == 0);
      CHECK(uint64_t{t.addr} + t.bytes <= p.dram_bytes);
      spans.emplace_back(t.addr, uint64_t{t.addr} + t.bytes);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second);
    for (const DramRegion& r : p.dram_init) {
      CHECK(r.addr >= kDataBase);
      CHECK(r.addr + r.bytes.size() <= p.data_end);
    }
    // Every NPU layer output is checked; nothing else is (host layers' outputs are placed by the
    // host, docs/import.md).
    size_t checked = 0, npu_layers = 0;
    for (const TensorInfo& t : p.tensors) checked += t.check;
    for (const Layer& l : w.layers) npu_layers += l.kind != LayerKind::Host;
    CHECK(checked == npu_layers);
    for (const Layer& l : w.layers) {
      const TensorInfo* t = p.find_tensor(l.name);
      REQUIRE(t != nullptr);
      CHECK(t->check == (l.kind != LayerKind::Host));
      CHECK(t->shape == l.out_shape);
    }
  }
}

TEST_CASE("tile sizes at the edges", "[workload][lowering][tiles]") {
  auto gemms = [](const std::string& text) {
    const Program p = lowered(parse_workload(text, "t").value());
    std::vector<std::array<int, 3>> v;
    for (const Command& c : p.commands)
      if (c.opcode == Opcode::Gemm) v.push_back({c.m, c.k, c.n});
    return v;
  };
  // M = 100 with 40-row tiles (INP half 1024 / Kb 25): 40, 40, 20.
  CHECK(gemms("input_shape: [100, 200]\nlayer { dense { m: 100 k: 200 n: 20 } }") ==
        std::vector<std::array<int, 3>>{{40, 200, 20}, {40, 200, 20}, {20, 200, 20}});
  // K = 1000 (Kb 125): two output blocks per WGT half; N = 20 -> tiles of 16 and 4 columns.
  CHECK(gemms("input_shape: [3, 1000]\nlayer { dense { m: 3 k: 1000 n: 20 } }") ==
        std::vector<std::array<int, 3>>{{3, 1000, 16}, {3, 1000, 4}});
  // One row fits exactly: Kb = 256 fills half the WGT scratchpad.
  CHECK(gemms("input_shape: [2, 2048]\nlayer { dense { m: 2 k: 2048 n: 9 } }") ==
        std::vector<std::array<int, 3>>{{2, 2048, 8}, {2, 2048, 1}});
  // One block more (Kb = 257) runs in two K chunks of 129 and 128 blocks, one output block per
  // WGT half: per N tile, a GEMM per chunk accumulating into the same ACC entries.
  CHECK(gemms("input_shape: [2, 2049]\nlayer { dense { m: 2 k: 2049 n: 9 } }") ==
        std::vector<std::array<int, 3>>{{2, 1032, 8}, {2, 1017, 8}, {2, 1032, 1}, {2, 1017, 1}});
  // Conv 3x3 on 3 channels: K = 9 taps x 8 (padded channels).
  CHECK(gemms("input_shape: [4, 4, 3]\nlayer { conv2d { c_out: 4 kh: 3 kw: 3 pad: 1 } }") ==
        std::vector<std::array<int, 3>>{{16, 72, 4}});
}

TEST_CASE("weights are reused across M tiles", "[workload][lowering]") {
  const Program p = lowered(load_builtin("compute_bound").value());
  int wgt_loads = 0, gemms = 0;
  for (const Command& c : p.commands) {
    wgt_loads += c.opcode == Opcode::Load && c.buffer == Buffer::Wgt;
    gemms += c.opcode == Opcode::Gemm;
  }
  CHECK(gemms == 32);
  CHECK(wgt_loads == 4);  // one per N tile of 64 columns
  // Long GEMMs amortise the pipeline drain: the MAC array can stay >= 70% busy.
  for (const Command& c : p.commands)
    if (c.opcode == Opcode::Gemm) CHECK(uint32_t{c.m} * ((c.k + 7) / 8) * ((c.n + 7) / 8) == 8192);
  CHECK(p.useful_macs == p.gemm_iterations * 64);
}

TEST_CASE("im2col loads read KH rows of KW*C_in bytes from the bordered input",
          "[workload][lowering][conv]") {
  const Workload w = parse_workload(
                         "input_shape: [5, 6, 3]\nlayer { conv2d { c_out: 8 kh: 3 kw: 2 stride: 2 "
                         "pad: 1 } }",
                         "t")
                         .value();
  const Program p = lowered(w);
  const TensorInfo* in = p.find_tensor("input");
  REQUIRE(in != nullptr);
  CHECK(in->border == 1);
  CHECK(in->c_padded == 8);
  CHECK(in->row_pitch == (6 + 2) * 8);
  std::vector<Command> inp;
  for (const Command& c : p.commands)
    if (c.opcode == Opcode::Load && c.buffer == Buffer::Inp) inp.push_back(c);
  // Output 3x4 pixels ((5 + 2 - 3) / 2 + 1 by (6 + 2 - 2) / 2 + 1), one LOAD each.
  REQUIRE(inp.size() == 12);
  for (size_t i = 0; i < inp.size(); ++i) {
    const uint32_t oy = static_cast<uint32_t>(i / 4), ox = static_cast<uint32_t>(i % 4);
    CHECK(inp[i].y_size == 3);
    CHECK(inp[i].x_size == 2);
    CHECK(inp[i].x_stride == in->row_pitch);
    CHECK(inp[i].dram_addr == in->addr + oy * 2 * in->row_pitch + ox * 2 * 8);
    CHECK(inp[i].sram_base == i * 6);
  }
}

TEST_CASE("bias rows are broadcast into ACC, then GEMM accumulates", "[workload][lowering]") {
  const Program p = lowered(load_builtin("gemm_small").value());
  REQUIRE(p.commands.size() == 7);
  const Command& wgt = p.commands[0];
  const Command& bias = p.commands[1];
  const Command& inp = p.commands[2];
  const Command& gemm = p.commands[3];
  CHECK(wgt.buffer == Buffer::Wgt);
  CHECK(bias.buffer == Buffer::Acc);
  CHECK(bias.x_stride == 0);
  CHECK(bias.y_size == 16);
  CHECK(bias.x_size == 3);
  CHECK(inp.buffer == Buffer::Inp);
  CHECK(inp.push_next);
  CHECK(gemm.opcode == Opcode::Gemm);
  CHECK_FALSE(gemm.reset);
  CHECK(gemm.pop_prev);
  CHECK(p.commands[4].opcode == Opcode::Post);
  CHECK(p.commands[4].clamp_lo == 0);  // relu
  CHECK(p.commands[4].mult == 128);
  CHECK(p.commands[4].shift == 10);
  CHECK(p.commands[5].opcode == Opcode::Store);
  // Weight block (nb, kb) byte o*8+i = W[kb*8+i][nb*8+o].
  const Workload w = load_builtin("gemm_small").value();
  const LayerData d = generate_layer_data(w, 0);
  const TensorInfo* wt = p.find_tensor("fc.weights");
  REQUIRE(wt != nullptr);
  const DramRegion* region = nullptr;
  for (const DramRegion& r : p.dram_init)
    if (r.addr == wt->addr) region = &r;
  REQUIRE(region != nullptr);
  const int kb_n = 5;
  for (int k = 0; k < 40; ++k)
    for (int n = 0; n < 24; ++n) {
      const int8_t want = n < 20 ? d.weights[static_cast<size_t>(k * 20 + n)] : 0;
      const size_t off = static_cast<size_t>(((n / 8) * kb_n + k / 8) * 64 + (n % 8) * 8 + k % 8);
      REQUIRE(static_cast<int8_t>(region->bytes[off]) == want);
    }
}

TEST_CASE("repeat lowers the layer list N times past the ring size, one END at the end",
          "[workload][lowering][repeat]") {
  const std::string conv(builtin_text("conv").value());
  const Program once = lowered(parse_workload(conv, "conv").value());
  Result<Workload> w = parse_workload(conv + "\nrepeat: 7\n", "conv7");
  INFO(w.error());
  REQUIRE(w.ok());
  CHECK(w->repeat == 7);
  const Program p = lowered(*w);
  REQUIRE(p.passes == 7);
  REQUIRE(p.pass_commands == once.commands.size());
  REQUIRE(p.commands.size() == 7 * once.commands.size());
  CHECK(p.commands.size() > kRingCommands);
  CHECK(p.gemm_iterations == 7 * once.gemm_iterations);
  CHECK(p.useful_macs == 7 * once.useful_macs);
  REQUIRE(p.layers.size() == once.layers.size());
  for (size_t li = 0; li < p.layers.size(); ++li)
    CHECK(p.layers[li].gemm_iterations == 7 * once.layers[li].gemm_iterations);
  for (uint32_t i = 0; i < p.commands.size(); ++i) {
    const Command& c = p.commands[i];
    const Command& first = once.commands[i % p.pass_commands];
    INFO("command " << i);
    REQUIRE(c.cmd_id == i);
    CHECK(p.layer_of_command(i) == once.layer_of_command(i % p.pass_commands));
    if (i + 1 == p.commands.size()) {
      CHECK(c.opcode == Opcode::End);
    } else if (first.opcode == Opcode::End) {
      CHECK(c.opcode == Opcode::Sync);  // a pass boundary
    } else {
      CHECK(c.opcode == first.opcode);
      CHECK(c.encode()[1] == first.encode()[1]);  // same operands
    }
  }
  CHECK(check_tokens(p) == check_tokens(once));
  CHECK(ring_image(p).bytes.size() == p.commands.size() * 32);
}

TEST_CASE("repeat 0 means once and too many passes name the field", "[workload][lowering][repeat]") {
  const std::string gemm(builtin_text("gemm_small").value());
  const Program zero = lowered(parse_workload(gemm + "repeat: 0\n", "g").value());
  CHECK(zero.passes == 1);
  CHECK(zero.commands.back().opcode == Opcode::End);
  const Result<Workload> big = parse_workload(gemm + "repeat: 1000001\n", "big.textpb");
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().rfind("big.textpb:", 0) == 0);
  CHECK(big.error().find("repeat must be at most 1000000") != std::string::npos);
}

TEST_CASE("single_buffer: the same commands on half 0, tokens one tile deep",
          "[workload][lowering][tokens]") {
  for (const auto& b : list_builtins()) {
    INFO(b.name);
    const auto text = builtin_text(b.name);
    REQUIRE(text);
    Result<Workload> w = parse_workload(std::string(*text) + "\nsingle_buffer: true\n", b.name);
    REQUIRE(w.ok());
    CHECK_FALSE(w.value().double_buffer);
    const Program single = lowered(w.value());
    const Program twice = lowered(load_builtin(b.name).value());
    REQUIRE(single.commands.size() == twice.commands.size());
    for (size_t i = 0; i < single.commands.size(); ++i) {
      const Command& c = single.commands[i];
      INFO(c.to_string());
      CHECK(c.opcode == twice.commands[i].opcode);
      CHECK(c.dram_addr == twice.commands[i].dram_addr);
      switch (c.opcode) {
        case Opcode::Load:
          CHECK(c.sram_base < (c.buffer == Buffer::Inp   ? kInpHalf
                               : c.buffer == Buffer::Wgt ? kWgtHalf
                                                         : kAccHalf));
          break;
        case Opcode::Store:
          CHECK(c.sram_base < kOutHalf);
          break;
        case Opcode::Gemm:
          CHECK(c.inp_base < kInpHalf);
          CHECK(c.wgt_base < kWgtHalf);
          CHECK(c.acc_base < kAccHalf);
          break;
        case Opcode::Post:
          CHECK(c.out_base < kOutHalf);
          break;
        default:
          break;
      }
    }
    // Balanced per layer, never underflowing, and load never more than one tile ahead.
    CHECK(check_tokens(single) <= 1);
  }
}

TEST_CASE("tile limits: none keeps the documented plan, caps shrink the tiles and keep the work",
          "[workload][lowering][tiles]") {
  for (auto& [name, w] : all_workloads()) {
    INFO(name);
    // Without limits: the plan of docs/workloads.md "Tiles", computed here independently.
    REQUIRE(w.tiles == TileLimits{});
    for (const Layer& l : w.layers) {
      if (l.kind != LayerKind::Dense && l.kind != LayerKind::Conv2d) continue;
      INFO(l.name);
      const Result<TilePlan> plan = plan_tiles(l, bud::isa::default_array(), w.tiles);
      REQUIRE(plan.ok());
      const int64_t kb_c = plan.value().kb_chunk;
      const int64_t nb_tile = std::min<int64_t>(plan.value().nb, kWgtHalf / kb_c);
      CHECK(plan.value().nb_tile == nb_tile);
      CHECK(plan.value().rows ==
            std::min({plan.value().pixels, int64_t{kInpHalf} / kb_c, int64_t{kAccHalf} / nb_tile}));
    }
    const Program base = lowered(w);
    // Caps at half the largest tile (rows) and one output block: more, smaller tiles, the same
    // useful work, balanced tokens.
    int64_t most_rows = 0;
    for (const Layer& l : w.layers)
      if (l.kind != LayerKind::Host) most_rows = std::max(most_rows, plan_tiles(l).value().rows);
    Workload capped = w;
    capped.tiles.max_rows = static_cast<uint32_t>(std::max<int64_t>(1, most_rows / 2));
    capped.tiles.max_blocks = 1;
    const Program small = lowered(capped);
    CHECK(small.useful_macs == base.useful_macs);
    CHECK(small.gemm_iterations == base.gemm_iterations);
    CHECK(small.commands.size() > base.commands.size());
    // A GEMM row is a pixel in dense/conv2d, one B-channel block of a pixel in add/relu.
    for (const Command& c : small.commands)
      if (c.opcode == Opcode::Gemm) {
        INFO(c.to_string());
        const Layer& l = w.layers[c.layer];
        const int64_t per_pixel =
            l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2d ? 1 : (l.in_shape.c + 7) / 8;
        CHECK(c.m <= capped.tiles.max_rows * per_pixel);
      }
    check_tokens(small);
  }
}

TEST_CASE("tile limits come from the workload text, a load option replaces them",
          "[workload][lowering][tiles]") {
  const std::string mlp(*builtin_text("mlp"));
  Result<Workload> w = parse_workload(mlp + "\nmax_tile_rows: 8\nmax_tile_blocks: 2\n", "mlp");
  REQUIRE(w.ok());
  CHECK(w.value().tiles == TileLimits{8, 2});
  LoadOptions lo;
  lo.tiles.max_rows = 4;
  Result<Workload> o = parse_workload(mlp + "\nmax_tile_rows: 8\nmax_tile_blocks: 2\n", "mlp", lo);
  REQUIRE(o.ok());
  CHECK(o.value().tiles == TileLimits{4, 2});
  // The caps folded into the text (what a replay packet embeds) parse back to the same limits:
  // appended to a text without them, printed again over a text with them.
  for (const std::string& text : {mlp, mlp + "\nmax_tile_rows: 8\n"}) {
    Result<std::string> folded = with_tile_limits(text, TileLimits{4, 2}, "mlp");
    REQUIRE(folded.ok());
    Result<Workload> back = parse_workload(folded.value(), "mlp");
    INFO(folded.value());
    REQUIRE(back.ok());
    CHECK(back.value().tiles == TileLimits{4, 2});
    CHECK(lowered(back.value()).commands.size() == lowered(o.value()).commands.size());
  }
  CHECK(with_tile_limits(mlp, TileLimits{}, "mlp").value() == mlp);
  CHECK_FALSE(with_tile_limits("name: ", TileLimits{4, 0}, "bad.textpb").ok());
}
