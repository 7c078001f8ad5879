// time_kernel: Triton do_bench-style timing of one compiled variant on any Device.
//
// Estimate the cost from a few timed runs, derive warmup and repetition counts from the
// budgets in milliseconds, warm up, then time each repetition with device timestamps and an
// cold last-level cache before it (BenchOptions::cache). Blocks until done. BenchOptions is
// the timing policy: an effort's values, and the fields a user sets over them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tune/device.hpp"
#include "tune/effort.hpp"
#include "tune/sample_stats.hpp"

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

// What keeps each timed launch from finding its data in the last-level cache
// (DeviceInfo::llc_bytes), outside the timed span:
//   flush:  the backend overwrites a scratch buffer of twice the cache before each launch
//           (tune/backend/last_level_cache.hpp says why twice).
//   rotate: each launch takes the next of n copies of the kernel's input buffers, which
//           together exceed twice the cache, so no flush runs between launches (nvbench's and
//           Triton's rotating buffers). Inputs are the buffer arguments that reset_to_zero /
//           restore_value do not name; the copies are made once per tuning, so a pre-hook
//           that changes an input between launches is seen only by the caller's set. Each
//           repetition is its own Device::time call (as with a host step). Falls back to
//           flush, with a warning naming why and TuningReport::timing_cache saying so, when
//           the copies would exceed TimingExpert::rotate_max_bytes, the device runs out of memory
//           for one (those made are freed), more than 256 sets would be needed, or no buffer is an
//           input. Only the timed samples rotate: warm-up, estimate and clock settling
//           launches use the caller's buffers and flush. After tuning, launches use the
//           caller's buffers.
//   none:   nothing: launches find what the previous one left in the cache (a kernel that
//           runs warm in the application).
enum class TimingCache : std::uint8_t { flush, rotate, none };
std::string_view to_string(TimingCache c) noexcept;  // "flush", "rotate", "none"

// Every knob of timing beyond BenchOptions' own, for studies and for a device on which a
// preset has been measured not to suit. docs/timing.md says what each does and why; each
// unset field takes the effort's value (AutotunerOptions::effort; the options reference lists
// them).
struct TimingExpert {
  // Warm-up of each configuration after the first within one tuning.
  std::optional<double> warmup_next_ms;
  std::optional<int> estimate_runs;  // timed runs that estimate one launch's cost
  std::optional<int> min_reps;       // the fewest repetitions rep_ms may buy
  std::optional<int> max_reps;       // the most
  // TimingCache::rotate: the copies' cap in bytes (0: a quarter of device memory).
  std::optional<std::uint64_t> rotate_max_bytes;

  // Clock settling before timing: a window of this much device time over which the time per
  // launch must stop falling (negative: DeviceInfo::clock_settle_ms).
  std::optional<double> settle_window_ms;
  std::optional<double> settle_max_ms;     // at most this much device time (0: off)
  std::optional<double> settle_batch_ms;   // one batch's device time
  std::optional<double> settle_tolerance;  // "stopped falling": by no more than this fraction

  std::optional<int> race_batch;          // racing: repetitions per contestant and round
  std::optional<int> race_min_samples;    // racing: samples both need before one is dropped
  std::optional<double> race_confidence;  // racing: of the median intervals it compares
  std::optional<double> race_tolerance;   // racing's share of BenchOptions::tolerance
  std::optional<double> tie_tolerance;    // the winner rule's share of it

  std::optional<int> showdown_rounds;            // interleaved rounds (0: no showdown at all)
  std::optional<int> showdown_finalists;         // the most contestants in it
  std::optional<double> showdown_margin;         // finalists: within this of the fastest
  std::optional<int> showdown_retries;           // re-timings of an attempt that shifted
  std::optional<int> showdown_screen_rounds;     // the screen's rounds (0: no screen)
  std::optional<double> showdown_screen_margin;  // the screen: within this of the fastest
  // A sustained turn's length (negative: twice DeviceInfo::power_settle_ms; 0: no turns).
  std::optional<double> showdown_sustain_ms;
  std::optional<double> showdown_sustain_margin;   // turns: within this of the fastest
  std::optional<int> showdown_sustain_pairs;       // the most forward/backward pairs of rounds
  std::optional<int> showdown_sustain_contenders;  // the most contestants in turns
  std::optional<std::uint64_t> showdown_seed;      // the turns' order (0: a fresh one each time)
};

// How each configuration is timed: an effort (AutotunerOptions::effort: quick, standard,
// thorough) plus the fields a user sets. A field left unset takes the effort's value (the
// options reference lists them; standard's are Triton's budgets, racing on, a 1% tolerance).
struct BenchOptions {
  // The first configuration's warm-up, in ms of device time (launch counts follow from a few
  // estimate runs).
  std::optional<double> warmup_ms;
  std::optional<double> rep_ms;  // each configuration's timed repetitions, in ms
  // Fixed counts instead of the budgets (Triton's do_bench(n_warmup, n_repeat)): exactly
  // `warmup_count` untimed launches, then at most `rep_count` timed ones (exactly, racing off).
  std::optional<int> warmup_count;
  std::optional<int> rep_count;
  // Drop a configuration once it is slower than the leader beyond noise.
  std::optional<bool> racing;
  // A difference this small (a fraction) does not matter: racing stops telling such
  // contestants apart, and the winner rule takes them as equal (the first in canonical order
  // wins). A pick may be this much slower than the best, beyond the timing's own error.
  std::optional<double> tolerance;
  std::optional<TimingCache> cache;  // what keeps the last-level cache cold
  std::optional<double> timeout_ms;  // per launch
  TimingExpert expert;               // every other knob
};

// Checks every field set (finite, in range) and what they make with the effort's values; the
// message names the field (BenchOptions::warmup_ms, BenchOptions::expert.race_batch).
// Autotuner::make calls it with AutotunerOptions::effort.
Status validate(const BenchOptions& opts, Effort effort = Effort::standard);

// What a tuning's showdown did (TuningReport::showdown; docs/timing.md, "The showdown").
struct ShowdownReport {
  int screened = 0;             // contestants timed in the screen; 0: no screen was held
  int finalists = 0;            // contestants timed in it; 0: no showdown was held
  int rounds = 0;               // rounds timed, re-timed attempts included
  int retimed = 0;              // attempts thrown away because their samples shifted
  bool stationary = true;       // false: even the last attempt shifted (it was kept; see the log)
  int sustained = 0;            // contestants timed in sustained turns; 0: none were held
  int sustained_pairs = 0;      // forward/backward pairs of them (more until the pick is decided)
  int sustained_ruled_out = 0;  // contenders whose turns stopped early, clearly behind the leader
  int sustained_turns = 0;      // turns timed in all (each of showdown_sustain_ms)
  // Each sustained contender's turn medians in ns, round by round (fewer for one whose turns
  // stopped early; NaN for one whose timing failed), by its configuration's text: what
  // decided, for reports and studies.
  std::map<std::string, std::vector<double>> sustained_medians;
  // Each round's turns in the order they ran (by the same names; a pair's backward round is
  // its forward one reversed, less any contender dropped in between): which moment of each
  // round each contender took.
  std::vector<std::vector<std::string>> sustained_order;
  // The seed the rounds' orders were drawn from (TimingExpert::showdown_seed, or the fresh one
  // drawn when that was 0); 0 when no sustained turns were held.
  std::uint64_t sustained_seed = 0;
};

// Median and quantiles of the timed repetitions, in nanoseconds, with `opts` resolved for
// `effort`. `before` (optional) runs before every launch (warmup, estimate and timed),
// outside the timed span.
Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const BenchOptions& opts,
                                const BeforeLaunch& before = {}, Effort effort = Effort::standard);

}  // namespace tune
