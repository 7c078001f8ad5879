// Counting the calls of the global operator new made on this thread, to prove that a hot path
// allocates nothing ("no allocation on a hit": the Autotuner's known key, a launch on an
// application's stream, a dispatch recorded into its command buffer). The counter lives in
// allocation_counter.cpp, which replaces the global allocation functions: add that file to the
// suite's SOURCES (one replacement per binary). Per thread: other threads' allocations never
// leak into a measurement.
//
// Sanitizer builds keep their own allocator: there TUNE_TEST_SANITIZED is defined and the
// counter does not exist; suites compile their counting cases out (they are not skipped and
// not passed silently: they do not exist in that binary).
#pragma once

#include <cstddef>

#include "sanitized.hpp"

#ifndef TUNE_TEST_SANITIZED

namespace tune::testing {

// Calls of the global operator new on the calling thread since it started.
std::size_t allocations_on_this_thread() noexcept;

// Allocations made by `fn` on this thread.
template <class Fn>
std::size_t allocations_of(Fn&& fn) {
  const std::size_t before = allocations_on_this_thread();
  fn();
  return allocations_on_this_thread() - before;
}

}  // namespace tune::testing

#endif  // TUNE_TEST_SANITIZED
