// A vendor library loaded at run time (dlopen) rather than linked: the CUDA driver, NVRTC and
// the HIP runtime are each found here when first needed, so a program built with a backend
// starts, and runs its other backends, on a machine without that vendor's libraries. Each
// loader keeps its own table of entry points (an X-macro list) and resolves it with
// resolve_entry; this file holds what they share: trying candidate files in order and naming
// every one tried, and the message for a missing entry point.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tune/status.hpp"

namespace tune::gpu {

struct SharedLibrary {
  void* handle = nullptr;  // dlopen handle; never closed (the library lives for the process)
  std::string path;        // the candidate it was loaded by
};

// Loads the first of `candidates` (names for the loader's search, or paths) that dlopen
// accepts, with RTLD_NOW | RTLD_LOCAL. When none loads: unavailable, `missing` followed by
// every candidate tried and the loader's reason for each. Blocking (dynamic loading).
Result<SharedLibrary> load_first(std::span<const std::string> candidates, std::string_view missing);

// The address of `symbol` in `lib`; null when the library lacks it.
void* find_symbol(const SharedLibrary& lib, const char* symbol);

// unavailable: "<lib.path> lacks <symbol>: <consequence>".
Status missing_symbol(const SharedLibrary& lib, const char* symbol, std::string_view consequence);

// Sets `*entry` to `symbol` in `lib`, typed as the table's function pointer; missing_symbol
// when absent.
template <class Fn>
Status resolve_entry(const SharedLibrary& lib, const char* symbol, Fn** entry,
                     std::string_view consequence) {
  *entry = reinterpret_cast<Fn*>(find_symbol(lib, symbol));
  return *entry != nullptr ? Status{} : missing_symbol(lib, symbol, consequence);
}

}  // namespace tune::gpu
