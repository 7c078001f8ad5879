// time_kernel: Triton do_bench-style timing of one compiled variant on any Device.
//
// Estimate the cost from a few timed runs, derive warmup and repetition counts from the
// budgets in milliseconds, warm up, then time each repetition with device timestamps and an
// L2 flush before it. Blocks until done.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "tune/device.hpp"
#include "tune/stats.hpp"

namespace tune {

// What runs before every launch that benchmarking makes (untimed, estimate and timed), outside
// the timed span: `resets` on the device, then `host` (may be empty). Without a host step the
// resets travel in each TimingPlan and the backend batches repetitions; with one, every timed
// repetition is its own Device::time call, made after the resets (fill/copy) and the host step.
// Converts from any callable returning Status (the host step alone).
struct BeforeLaunch {
  LaunchResets resets;
  std::function<Status()> host;

  BeforeLaunch() = default;
  template <class F>
  requires(!std::is_same_v<std::decay_t<F>, BeforeLaunch> && std::is_invocable_r_v<Status, F&>)
      BeforeLaunch(F f)
      : host(std::move(f)) {}  // NOLINT: implicit on purpose
  bool empty() const noexcept { return resets.empty() && !host; }
};

// Checks every field (finite, in range); the message names the field. Autotuner::make calls it.
struct BenchOptions;
Status validate(const BenchOptions& opts);

struct BenchOptions {
  double warmup_ms = 25.0;  // Triton's default budgets
  double rep_ms = 100.0;
  // Warm-up of each configuration after the first within one tuning. The first one's
  // warmup_ms brings clocks and caches up; later ones still get an untimed launch (module
  // load, lazy JIT) and the estimate runs, then only this much more.
  double warmup_next_ms = 2.0;
  int estimate_runs = 5;
  int min_reps = 5;
  int max_reps = 1000;
  bool flush_l2 = true;
  double timeout_ms = 10000.0;  // per launch

  // Fixed repetition counts instead of the budgets in milliseconds (Triton's
  // do_bench(n_warmup, n_repeat)). When rep_count > 0, a configuration gets exactly
  // `warmup_count` untimed launches and then at most `rep_count` timed ones, and nothing
  // else: no untimed first launch, no estimate runs, no clock settling. With racing on, a
  // contestant may stop before rep_count; with racing off it gets exactly rep_count. A
  // `verify` callback adds its one launch per configuration. 0: the budgets above decide.
  int warmup_count = 0;
  int rep_count = 0;

  // Clock settling. Some drivers lower the GPU clock whenever the GPU has idled for a moment
  // and raise it in steps under sustained load (NVIDIA's Vulkan driver on the H200: 345 MHz
  // after ~2 s idle, then a step about every 200 ms, 1980 MHz after ~1 s of load), and a
  // kernel timed at the idle clock runs 3-4x slower. Before timing starts (time_kernel, and
  // the start of each race) one kernel runs in back-to-back timed batches of about
  // `settle_batch_ms` until its median has not fallen by more than `settle_tolerance` over
  // the last `settle_window_ms` of device time (the clock has stopped rising), for at most
  // `settle_max_ms` of device time. The window must span the governor's longest step, which
  // no batch-to-batch comparison can see coming. settle_window_ms < 0 (the default): the
  // device's DeviceInfo::clock_settle_ms, and no settling at all where that is 0 (CUDA,
  // lavapipe), so those devices pay nothing. settle_max_ms 0: off.
  double settle_window_ms = -1.0;
  double settle_max_ms = 3000.0;
  double settle_batch_ms = 5.0;
  double settle_tolerance = 0.02;

  // Racing (statistical early stopping) when tuning several configurations: time them in
  // rounds of `race_batch` repetitions each and drop a configuration once its median is
  // slower than the leader's beyond noise: the distribution-free `race_confidence` interval
  // of its median lies wholly above the leader's (see median_interval in stats.hpp), with at
  // least `race_min_samples` samples on both. Never takes more samples than exhaustive timing
  // would. Off: every configuration gets its full repetition budget.
  // A contestant also stops (`settled`) once it cannot be more than `race_tolerance` faster
  // than the leader at that confidence: the low end of its interval is at least (1 -
  // race_tolerance) times the high end of the leader's. Without this, near-ties spend their
  // whole budgets telling apart configurations whose difference does not matter; the pick
  // is then at most race_tolerance slower than the best (0: race to the full budget).
  bool racing = true;
  int race_batch = 5;
  int race_min_samples = 10;
  double race_confidence = 0.99;
  double race_tolerance = 0.01;
};

// The warm-up half of time_kernel: one untimed launch, a timed estimate, then warmup launches
// for `warmup_ms`. Returns the estimated duration of one launch in nanoseconds.
Result<double> warm_up(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                       ArgList args, const BenchOptions& opts, const BeforeLaunch& before = {});

// Runs `kernel` in back-to-back timed batches until its time per launch stops falling (see
// BenchOptions::settle_window_ms), starting from `estimate_ns` per launch. Returns the last
// batch's median in nanoseconds (the estimate itself when settling is off). Blocks.
Result<double> settle_clocks(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                             ArgList args, const BenchOptions& opts, double estimate_ns,
                             const BeforeLaunch& before = {});

// Repetitions that `rep_ms` buys at `estimate_ns` per launch, within [min_reps, max_reps];
// rep_count when that is set.
int reps_for(double estimate_ns, const BenchOptions& opts) noexcept;

// One contestant of a race (see BenchOptions::racing).
struct RaceEntry {
  const CompiledKernel* kernel = nullptr;
  LaunchDims dims;
  BeforeLaunch before;  // may be empty
  // May be empty: runs after each batch of repetitions, told the batch's outcome (ok, or why
  // its timing failed). Its own failure drops the entry.
  std::function<Status(const Status&)> after_batch;
  double estimate_ns = 0;  // from warm_up
  // Outputs.
  std::vector<double> samples;
  Status status;           // a failed timing drops the entry with this reason
  bool raced_out = false;  // dropped as slower than the leader beyond noise
  bool settled = false;    // stopped: within race_tolerance of the leader (may even be faster)
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
  Race(Device& dev, ArgList args, const BenchOptions& opts);
  // A warmed-up contestant; timed from the next round on.
  void add(RaceEntry e);
  // One round. Returns whether any contestant was timed (false: nothing left to time); non-ok
  // only for device_lost, which ends the race at once.
  Result<bool> round();
  // Rounds until every contestant is out of budget or decided.
  Status run();
  // Racing, and the last round left only the leader undecided: more rounds would time it
  // alone. A contestant added since resets this.
  bool decided() const noexcept;
  // In the order they were added, with their samples and outcomes.
  std::vector<RaceEntry>& entries() noexcept { return entries_; }

 private:
  bool alive(std::size_t i) const;
  Status settle();
  void decide();

  Device& dev_;
  ArgList args_;
  BenchOptions opts_;
  std::vector<RaceEntry> entries_;
  std::vector<int> budget_;  // repetitions each may take in all; -1 until its first round
  ClockWatch clock_;
  int undecided_ = -1;  // contestants the last decision left racing besides the leader
};

// `reps` timed repetitions with `before` ahead of each one (see BeforeLaunch).
Result<std::vector<double>> time_reps(Device& dev, const CompiledKernel& kernel,
                                      const LaunchDims& dims, ArgList args,
                                      const BenchOptions& opts, int reps,
                                      const BeforeLaunch& before = {});

// Median and quantiles of the timed repetitions, in nanoseconds. `before` (optional) runs
// before every launch (warmup, estimate and timed), outside the timed span.
Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const BenchOptions& opts,
                                const BeforeLaunch& before = {});

}  // namespace tune
