#include "tune/benchmark.hpp"
#include "race.hpp"
#include "showdown.hpp"
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "tune/log.hpp"

namespace tune {
namespace {

TimingPlan timing_plan(const TimingPolicy& opts, int reps, const LaunchResets& resets) {
  TimingPlan plan;
  plan.reps = reps;
  plan.flush_l2 = opts.cache != TimingCache::none;  // rotate without a rotation: flush
  plan.resets = resets;
  plan.timeout_ms = opts.timeout_ms;
  return plan;
}

// Before an untimed launch (or a timed one made alone): the resets, then the host step.
Status run_before(Device& dev, const BeforeLaunch& before) {
  if (!before.resets.empty()) TUNE_RETURN_IF_ERROR(apply_resets(dev, before.resets));
  return before.host ? before.host() : Status();
}

}  // namespace

std::string_view to_string(TimingCache c) noexcept {
  switch (c) {
    case TimingCache::flush:
      return "flush";
    case TimingCache::rotate:
      return "rotate";
    case TimingCache::none:
      return "none";
  }
  return "?";
}

Result<double> warm_up(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                       ArgList args, const TimingPolicy& opts, const BeforeLaunch& before) {
  if (opts.rep_count > 0) {
    // Fixed counts: exactly warmup_count launches, no estimate (budgets come from rep_count).
    for (int i = 0; i < opts.warmup_count; ++i) {
      TUNE_RETURN_IF_ERROR(run_before(dev, before));
      TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
    }
    if (opts.warmup_count > 0) TUNE_RETURN_IF_ERROR(dev.synchronize());
    return 1.0;
  }
  // One untimed launch first: module load and lazy pipeline JIT happen here, not in samples.
  TUNE_RETURN_IF_ERROR(run_before(dev, before));
  TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  TUNE_RETURN_IF_ERROR(dev.synchronize());

  auto est = time_reps(dev, kernel, dims, args, opts, std::max(1, opts.estimate_runs), before);
  if (!est.ok()) return est.status();
  if (est->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  double est_ns = std::max(summarize(*est).median, 1.0);

  auto n_warmup = static_cast<int>(std::min(100000.0, std::floor(opts.warmup_ms * 1e6 / est_ns)));
  for (int i = 0; i < n_warmup; ++i) {
    TUNE_RETURN_IF_ERROR(run_before(dev, before));
    TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  }
  if (n_warmup > 0) TUNE_RETURN_IF_ERROR(dev.synchronize());
  return est_ns;
}

Result<double> settle_clocks(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                             ArgList args, const TimingPolicy& opts, double estimate_ns,
                             const BeforeLaunch& before) {
  if (opts.settle_max_ms <= 0 || opts.rep_count > 0) return estimate_ns;
  const double window_ms =
      opts.settle_window_ms < 0 ? dev.info().clock_settle_ms : opts.settle_window_ms;
  if (opts.settle_window_ms < 0 && window_ms <= 0) return estimate_ns;
  const double window_ns = window_ms * 1e6;
  struct Batch {
    double end_ns;  // device time spent when it ended
    double median;
  };
  std::vector<Batch> history;
  double spent_ns = 0, median = estimate_ns;
  // Each sample counts at least one timer tick, so a device that reports zero durations
  // cannot keep this loop going; the batch count is capped for the same reason.
  const double tick = std::max(dev.info().timer_resolution_ns, 1.0);
  for (int batches = 0; spent_ns < opts.settle_max_ms * 1e6 && batches < 10000; ++batches) {
    // Sized from the latest median, so batches stay near settle_batch_ms as the clock rises.
    const auto reps = static_cast<int>(
        std::clamp(std::ceil(opts.settle_batch_ms * 1e6 / std::max(median, 1.0)), 3.0, 10000.0));
    auto t = time_reps(dev, kernel, dims, args, opts, reps, before);
    if (!t.ok()) return t.status();
    if (t->empty()) return Status(StatusCode::internal, "device returned no timing samples");
    for (double ns : *t) spent_ns += std::max(ns, tick);
    median = std::max(summarize(*t).median, 1.0);
    // Compare with the last batch that ended at least a window ago (the previous batch for a
    // zero window): a clock level held for less than the window shows as a fall.
    const Batch* ref = nullptr;
    for (const Batch& b : history)
      if (b.end_ns <= spent_ns - std::max(window_ns, 1.0)) ref = &b;
    if (ref != nullptr && median >= ref->median * (1.0 - opts.settle_tolerance)) break;
    history.push_back({spent_ns, median});
  }
  return median;
}

int reps_for(double estimate_ns, const TimingPolicy& opts) noexcept {
  if (opts.rep_count > 0) return opts.rep_count;
  double reps = std::floor(opts.rep_ms * 1e6 / std::max(estimate_ns, 1.0));
  return static_cast<int>(std::clamp(reps, static_cast<double>(std::max(1, opts.min_reps)),
                                     static_cast<double>(std::max(1, opts.max_reps))));
}

Result<std::vector<double>> time_reps(Device& dev, const CompiledKernel& kernel,
                                      const LaunchDims& dims, ArgList args,
                                      const TimingPolicy& opts, int reps,
                                      const BeforeLaunch& before, InputRotation* rotation) {
  if (rotation != nullptr && rotation->active()) {
    // One call per rep: each takes the next argument set, and the sets replace the flush.
    TimingPolicy unflushed = opts;
    unflushed.cache = TimingCache::none;
    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(std::max(reps, 0)));
    for (int i = 0; i < reps; ++i) {
      if (before.host) TUNE_RETURN_IF_ERROR(run_before(dev, before));
      auto t = dev.time(kernel, dims, rotation->next(),
                        timing_plan(unflushed, 1, before.host ? LaunchResets{} : before.resets));
      if (!t.ok()) return t.status();
      samples.insert(samples.end(), t->begin(), t->end());
    }
    return samples;
  }
  if (!before.host) return dev.time(kernel, dims, args, timing_plan(opts, reps, before.resets));
  // A host step cannot run inside the backend's timing loop: one Device::time call per rep.
  if (reps <= 0) return dev.time(kernel, dims, args, timing_plan(opts, reps, {}));
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    TUNE_RETURN_IF_ERROR(run_before(dev, before));
    auto t = dev.time(kernel, dims, args, timing_plan(opts, 1, {}));
    if (!t.ok()) return t.status();
    samples.insert(samples.end(), t->begin(), t->end());
  }
  return samples;
}

Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const TimingPolicy& opts,
                                const BeforeLaunch& before) {
  auto est = warm_up(dev, kernel, dims, args, opts, before);
  if (!est.ok()) return est.status();
  est = settle_clocks(dev, kernel, dims, args, opts, *est, before);
  if (!est.ok()) return est.status();
  std::optional<InputRotation> rotation;
  if (opts.cache == TimingCache::rotate) {
    auto made = InputRotation::make(dev, args, before.resets, opts.rotate_max_bytes);
    if (!made.ok()) return made.status();
    rotation = std::move(*made);
    if (!rotation->active()) log_warning("timing flushes instead: " + rotation->fallback());
  }
  auto samples = time_reps(dev, kernel, dims, args, opts, reps_for(*est, opts), before,
                           rotation ? &*rotation : nullptr);
  if (!samples.ok()) return samples.status();
  if (samples->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  return summarize(*samples);
}

Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const BenchOptions& opts, const BeforeLaunch& before,
                                Effort effort) {
  TUNE_RETURN_IF_ERROR(validate(opts, effort));
  return time_kernel(dev, kernel, dims, args, resolve_timing(opts, effort), before);
}

Race::Race(Device& dev, ArgList args, const TimingPolicy& opts)
    : dev_(dev), args_(args), opts_(opts) {}

void Race::add(RaceEntry e) {
  entries_.push_back(std::move(e));
  budget_.push_back(-1);  // sized at its first round, after any settling
  undecided_ = -1;        // a new contestant: nothing is decided about it yet
}

bool Race::decided() const noexcept {
  return opts_.racing && entries_.size() > 1 && undecided_ == 0;
}

bool Race::alive(std::size_t i) const {
  const auto& e = entries_[i];
  return e.status.ok() && !e.raced_out && !e.within_tolerance;
}

Status Race::settle() {
  // Bring the clock up with the fastest-looking entry. Estimates made while it was down are
  // too high by about the same factor for every entry, so those not yet sized are scaled
  // down with it (they only size repetition budgets); entries sized earlier were estimated
  // at a clock already settled.
  std::size_t first = entries_.size();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].status.ok() || entries_[i].estimate_ns <= 0) continue;
    if (first == entries_.size() || entries_[i].estimate_ns < entries_[first].estimate_ns)
      first = i;
  }
  if (first == entries_.size()) return {};
  RaceEntry& e = entries_[first];
  auto settled = settle_clocks(dev_, *e.kernel, e.dims, args_, opts_, e.estimate_ns, e.before);
  Status after = e.after_batch ? e.after_batch(settled.status()) : Status();
  clock_.busy();
  if (!settled.ok() && settled.status().code() == StatusCode::device_lost) return settled.status();
  if (after.code() == StatusCode::device_lost) return after;
  if (!settled.ok()) {
    e.status = settled.status();
  } else if (!after.ok()) {
    e.status = after;
  } else if (*settled < e.estimate_ns) {
    const double scale = *settled / e.estimate_ns;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (budget_[i] < 0) entries_[i].estimate_ns *= scale;
  }
  return {};
}

TimingCache Race::timing_cache() const noexcept {
  return timing_cache_used(opts_.cache, rotation());
}

Status Race::make_rotation() {
  if (opts_.cache != TimingCache::rotate || rotation_ || entries_.empty()) return {};
  // Every contestant is the same kernel on the same arguments: the first one's resets name
  // the buffers it writes.
  auto made =
      InputRotation::make(dev_, args_, entries_.front().before.resets, opts_.rotate_max_bytes);
  if (!made.ok()) return made.status();
  rotation_ = std::move(*made);
  if (!rotation_->active()) log_warning("timing flushes instead: " + rotation_->fallback());
  return {};
}

Result<bool> Race::round() {
  TUNE_RETURN_IF_ERROR(make_rotation());
  // Settle at the first round, and again after a pause long enough for a driver to have
  // lowered the clock (the Autotuner may wait for compiles with nothing left to time).
  if (clock_.needs_settling()) TUNE_RETURN_IF_ERROR(settle());
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (budget_[i] < 0) budget_[i] = reps_for(entries_[i].estimate_ns, opts_);
  const bool racing = opts_.racing && entries_.size() > 1;
  const int batch = std::max(1, opts_.race_batch);
  bool progressed = false;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto& e = entries_[i];
    int have = static_cast<int>(e.samples.size());
    if (!alive(i) || have >= budget_[i]) continue;
    const int reps = racing ? std::min(batch, budget_[i] - have) : budget_[i] - have;
    auto s = time_reps(dev_, *e.kernel, e.dims, args_, opts_, reps, e.before,
                       rotation_ ? &*rotation_ : nullptr);
    Status after = e.after_batch ? e.after_batch(s.status()) : Status();
    if (!s.ok()) {
      if (s.status().code() == StatusCode::device_lost) return s.status();
      e.status = s.status();
      continue;
    }
    if (!after.ok()) {
      if (after.code() == StatusCode::device_lost) return after;
      e.status = after;
      continue;
    }
    if (s->empty()) {
      e.status = Status(StatusCode::internal, "device returned no timing samples");
      continue;
    }
    e.samples.insert(e.samples.end(), s->begin(), s->end());
    progressed = true;
  }
  undecided_ = -1;
  if (progressed) clock_.busy();
  if (progressed && racing) decide();
  return progressed;
}

std::optional<std::size_t> Race::leader() const {
  std::optional<std::size_t> out;
  double best = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    if (!e.status.ok() || e.raced_out || e.samples.empty()) continue;
    const double m = quantile(e.samples, 0.5);
    if (!out || m < best) {
      out = i;
      best = m;
    }
  }
  return out;
}

void Race::drop(std::size_t i, Status why) {
  entries_[i].status = std::move(why);
  undecided_ = -1;
}

void Race::decide() {
  // Drop every contestant whose median is slower than the leader's beyond noise; stop those
  // that cannot beat it by more than the tolerance.
  const std::optional<std::size_t> found = leader();
  if (!found || static_cast<int>(entries_[*found].samples.size()) < opts_.race_min_samples) return;
  const std::size_t top = *found;
  Interval lead = median_interval(entries_[top].samples, opts_.race_confidence);
  const double tied_above = lead.hi * (1.0 - std::max(0.0, opts_.race_tolerance));
  int left = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto& e = entries_[i];
    if (!alive(i) || i == top) continue;
    if (static_cast<int>(e.samples.size()) < opts_.race_min_samples) {
      ++left;
      continue;
    }
    const double lo = median_interval(e.samples, opts_.race_confidence).lo;
    if (lo > lead.hi)
      e.raced_out = true;
    else if (opts_.race_tolerance > 0 && lo >= tied_above)
      e.within_tolerance = true;
    else
      ++left;
  }
  undecided_ = left;
}

Result<ShowdownReport> Race::finish() {
  // Fixed counts promise rep_count and nothing else; without racing every contestant had its
  // whole budget in the same rounds.
  if (!opts_.racing || opts_.rep_count > 0 || opts_.showdown_rounds <= 0 || entries_.size() < 2)
    return ShowdownReport{};
  if (clock_.needs_settling()) TUNE_RETURN_IF_ERROR(settle());
  auto out = run_showdown(dev_, args_, opts_, entries_, rotation_ ? &*rotation_ : nullptr);
  clock_.busy();
  return out;
}

Status Race::run() {
  for (;;) {
    auto progressed = round();
    if (!progressed.ok()) return progressed.status();
    if (!*progressed) return {};
    // The leader alone: its samples so far decide nothing more.
    if (decided()) return {};
  }
}

}  // namespace tune
