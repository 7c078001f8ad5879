// The racing machinery behind time_kernel and the Autotuner (internal: not installed).
//
// Warm-up, clock settling, repetition counts and Race, the statistical early stopping of
// several contestants (TimingPolicy::racing, tune/benchmark.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "input_rotation.hpp"
#include "timing_policy.hpp"

namespace tune {

// The warm-up half of time_kernel: one untimed launch, a timed estimate, then warmup launches
// for `warmup_ms`. Returns the estimated duration of one launch in nanoseconds.
Result<double> warm_up(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                       ArgList args, const TimingPolicy& opts, const BeforeLaunch& before = {});

// Runs `kernel` in back-to-back timed batches until its time per launch stops falling (see
// TimingPolicy::settle_window_ms), starting from `estimate_ns` per launch. Returns the last
// batch's median in nanoseconds (the estimate itself when settling is off). Blocks.
Result<double> settle_clocks(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                             ArgList args, const TimingPolicy& opts, double estimate_ns,
                             const BeforeLaunch& before = {});

// time_kernel (tune/benchmark.hpp) on a resolved policy.
Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const TimingPolicy& opts,
                                const BeforeLaunch& before = {});

// Repetitions that `rep_ms` buys at `estimate_ns` per launch, within [min_reps, max_reps];
// rep_count when that is set.
int reps_for(double estimate_ns, const TimingPolicy& opts) noexcept;

// One contestant of a race (see TimingPolicy::racing).
struct RaceEntry {
  const CompiledKernel* kernel = nullptr;
  LaunchDims dims;
  BeforeLaunch before;  // may be empty
  // May be empty: runs after each batch of repetitions, told the batch's outcome (ok, or why
  // its timing failed). Its own failure drops the entry.
  std::function<Status(const Status&)> after_batch;
  double estimate_ns = 0;  // from warm_up
  // The configuration's canonical text (Config::to_string): the winner rule's order among
  // near-ties, and the name in ShowdownReport::sustained_medians. May be empty (then ties go
  // to the faster at the showdown and the name is "#<index>").
  std::string config_text;
  // Outputs.
  std::vector<double> samples;
  Status status;           // a failed timing drops the entry with this reason
  bool raced_out = false;  // dropped as slower than the leader beyond noise
  // Stopped: within race_tolerance of the leader (may even be faster).
  bool within_tolerance = false;
};

// When work last finished on a device, so that timing settles its clock (settle_clocks) once
// and then again only after a pause long enough for a driver to have lowered it (NVIDIA's
// Vulkan driver: about 2 s). Not thread-safe.
class ClockWatch {
 public:
  static constexpr std::chrono::milliseconds kPause{1000};
  bool needs_settling() const noexcept {
    return !busy_ || std::chrono::steady_clock::now() - *busy_ > kPause;
  }
  void busy() noexcept { busy_ = std::chrono::steady_clock::now(); }

 private:
  std::optional<std::chrono::steady_clock::time_point> busy_;
};

// Times contestants (already warmed up) by racing or exhaustively, per opts.racing, in rounds:
// each round gives every contestant still in the race a batch of race_batch repetitions (its
// whole budget when not racing), then decides who is out. Contestants may join between rounds
// (the Autotuner races those already compiled while others still compile); the first round
// settles the clock (settle_clocks) with the fastest-looking contestant, and so does the
// first round after a pause (ClockWatch).
// Not thread-safe; blocks in round() and run(). Borrows the device for its lifetime.
class Race {
 public:
  Race(Device& dev, ArgList args, const TimingPolicy& opts);
  // A warmed-up contestant; timed from the next round on.
  void add(RaceEntry e);
  // One round. Returns whether any contestant was timed (false: nothing left to time); non-ok
  // only for device_lost, which ends the race at once.
  Result<bool> round();
  // Rounds until every contestant is out of budget or decided.
  Status run();
  // After the last round: the finalists' showdown (run_showdown in showdown.hpp), when racing
  // and not with fixed counts. Non-ok only for device_lost.
  Result<ShowdownReport> finish();
  // Racing, and the last round left only the leader undecided: more rounds would time it
  // alone. A contestant added since resets this.
  bool decided() const noexcept;
  // Takes entry `i` out of the race with `why` (its output failed verification): it is never
  // timed again nor led, and the race is undecided until the next round decides anew.
  void drop(std::size_t i, Status why);
  // In the order they were added, with their samples and outcomes.
  std::vector<RaceEntry>& entries() noexcept { return entries_; }
  const std::vector<RaceEntry>& entries() const noexcept { return entries_; }
  // What kept the cache cold (TimingPolicy::cache, or flush where rotation fell back).
  TimingCache timing_cache() const noexcept;
  // The rotating input copies (TimingPolicy::cache == rotate), made at the first round from
  // the first contestant's resets; null before that or for other choices.
  const InputRotation* rotation() const noexcept { return rotation_ ? &*rotation_ : nullptr; }

 private:
  bool alive(std::size_t i) const;
  // The contestant with the lowest median among those timed without error and not raced out
  // (stopped ones included: one within tolerance can still win); none before any is timed.
  std::optional<std::size_t> leader() const;
  Status settle();
  Status make_rotation();
  void decide();

  Device& dev_;
  ArgList args_;
  TimingPolicy opts_;
  std::vector<RaceEntry> entries_;
  std::vector<int> budget_;  // repetitions each may take in all; -1 until its first round
  ClockWatch clock_;
  int undecided_ = -1;  // contestants the last decision left racing besides the leader
  std::optional<InputRotation> rotation_;
};

// `reps` timed repetitions with `before` ahead of each one (see BeforeLaunch). With an active
// `rotation`, each repetition is a Device::time call of its own on the rotation's next
// argument set, without a flush; otherwise on `args`, flushed unless opts.cache is none.
Result<std::vector<double>> time_reps(Device& dev, const CompiledKernel& kernel,
                                      const LaunchDims& dims, ArgList args,
                                      const TimingPolicy& opts, int reps,
                                      const BeforeLaunch& before = {},
                                      InputRotation* rotation = nullptr);

}  // namespace tune
