// The replaced global allocation functions behind allocation_counter.hpp (malloc / free based,
// one counter per thread). Compiled into a suite's binary only through its SOURCES.
#include "allocation_counter.hpp"

#ifndef TUNE_TEST_SANITIZED

#include <cstdlib>
#include <new>

namespace {
thread_local std::size_t g_allocations = 0;
}  // namespace

std::size_t tune::testing::allocations_on_this_thread() noexcept { return g_allocations; }

// GCC cannot see that the replaced operator new and operator delete match once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // TUNE_TEST_SANITIZED
