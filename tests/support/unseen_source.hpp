// A kernel source that no compiler cache has seen. NVRTC 12.9 and later keep their own compile
// cache across processes (CUDA_CACHE_DISABLE / CUDA_CACHE_PATH govern it), and a compile it
// answers from there returns an empty log: no ptxas "Used N registers" line, no spill sizes
// (seen on the H200's NVRTC 13.0.88 after an earlier run had compiled the same variants). A test
// that reads resources from the log compiles a text that cannot have been compiled before: the
// source with a comment naming this process and a counter appended (the code is unchanged).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>

#include "tune/device.hpp"

namespace tune::testing {

inline KernelSource unseen_source(KernelSource s) {
  static std::atomic<unsigned> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  s.text += "\n// libtune test compile " + std::to_string(::getpid()) + "-" + std::to_string(now) +
            "-" + std::to_string(counter++) + "\n";
  return s;
}

}  // namespace tune::testing
