#include "tune/benchmark.hpp"

#include <algorithm>
#include <cmath>

namespace tune {

Result<double> warm_up(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                       ArgList args, const BenchOptions& opts,
                       const std::function<Status()>& before_each) {
  // One untimed launch first: module load and lazy pipeline JIT happen here, not in samples.
  if (before_each) TUNE_RETURN_IF_ERROR(before_each());
  TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  TUNE_RETURN_IF_ERROR(dev.synchronize());

  TimingPlan plan;
  plan.flush_l2 = opts.flush_l2;
  plan.before_each = before_each;
  plan.timeout_ms = opts.timeout_ms;
  plan.reps = std::max(1, opts.estimate_runs);
  auto est = dev.time(kernel, dims, args, plan);
  if (!est.ok()) return est.status();
  if (est->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  double est_ns = std::max(summarize(*est).median, 1.0);

  auto n_warmup = static_cast<int>(std::min(100000.0, std::floor(opts.warmup_ms * 1e6 / est_ns)));
  for (int i = 0; i < n_warmup; ++i) {
    if (before_each) TUNE_RETURN_IF_ERROR(before_each());
    TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  }
  if (n_warmup > 0) TUNE_RETURN_IF_ERROR(dev.synchronize());
  return est_ns;
}

int reps_for(double estimate_ns, const BenchOptions& opts) noexcept {
  double reps = std::floor(opts.rep_ms * 1e6 / std::max(estimate_ns, 1.0));
  return static_cast<int>(std::clamp(reps, static_cast<double>(std::max(1, opts.min_reps)),
                                     static_cast<double>(std::max(1, opts.max_reps))));
}

Result<SampleStats> time_kernel(Device& dev, const CompiledKernel& kernel, const LaunchDims& dims,
                                ArgList args, const BenchOptions& opts,
                                const std::function<Status()>& before_each) {
  auto est = warm_up(dev, kernel, dims, args, opts, before_each);
  if (!est.ok()) return est.status();
  TimingPlan plan;
  plan.flush_l2 = opts.flush_l2;
  plan.before_each = before_each;
  plan.timeout_ms = opts.timeout_ms;
  plan.reps = reps_for(*est, opts);
  auto samples = dev.time(kernel, dims, args, plan);
  if (!samples.ok()) return samples.status();
  if (samples->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  return summarize(*samples);
}

Status race(Device& dev, std::span<RaceEntry> entries, ArgList args, const BenchOptions& opts) {
  std::vector<int> budget(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    budget[i] = reps_for(entries[i].estimate_ns, opts);
  auto alive = [&](std::size_t i) {
    const auto& e = entries[i];
    return e.status.ok() && !e.raced_out && !e.settled;
  };
  const bool racing = opts.racing && entries.size() > 1;
  const int batch = std::max(1, opts.race_batch);
  for (;;) {
    bool progressed = false;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      auto& e = entries[i];
      int have = static_cast<int>(e.samples.size());
      if (!alive(i) || have >= budget[i]) continue;
      TimingPlan plan;
      plan.flush_l2 = opts.flush_l2;
      plan.before_each = e.before_each;
      plan.timeout_ms = opts.timeout_ms;
      plan.reps = racing ? std::min(batch, budget[i] - have) : budget[i] - have;
      auto s = dev.time(*e.kernel, e.dims, args, plan);
      Status after = e.after_batch ? e.after_batch() : Status();
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
    if (!progressed) break;
    if (!racing) continue;
    // Drop every contestant whose median is slower than the leader's beyond noise; stop
    // those that cannot beat it by more than the tolerance. The leader is the lowest median
    // among all timed entries, stopped ones included, so a settled entry can still win.
    std::size_t leader = entries.size();
    double best = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (!e.status.ok() || e.raced_out || e.samples.empty()) continue;
      double m = quantile(e.samples, 0.5);
      if (leader == entries.size() || m < best) {
        leader = i;
        best = m;
      }
    }
    if (leader == entries.size() ||
        static_cast<int>(entries[leader].samples.size()) < opts.race_min_samples)
      continue;
    Interval lead = median_interval(entries[leader].samples, opts.race_confidence);
    const double tied_above = lead.hi * (1.0 - std::max(0.0, opts.race_tolerance));
    std::size_t left = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      auto& e = entries[i];
      if (!alive(i) || i == leader) continue;
      if (static_cast<int>(e.samples.size()) < opts.race_min_samples) {
        ++left;
        continue;
      }
      const double lo = median_interval(e.samples, opts.race_confidence).lo;
      if (lo > lead.hi)
        e.raced_out = true;
      else if (opts.race_tolerance > 0 && lo >= tied_above)
        e.settled = true;
      else
        ++left;
    }
    if (left == 0) break;  // the leader alone: its samples so far decide nothing more
  }
  return {};
}

}  // namespace tune
