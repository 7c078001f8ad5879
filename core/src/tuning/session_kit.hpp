// Pieces both ways of tuning a key use (timing every candidate, or a search strategy): the
// time ledger of a report, one checked launch geometry, one verified launch, the rows a
// tuning stores. Internal to the core.
#pragma once

#include <chrono>
#include <limits>
#include <string>

#include "elapsed.hpp"
#include "hook_runner.hpp"
#include "tune/autotuner.hpp"

namespace tune::detail {

std::string format_ms(double ms);  // "12.5"

// Adds the wall time of scopes to the fields of a TuningTimes. Not thread-safe.
class TimeLedger {
 public:
  explicit TimeLedger(TuningTimes& times) : times_(times), start_(Clock::now()) {}
  class Scope {
   public:
    Scope(double* field) : field_(field), t0_(Clock::now()) {}  // NOLINT
    ~Scope() { *field_ += ms_since(t0_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    double* field_;
    Clock::time_point t0_;
  };
  // Counts the time until the returned scope ends into `field`.
  [[nodiscard]] Scope measure(double TuningTimes::*field) { return Scope(&(times_.*field)); }
  Clock::time_point start() const noexcept { return start_; }

 private:
  TuningTimes& times_;
  Clock::time_point start_;
};

// A LaunchDims::block that dims() left unset ({0, 0, 0}) is the configuration's launch block
// (block.x/y/z); when that is unset too, the backend decides (Vulkan: the shader's workgroup
// size; CUDA and HIP refuse the launch, naming it). The one rule for tuning and hit launches.
inline void fill_unset_block(const Config& c, LaunchDims* dims) noexcept {
  if (!dims->block.any_set()) dims->block = c.launch().block;
}

// KernelDef::dims for `c` while tuning, guarded: a throw is callback_failed; the block filled
// in (fill_unset_block); a grid with a zero dimension is invalid_argument (it would launch
// nothing and look fastest; a call whose every configuration has one is an empty problem,
// decided before any tuning: candidates.hpp's empty_problem).
Status launch_dims(const KernelDef& def, const Config& c, ArgList args, LaunchDims* out);

// `st` (a failed verification) recorded as `r`'s outcome, with median +inf, and its row in
// `rows` (replacing one for the same configuration) so that the failure is what is stored.
void record_failed_check(ConfigResult& r, const Status& st, std::vector<StoredResult>& rows);

// Failures that end a whole tuning rather than one configuration: a user callback that threw
// (the caller must hear of it) and a lost device (nothing measured can be trusted).
bool ends_tuning(const Status& st) noexcept;

// The stored form of one configuration's outcome (whether its output was verified
// included), stamped now.
StoredResult row_of(const ConfigResult& r);

// AutotunerOptions::progress for one tuning (both ways of tuning a key): events at most every
// kInterval, and always the last one (done); an exception the listener throws is logged once
// per tuning and ignored. Not thread-safe: used by the one thread that tunes the key.
class ProgressNotifier {
 public:
  static constexpr auto kInterval = std::chrono::milliseconds(100);
  // `listener` and `kernel` must outlive the notifier.
  ProgressNotifier(const ProgressListener& listener, const std::string& kernel)
      : listener_(listener), kernel_(kernel) {}
  // Whether an event is wanted now: never without a listener, always when `done`, else once
  // kInterval has passed since the last one. Counts the event as sent.
  bool due(bool done);
  // Calls the listener with `p`.
  void send(const TuningProgress& p);

 private:
  const ProgressListener& listener_;
  const std::string& kernel_;
  Clock::time_point last_{};
  bool warned_ = false;
};

}  // namespace tune::detail
