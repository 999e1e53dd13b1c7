// Little-endian fixed-width serialization for the design harness's save/restore (Axi4Memory,
// FirmwareRunner): a writer appending to a byte vector, and a bounds-checked reader whose first
// failure names the byte offset and makes every later read fail, so parsers check once.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace bud::design {

/// Appends fixed-width little-endian values to `out`.
struct StateWriter {
  std::vector<uint8_t>& out;
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  /// A magic tag and a format version (bump the version on any layout change).
  void header(const char (&magic)[9], uint32_t version) {
    bytes(magic, 8);
    u32(version);
  }
};

/// Reads what StateWriter wrote from in[pos...]; `what` names the state in messages.
struct StateReader {
  std::span<const uint8_t> in;
  size_t pos;
  const char* what;
  std::string err;

  bool ok() const { return err.empty(); }
  bool fail(const std::string& msg) {
    if (err.empty()) err = std::string(what) + " restore: " + msg + " at byte offset " + std::to_string(pos);
    return false;
  }
  bool need(size_t n) {
    if (!ok()) return false;
    if (pos > in.size() || in.size() - pos < n) return fail("truncated state");
    return true;
  }
  uint8_t u8() { return need(1) ? in[pos++] : 0; }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{in[pos++]} << (8 * i);
    return v;
  }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{in[pos++]} << (8 * i);
    return v;
  }
  bool bytes(void* p, size_t n) {
    if (!need(n)) return false;
    std::memcpy(p, in.data() + pos, n);
    pos += n;
    return true;
  }
  bool header(const char (&magic)[9], uint32_t version) {
    char m[8];
    if (!bytes(m, 8)) return false;
    if (std::memcmp(m, magic, 8) != 0) return fail("not a " + std::string(what) + " state");
    const uint32_t v = u32();
    if (ok() && v != version)
      return fail("format version " + std::to_string(v) + " (this build reads " + std::to_string(version) + ")");
    return ok();
  }
};

}  // namespace bud::design
