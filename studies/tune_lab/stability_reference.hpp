// What `tune-lab stability --quality` compares each tuning's pick against, and the heavy load it
// may put on the GPU before each tuning (issue 15: wrong picks after heavy load).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace tune::cli {

// Every candidate of one key, each compiled once: the reference and the judge
// (stability_judge.hpp) time the same variants. Owns its kernels; not thread-safe.
struct Candidates {
  const kernels::BundledKernel* kernel = nullptr;  // borrowed; outlives this
  const kernels::Workload* workload = nullptr;     // borrowed, set up; outlives this
  std::vector<Config> configs;
  std::vector<std::unique_ptr<CompiledKernel>> compiled;  // nullptr where compiling failed
  // The index of the configuration whose Config::to_string() is `text`, or configs.size().
  std::size_t find(const std::string& text) const;
};

// Lists the key's candidates as the Autotuner does (after pruning) and compiles each on `dev`.
// A candidate that fails to compile is kept without a kernel (no reference, never judged).
// Errors: the kernel has no source for this device, or listing the candidates failed.
Result<Candidates> compile_candidates(Device& dev, const kernels::BundledKernel& k,
                                      const kernels::Workload& w);

// Candidates `which` (indices into c.configs) in `rounds` rounds, in pairs: an order drawn
// from `seed` and turned each pair forward, the same reversed backward (turn_order,
// core/src/sustained_turn.hpp: the tuner's sustained turns take theirs the same way, so that no
// contender sits at the same moment of every pair); in each round every one of them runs one
// turn of `turn_ms` of back-to-back L2-flushed launches and the median of the turn's second
// half counts. Returns one median per round for each of `which`, in its order; NaN where that
// turn failed or the candidate has no kernel. The reference and the judge both time through
// this. Blocks. Fails only when the device is lost.
Result<std::vector<std::vector<double>>> alternating_turns(Device& dev, const Candidates& c,
                                                           const std::vector<std::size_t>& which,
                                                           int rounds, double turn_ms,
                                                           std::uint64_t seed);

// Each candidate's reference medians in nanoseconds, one per pass, by Config::to_string():
// every candidate of the key runs a turn of `turn_ms` of back-to-back L2-flushed launches, in
// passes_for(`passes`) passes (alternating_turns' pairs, their orders from `seed`); the median
// of each turn's second half counts (by then a power-limited GPU's clock has followed this
// candidate's own draw, not its neighbour's: what runs fastest back to back, as the tuner's
// sustained turns rank it; DeviceInfo::power_settle_ms). pass_means averages them (each pair's
// second pass reverses its first, so a clock that drifts through a pair favours nobody; more
// passes, less noise);
// pass_spread says how much the reference moved by itself. A candidate that failed to compile
// or run in any pass has none. Blocks; times on `dev`. Fails only when the device is lost.
Result<std::map<std::string, std::vector<double>>> reference_medians(Device& dev,
                                                                     const Candidates& c,
                                                                     double turn_ms, int passes,
                                                                     std::uint64_t seed);

// The passes a reference of `wanted` passes takes: at least two, rounded up to an even count
// (whole pairs: a forward pass without its backward one would favour one end of its order).
int passes_for(int wanted);

// Each candidate's mean over its passes.
std::map<std::string, double> pass_means(const std::map<std::string, std::vector<double>>& passes);

// The largest (slowest pass - fastest pass) / mean over the candidates within 5% of the
// fastest mean (the ones a pick can be judged against); 0 when there are none.
double pass_spread(const std::map<std::string, std::vector<double>>& passes);

// The fastest reference median (+inf when none).
double fastest(const std::map<std::string, double>& reference);

// Heavy GPU load for about `ms` milliseconds: the backend's largest bundled matmul demo size,
// launched back to back with its default configuration, then a synchronize. Does nothing for
// ms <= 0. Errors name the stage (no matmul for this backend, setup, launch).
Status heat_gpu(Device& dev, double ms);

}  // namespace tune::cli
