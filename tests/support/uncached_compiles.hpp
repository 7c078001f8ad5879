// Compiles that the compiler's own cache does not answer. NVRTC 12.9 and later keep a compile
// cache across processes (the driver's CUDA_CACHE_* variables govern it), and a compile it
// answers from there returns an empty log: no ptxas "Used N registers" line, no spill sizes.
// On the H200's NVRTC 13.0.88 about half of the sm_90 compiles of a test came back so, also
// with a comment making each source unique (the cache sits after the front end). A test that
// reads resources from the log holds an UncachedCompiles for the scope of those compiles:
// CUDA_CACHE_DISABLE=1, as it was afterwards. The process's own environment only: set before
// the compiles, restored after; not thread-safe (setenv).
#pragma once

#include "scoped_env.hpp"

namespace tune::testing {

class UncachedCompiles {
 public:
  UncachedCompiles() : env_("CUDA_CACHE_DISABLE", "1") {}

 private:
  ScopedEnv env_;
};

}  // namespace tune::testing
