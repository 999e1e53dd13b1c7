// How the condition language (docs/expressions.md) reaches a design: names are resolved once at
// compile time into Refs, and values are read once per cycle through a Sampler. Both are
// interfaces so that expressions work with any Emulator, a replayed trace or a test fake.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bud::debugger {

/// What a Ref points at. The resolver chooses; the Sampler interprets.
enum class RefKind : uint8_t {
  Signal,   ///< a design signal: `id` is an emu::SignalId, `element` the array element
  Counter,  ///< a PMU counter: `id` is the counter index of docs/counters.md
  Cycle,    ///< the emulator cycle (`cycle`)
  Other,    ///< anything else a custom resolver defines (tests, replay)
};

/// A resolved, readable 64-bit quantity. Two Refs are the same quantity when kind, id and element
/// are equal (`elements` and `width` describe the name, not the element).
struct Ref {
  RefKind kind = RefKind::Signal;
  uint32_t id = 0;        ///< meaning depends on `kind`
  uint32_t element = 0;   ///< array element (0 for scalars)
  uint32_t elements = 1;  ///< number of elements of the named signal (> 1: an array)
  uint32_t width = 64;    ///< bits per element; only the low 64 bits are ever sampled
  /// Where the value lives, if the resolver knows (then Expr reads it directly instead of
  /// calling the Sampler): `direct_bytes` little-endian bytes. Not part of the identity.
  const void* direct = nullptr;
  uint32_t direct_bytes = 0;
  bool operator==(const Ref& o) const {
    return kind == o.kind && id == o.id && element == o.element;
  }
};

/// Reads a Ref's value where the resolver said it lives (`direct`, `direct_bytes` little-endian
/// bytes, at most 8). Fixed-size copies compile to single loads; a runtime-sized memcpy would be
/// a libc call on the per-cycle path.
inline uint64_t read_direct(const Ref& r) {
  switch (r.direct_bytes) {
    case 8: {
      uint64_t v;
      std::memcpy(&v, r.direct, 8);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, r.direct, 4);
      return v;
    }
    case 2: {
      uint16_t v;
      std::memcpy(&v, r.direct, 2);
      return v;
    }
    case 1:
      return *static_cast<const uint8_t*>(r.direct);
    default: {
      uint64_t v = 0;
      std::memcpy(&v, r.direct, r.direct_bytes < 8 ? r.direct_bytes : 8);
      return v;
    }
  }
}

/// Turns names into Refs at compile time (allocation and I/O allowed here).
class NameResolver {
 public:
  virtual ~NameResolver() = default;
  /// Resolves `name` (e.g. "gemm.stall_mem", "load.state", "tokens") with an optional element
  /// index. Contract: resolve(name, nullopt) returns the Ref of element 0 with `elements` set
  /// (so the compiler can report "not an array" / "out of range" precisely); resolve(name, i)
  /// returns the Ref of element i, or nullopt when the name is unknown or i is not valid.
  virtual std::optional<Ref> resolve(std::string_view name, std::optional<uint32_t> index) = 0;
  /// Every name resolve() accepts (without index), used for "did you mean" suggestions.
  virtual std::vector<std::string> names() const = 0;
};

/// Reads the current value of a Ref. Called once per Ref per cycle from Expr::eval, so
/// implementations must not allocate, lock, throw or do I/O.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// The low 64 bits of the quantity's current value.
  virtual uint64_t sample(const Ref& ref) = 0;
};

}  // namespace bud::debugger
