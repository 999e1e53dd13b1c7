// Stage transactions: hashing and printing. Built as part of bud::isa (see emu/isa/CMakeLists.txt).
#include "emu/core/StageTxn.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "emu/core/Hash.h"
#include "emu/isa/Isa.h"

namespace bud::emu {
namespace {

uint64_t load_le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

int32_t lane32(const std::array<uint8_t, 64>& d, int i) {
  return static_cast<int32_t>(static_cast<uint32_t>(load_le(d.data() + 4 * i, 4)));
}

std::string int8_list(const std::array<uint8_t, 64>& d, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(static_cast<int8_t>(d[i]));
  }
  return s + "]";
}

std::string int32_list(const std::array<uint8_t, 64>& d, size_t bytes) {
  std::string s = "[";
  for (size_t i = 0; i < bytes / 4; ++i) {
    if (i) s += ", ";
    s += std::to_string(lane32(d, static_cast<int>(i)));
  }
  return s + "]";
}

}  // namespace

const char* stage_name(Stage s) {
  const auto i = static_cast<size_t>(s);
  return i < isa::kEngineNames.size() ? isa::kEngineNames[i].data() : "?";
}

uint64_t StageTxn::hash() const {
  // XXH3-64 of a fixed little-endian layout: 16 header bytes (stage, buffer, size, cmd_id, addr,
  // segment at byte 12, zero for entries of at most 64 bytes), then the `size` data bytes.
  // Built with fixed-size stores and copies (every transaction of every stage is hashed).
  std::array<uint8_t, 16 + 64> buf;
  auto put = [&](size_t at, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) buf[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  if constexpr (std::endian::native == std::endian::little) {
    const uint16_t sz = size;
    buf[0] = static_cast<uint8_t>(stage);
    buf[1] = buffer;
    std::memcpy(&buf[2], &sz, 2);
    std::memcpy(&buf[4], &cmd_id, 4);
    std::memcpy(&buf[8], &addr, 4);
    const uint32_t tail = segment;  // byte 12, then three zero bytes
    std::memcpy(&buf[12], &tail, 4);
  } else {
    put(0, static_cast<uint8_t>(stage), 1);
    put(1, buffer, 1);
    put(2, size, 2);
    put(4, cmd_id, 4);
    put(8, addr, 4);
    put(12, segment, 4);
  }
  const size_t n = size < data.size() ? size : data.size();
  std::memcpy(buf.data() + 16, data.data(), data.size());  // all 64: a fixed-size copy
  return hash64(std::span<const uint8_t>(buf.data(), 16 + n), 0x6275645F7478ull);  // "bud_tx"
}

bool StageTxn::same_content(const StageTxn& o) const {
  return stage == o.stage && buffer == o.buffer && segment == o.segment && size == o.size &&
         cmd_id == o.cmd_id && addr == o.addr && data == o.data;
}

std::string StageTxn::to_string() const {
  const size_t n = size < data.size() ? size : data.size();
  std::string s = std::string(stage_name(stage)) + " #" + std::to_string(cmd_id) + " ";
  char buf[32];
  switch (stage) {
    case Stage::Fetch: {
      std::array<uint64_t, 4> w{};
      for (int i = 0; i < 4; ++i) w[i] = load_le(data.data() + 8 * i, 8);
      return s + "dispatch " + isa::Command::decode(w).to_string();
    }
    case Stage::Load: {
      const auto b = static_cast<isa::Buffer>(buffer & 3);
      s += std::string(isa::buffer_name(b)) + "[" + std::to_string(addr) + "]" +
           (segment ? ".seg" + std::to_string(segment) : "") + " = ";
      return s + (b == isa::Buffer::Acc ? int32_list(data, n) : int8_list(data, n));
    }
    case Stage::Gemm:
      return s + "acc[" + std::to_string(addr) + "]" +
             (segment ? ".seg" + std::to_string(segment) : "") + " = " + int32_list(data, n);
    case Stage::Post:
      return s + "out[" + std::to_string(addr) + "] = " + int8_list(data, n);
    case Stage::Store:
      std::snprintf(buf, sizeof buf, "0x%x", addr);
      return s + "dram[" + buf + "] size " + std::to_string(size) + " = " + int8_list(data, n);
  }
  return s;
}

}  // namespace bud::emu
