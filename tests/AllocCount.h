// Counting allocations in a test executable: link tests/AllocCount.cpp into it (it replaces the
// global operator new and delete) and read the counters around the code that must not allocate.
#pragma once

#include <cstdint>

namespace bud::test {

/// Calls of any operator new so far in this process.
uint64_t allocations();
/// Calls of any operator delete with a non-null pointer so far.
uint64_t frees();
/// Bytes requested by every allocation since the program started.
uint64_t allocated_bytes();

}  // namespace bud::test
