// KernelDef: everything libtune needs to know about one tunable kernel.
//
// Only name, sources, signature, space and dims are required; the rest is optional and
// empty by default. A KernelDef is copied into its Autotuner; the callbacks it holds must be
// safe to call from any thread (they run on the calling thread of Autotuner::run, or on the
// background tuning thread).
//
// Any callback may throw: the exception is caught, and the call that ran it returns a
// callback_failed Status naming the callback and the configuration (see README, "What happens
// when things go wrong"). The key is not remembered, so a later call tunes it again.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tune/args.hpp"
#include "tune/config_space.hpp"
#include "tune/definitions.hpp"  // check_names: what Autotuner::make refuses
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

// The hook after a launch made while tuning, told the launch's outcome (Triton's
// post_hook(args, exception)): ok, or why the pre-hook, the launch, its timing or its
// verification failed. Built from a function of (Device&, ArgList, const Config&, const
// Status&), or of (Device&, ArgList, const Config&) that ignores the outcome.
class PostHook {
 public:
  using Fn = std::function<Status(Device&, ArgList, const Config&, const Status&)>;
  PostHook() = default;
  PostHook(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires std::is_invocable_r_v<Status, F&, Device&, ArgList, const Config&, const Status&>
  PostHook(F f) : fn_(std::move(f)) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires(!std::is_invocable_r_v<Status, F&, Device&, ArgList, const Config&, const Status&> &&
           std::is_invocable_r_v<Status, F&, Device&, ArgList, const Config&>)
      PostHook(F f)  // NOLINT(google-explicit-constructor)
      : fn_([f = std::move(f)](Device& d, ArgList a, const Config& c, const Status&) mutable {
          return f(d, a, c);
        }) {}
  explicit operator bool() const noexcept { return static_cast<bool>(fn_); }
  Status operator()(Device& dev, ArgList args, const Config& c, const Status& outcome) const {
    return fn_(dev, args, c, outcome);
  }

 private:
  Fn fn_;
};

// Explore the space with a strategy instead of timing every configuration: for spaces too
// large to time whole. Each evaluation compiles and times one configuration (no racing);
// early_prune and perf_model do not apply; stored timings are reused without cost.
struct SearchOptions {
  std::shared_ptr<const SearchStrategy> strategy;
  SearchBudget budget;
  std::uint64_t seed = 0;
};

// The expected contents of one output argument for one call: host bytes (uploaded once per
// tuning), or a buffer of the same device that the caller keeps valid for the call.
struct ExpectedOutput {
  std::vector<std::byte> host;
  const DeviceBuffer* device = nullptr;  // used when `host` is empty
};

// One output argument checked against its expected contents (KernelDef::reference).
struct ReferenceOutput {
  std::string arg;                     // a buffer argument of the signature
  std::optional<Tolerance> tolerance;  // default_tolerance(its element type) when unset
  // The expected contents for the call's arguments, asked once per tuning; empty: the output
  // of Reference::config on the same arguments.
  std::function<Result<ExpectedOutput>(Device&, ArgList)> expected;
};

// Verification against expected outputs, compared on the device (Device::compare: a comparison
// kernel where the backend has one, so only a few bytes come back). The reference
// configuration (Kernel Tuner's reference/answer) is compiled and launched once per tuning,
// and its outputs are kept on the device as the expected ones of every output without an
// `expected` callback. A mismatch fails the configuration with wrong_output naming the
// argument: mismatch count, first bad index, max abs and rel error.
struct Reference {
  std::vector<ReferenceOutput> outputs;
  std::optional<Config> config;
  explicit operator bool() const noexcept { return !outputs.empty(); }
};

struct KernelDef {
  std::string name;
  std::vector<KernelSource> sources;  // one per language; the device picks its own
  KernelSignature signature;
  ConfigSpace space;
  std::vector<KeySpec> key;
  // Grid and block of a launch. The block must equal config.launch().block when that is set
  // (Vulkan bakes the workgroup size into the compiled variant). A grid or block with a zero
  // dimension launches nothing: the configuration is refused (invalid_argument) while tuning.
  // Must be a pure function of (config, args): a cache hit whose arguments equal, bitwise, the
  // previous hit's on the same thread reuses the dims that call computed (the hit path calls no
  // user code). A dims that reads anything else (a global, a clock) is called once per distinct
  // arguments per thread, and its later answers for the same arguments are not seen.
  std::function<LaunchDims(const Config&, ArgList)> dims;

  std::vector<Heuristic> heuristics;
  // Early prune over the candidates and the call's arguments; returning none is an error, and
  // so is returning a configuration that is not one of the candidates' space (an undeclared
  // parameter, a value outside its domain).
  std::function<std::vector<Config>(std::vector<Config>, ArgList)> early_prune;
  PerfModel perf_model;
  SearchOptions search;  // empty strategy: time every candidate (the default)
  // Buffers (by argument name) zeroed / restored to their pre-tuning contents before every
  // launch made while tuning, so in-place and accumulating kernels tune correctly (Triton's
  // semantics). After a call that tuned, `restore_value` buffers hold the caller's contents
  // again and `reset_to_zero` buffers are zeroed before run()'s own launch, so the output
  // equals exactly one launch on zeroed buffers; tune() leaves every buffer as it found it.
  std::vector<std::string> reset_to_zero;
  std::vector<std::string> restore_value;
  // Around each launch made while tuning, outside the timed span. Strictly paired: every
  // pre_hook call is followed by exactly one post_hook call for the same configuration, told
  // the outcome, also when the pre-hook, the launch, the timing or the verification failed.
  DeviceHook pre_hook;
  PostHook post_hook;
  // Checks a configuration's output after one launch of it; a non-ok status (wrong_output)
  // drops the configuration with that reason. Only what can win is checked (README,
  // "Verification"): the configuration the winner rule puts first, before it is chosen (then
  // the next, if it fails), and every configuration Autotuner::measure times; every
  // configuration timed with AutotunerOptions::verify = every_configuration. Whether a
  // configuration was checked is reported and stored (ConfigResult::verification).
  DeviceHook verify;
  // Whether `verify` checks anything for a call's arguments, asked once per tuning; unset: it
  // always does. For a verify that compares against expectations given per call (Python's
  // `reference=`), which has nothing to compare on some calls: its configurations are then
  // reported and stored as not checked rather than verified. A throw counts as "it does" (the
  // verify hook then runs and answers for itself) and is logged naming the callback.
  std::function<bool(ArgList)> verify_applies;
  // Expected outputs compared on the device, checked as `verify` is (after it, when both are
  // set).
  Reference reference;

  // Zeroes the `reset_to_zero` buffers in `args`, as the Autotuner does before each launch it
  // makes: for programs that launch a compiled variant themselves (benches, tests, tools).
  // invalid_argument naming the entry when one is not a buffer argument of `args`; else what
  // Device::fill returns. Blocks as Device::fill does.
  Status zero_reset_buffers(Device& dev, ArgList args) const;
  // The same zeroing as device work (LaunchResets::zero), for a TimingPlan or BeforeLaunch to
  // record beside timed launches; zero_reset_buffers applies it at once. invalid_argument as
  // zero_reset_buffers.
  Result<LaunchResets> zero_resets(ArgList args) const;

  const KernelSource* source_for(Language l) const noexcept {
    for (const auto& s : sources)
      if (s.language == l) return &s;
    return nullptr;
  }
};

}  // namespace tune
