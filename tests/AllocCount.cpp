// Global operator new/delete replaced to count calls (tests/AllocCount.h). Every new is malloc and
// every delete is free.
#include "tests/AllocCount.h"

#include <atomic>
#include <cstdlib>
#include <new>

// GCC pairs the replaced operators with the malloc/free inside them and warns about a mismatch
// that cannot happen.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<uint64_t> g_allocations{0};
std::atomic<uint64_t> g_frees{0};
std::atomic<uint64_t> g_bytes{0};
}  // namespace

uint64_t bud::test::allocations() { return g_allocations.load(); }
uint64_t bud::test::frees() { return g_frees.load(); }
uint64_t bud::test::allocated_bytes() { return g_bytes.load(); }

void* operator new(std::size_t n) {
  ++g_allocations;
  g_bytes += n;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocations;
  g_bytes += n;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return ::operator new(n, t);
}
void operator delete(void* p) noexcept {
  if (p) ++g_frees;
  std::free(p);
}
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
