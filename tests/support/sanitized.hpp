// TUNE_TEST_SANITIZED is defined in a build with a sanitizer that keeps its own allocator
// (AddressSanitizer, ThreadSanitizer, MemorySanitizer), for tests whose measurement such an
// allocator changes (allocation counts, peak memory). Works for GCC and Clang.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TUNE_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TUNE_TEST_SANITIZED 1
#endif
