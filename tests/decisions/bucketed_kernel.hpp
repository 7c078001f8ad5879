// The simulated kernel of the bucket tests: sim_kernel over BM in {16, 32, 64}, keyed pow2(n).
#pragma once

#include "../core/sim_fixture.hpp"

namespace tune::testing {

inline KernelDef bucketed_kernel() {
  KernelDef def = sim_kernel(bm_space({16, 32, 64}));
  def.key = {KeySpec::pow2("n")};
  return def;
}

}  // namespace tune::testing
