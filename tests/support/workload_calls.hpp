// Calls of one bundled kernel on workloads it made (random inputs from a seed): what the
// programs that tune on real devices pass to Autotuner and tune::mpi (tests/mpi's
// mpi_vulkan_test, bench/mpi_tuning).
//
// Ownership: owns the workloads; each ArgList in `calls` points into its workload (valid while
// this object lives). Thread safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tune/kernels/bundled.hpp"

namespace tune::testing {

struct WorkloadCalls {
  std::vector<std::unique_ptr<kernels::Workload>> loads;
  std::vector<ArgList> calls;  // calls[i] is loads[i]->args()

  // A workload of `k` for problem `dims`, set up on `dev` with inputs from `seed`, and its call.
  Status add(const kernels::BundledKernel& k, Device& dev, std::span<const std::int64_t> dims,
             std::uint64_t seed) {
    auto load = k.workload(dims);
    TUNE_RETURN_IF_ERROR(load->setup(dev, seed));
    calls.push_back(load->args());
    loads.push_back(std::move(load));
    return {};
  }
};

}  // namespace tune::testing
