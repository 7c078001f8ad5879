// KernelDef: everything libtune needs to know about one tunable kernel.
//
// Only name, sources, signature, space and dims are required; the rest is optional and
// empty by default. A KernelDef is copied into its Autotuner; the callbacks it holds must be
// safe to call from any thread (they run on the calling thread of Autotuner::run).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tune/args.hpp"
#include "tune/config_space.hpp"
#include "tune/device.hpp"
#include "tune/key.hpp"
#include "tune/search.hpp"

namespace tune {

// A parameter computed from the arguments with no benchmarking (Triton's `heuristics`).
// Its value joins the key, so calls whose heuristic values differ never share a result.
struct Heuristic {
  std::string param;
  std::function<Value(ArgList, const DeviceInfo&)> fn;
};

// An analytic estimate of a configuration's run time (any unit, lower is better); keeps the
// best `top_k` candidates, or the best `top_fraction` of them (at least one), before timing.
struct PerfModel {
  std::function<double(const Config&, ArgList, const DeviceInfo&)> estimate;
  int top_k = 0;
  double top_fraction = 0.0;
  explicit operator bool() const noexcept { return static_cast<bool>(estimate); }
};

using DeviceHook = std::function<Status(Device&, ArgList, const Config&)>;

// Explore the space with a strategy instead of timing every configuration: for spaces too
// large to time whole. Each evaluation compiles and times one configuration (no racing);
// early_prune and perf_model do not apply; stored timings are reused without cost.
struct SearchOptions {
  std::shared_ptr<const SearchStrategy> strategy;
  SearchBudget budget;
  std::uint64_t seed = 0;
};

struct KernelDef {
  std::string name;
  std::vector<KernelSource> sources;  // one per language; the device picks its own
  KernelSignature signature;
  ConfigSpace space;
  std::vector<KeySpec> key;
  // Grid and block of a launch. The block must equal config.launch().block when that is set
  // (Vulkan bakes the workgroup size into the compiled variant).
  std::function<LaunchDims(const Config&, ArgList)> dims;

  std::vector<Heuristic> heuristics;
  // Early prune over the candidates and the call's arguments; returning none is an error.
  std::function<std::vector<Config>(std::vector<Config>, ArgList)> early_prune;
  PerfModel perf_model;
  SearchOptions search;  // empty strategy: time every candidate (the default)
  // Buffers (by argument name) zeroed / restored to their pre-tuning contents before every
  // timed launch, so in-place and accumulating kernels tune correctly.
  std::vector<std::string> reset_to_zero;
  std::vector<std::string> restore_value;
  // Around each timed launch, outside the timed span.
  DeviceHook pre_hook;
  DeviceHook post_hook;
  // Checks a configuration's output after its first launch during tuning; a non-ok status
  // (wrong_output) drops the configuration with that reason.
  DeviceHook verify;

  const KernelSource* source_for(Language l) const noexcept {
    for (const auto& s : sources)
      if (s.language == l) return &s;
    return nullptr;
  }
};

}  // namespace tune
