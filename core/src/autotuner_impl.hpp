// Autotuner::Impl: the state behind one Autotuner and the stages of its miss path, shared by
// autotuner.cpp (the table, keys in flight, background tunings, the public API) and
// autotuner_fallbacks.cpp (what serves a call when its key's own decision cannot: a split
// bucket's exact key, a failed launch's next candidate, the fallback chain, the record of
// misses). Internal to core/src.
#pragma once

#include "tune/autotuner.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "cache/cache_env.hpp"
#include "hit_memo.hpp"
#include "isolation/isolated_tuning.hpp"
#include "isolation/worker_pool.hpp"
#include "record_file.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"
#include "tuning/bucket_splits.hpp"
#include "tuning/call_keys.hpp"
#include "tuning/candidates.hpp"
#include "tuning/fallback_chain.hpp"
#include "tuning/hook_runner.hpp"
#include "tuning/launch_fallback.hpp"
#include "tuning/option_checks.hpp"
#include "tuning/published.hpp"
#include "tuning/session.hpp"
#include "tuning/session_kit.hpp"
#include "tuning/stored_results.hpp"
#include "tuning/user_code.hpp"
#include "tuning/variants.hpp"

namespace tune {

namespace autotuner_impl {

using detail::Entry;
using detail::Variant;

// A key being tuned. Waiters read `status` once `done`.
struct Inflight {
  bool done = false;
  bool background = false;  // callers launch the nearest tuned key's config meanwhile
  Status status;
};

struct BackgroundJob {
  const Device* device = nullptr;
  std::thread thread;
};

}  // namespace autotuner_impl

using autotuner_impl::BackgroundJob;
using autotuner_impl::Inflight;
using detail::Entry;
using detail::Variant;

struct Autotuner::Impl {
  KernelDef def;
  AutotunerOptions opts;
  TimingPolicy timing;  // opts.bench resolved for opts.effort
  detail::CallKeys keys{def};
  bool print = false;
  bool disabled = false;
  bool strict = false;                             // opts.strict, else TUNE_STRICT
  FallbackPolicy fallback = FallbackPolicy::tune;  // opts.fallback, else TUNE_FALLBACK
  std::string record_path;   // opts.record, else TUNE_RECORD; empty: no recording
  std::string gpu_lock_dir;  // empty: no per-GPU timing lock (opts.gpu_lock, TUNE_GPU_LOCK)
  // opts.check_bucket_edges, else TUNE_BUCKET_EDGES; never with isolation (the edges' buffers
  // would live in the worker, and a split must be seen by this process).
  bool check_edges = false;
  // opts.drift.sample_period; 0 (no sampling) with TUNE_DISABLE, strict mode (neither times)
  // or isolation (a re-validation would time in this process).
  std::uint32_t drift_period = 0;
  detail::BucketSplits splits;
  std::shared_ptr<TuningStore> store;
  std::vector<int> zero_idx, restore_idx;  // buffer argument positions of the hooks

  // Isolated tuning: one worker proxy per device, spawned on its first call. Declared before
  // `variants` and `published` so the proxies outlive the proxy kernels they hold.
  detail::WorkerPool workers;
  detail::VariantCache variants;
  detail::PublishedEntries published;  // read lock-free; written under mu

  std::mutex mu;  // guards everything below, and the writes to `published`
  std::condition_variable cv;
  std::unordered_map<std::uint64_t, std::shared_ptr<Inflight>> inflight;
  std::map<std::pair<const Device*, std::uint64_t>, TuningReport> reports;
  std::vector<BackgroundJob> jobs;
  std::set<std::uint64_t> failed_background;  // keys whose background tuning failed for good
  std::set<std::uint64_t> recorded;           // keys appended to record_path
  int active_calls = 0;                       // calls off the hit path (tuning or waiting)
  bool closing = false;                       // the destructor runs: no new calls

  ~Impl() {
    {
      std::unique_lock lock(mu);
      closing = true;
      cv.wait(lock, [&] { return active_calls == 0; });
    }
    join_jobs(nullptr);
    // `variants` waits for compiles still running when it is destroyed, before `def`.
  }

  detail::SessionContext context() {
    return {def,
            opts,
            timing,
            disabled,
            strict,
            store.get(),
            variants,
            zero_idx,
            restore_idx,
            gpu_lock_dir,
            check_edges && !opts.isolation.enabled};
  }

  // Keeps the Autotuner alive (the destructor waits) while a call is off the hit path.
  class CallGuard {
   public:
    explicit CallGuard(Impl& m) : m_(m) {
      std::lock_guard lock(m_.mu);
      admitted_ = !m_.closing;
      if (admitted_) ++m_.active_calls;
    }
    ~CallGuard() {
      if (!admitted_) return;
      std::lock_guard lock(m_.mu);
      if (--m_.active_calls == 0 && m_.closing) m_.cv.notify_all();
    }
    CallGuard(const CallGuard&) = delete;
    CallGuard& operator=(const CallGuard&) = delete;
    bool admitted() const noexcept { return admitted_; }

   private:
    Impl& m_;
    bool admitted_ = false;
  };
  // What a call that CallGuard did not admit returns.
  Status being_destroyed() const {
    return Status(StatusCode::unavailable,
                  "kernel " + def.name + ": the Autotuner is being destroyed");
  }

  void join_jobs(const Device* dev) {
    std::vector<std::thread> to_join;
    {
      std::lock_guard lock(mu);
      for (auto it = jobs.begin(); it != jobs.end();) {
        if (dev == nullptr || it->device == dev) {
          to_join.push_back(std::move(it->thread));
          it = jobs.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& t : to_join) t.join();
  }

  // def.dims for one configuration and the call's arguments, its block filled in
  // (fill_unset_block); a throw becomes callback_failed. An empty grid stays: the backend
  // launches nothing (an empty problem).
  Status dims_of(const Config& config, ArgList args, LaunchDims* out) const {
    try {
      *out = def.dims(config, args);
    } catch (...) {
      return detail::current_exception_status("dims", &config).with_context("kernel " + def.name);
    }
    detail::fill_unset_block(config, out);
    return {};
  }
  // The launch itself, dims worked out: on the device's queue, or the caller's target.
  static Status launch_dims(const Variant& v, const LaunchDims& dims, Device& dev, ArgList args,
                            const LaunchTarget& target) {
    if (target.is_queue()) return dev.launch(*v.kernel, dims, args);
    return dev.launch_on(*v.kernel, dims, args, target);
  }
  Status launch_on(const Config& config, const Variant& v, Device& dev, ArgList args,
                   const LaunchTarget& target) const {
    LaunchDims dims;
    TUNE_RETURN_IF_ERROR(dims_of(config, args, &dims));
    return launch_dims(v, dims, dev, args, target);
  }

  // A new key's forms (CallKeys::forms_of); a failure is also the report's status.
  Status forms_for(const Device& dev, ArgList args, const TuningKey& key, detail::KeyForms* forms,
                   TuningReport& report) const {
    Status st = keys.forms_of(dev, args, key, forms);
    if (st.ok()) return st;
    report.kernel = def.name;
    report.status = st.with_context("kernel " + def.name);
    return report.status;
  }

  // The entry serving a member of a split bucket whose marker the hit path found under the
  // bucket's `key`: the member's own (exact_member_key), or null when it has none yet (a
  // miss). Lock-free and allocation-free, like the hit path.
  const Entry* split_member(const Device& dev, ArgList args, const TuningKey& key,
                            const Entry& marker) const noexcept {
    const Entry* e = published.find(
        detail::exact_member_key(keys.builder(), args, key, marker.split_specs), dev);
    return e != nullptr && e->split_specs == 0 ? e : nullptr;
  }
  // Publishes the marker of `bucketed` on `dev` when its bucket is split (Entry::split_specs),
  // replacing the bucket's entry if it had one. Caller holds mu.
  void mark_split(const Device& dev, const TuningKey& bucketed) {
    const std::uint32_t specs = splits.split_specs(&dev, keys.builder(), bucketed);
    if (specs == 0) return;
    const Entry* had = published.find(bucketed, dev);
    if (had != nullptr && had->split_specs == specs) return;
    auto marker = std::make_unique<Entry>();
    marker->key = bucketed;
    marker->device = &dev;
    marker->split_specs = specs;
    if (had != nullptr)
      published.replace(std::move(marker));
    else
      published.publish(std::move(marker));
  }

  // The tuned entry of `dev` nearest to `key` (PublishedEntries::nearest). Caller holds mu.
  const Entry* nearest(const Device& dev, const TuningKey& key) const {
    return published.nearest(dev, key, keys.key_args());
  }

  // The miss path, stage by stage (each defined below, in this order).
  Status miss(Device& dev, ArgList args, const TuningKey& bucketed, const LaunchTarget& target,
              bool launch_it, const Entry** out);
  TuningKey split_aware(Device& dev, ArgList args, const TuningKey& key);
  Status fall_back(Device& dev, ArgList args, const Entry& failed, const LaunchTarget& target,
                   Status why);
  void record_fallback(const Device& dev, const Entry& failed, const std::string& event);
  void record_split(Device& dev, const detail::KeyForms& forms, const TuningReport& report);
  Status capture_miss(Device& dev, ArgList args, const TuningKey& key, const LaunchTarget& target);
  Status wait_or_claim(Device& dev, ArgList args, TuningKey& key, const Entry** out,
                       std::shared_ptr<Inflight>* mine);
  Status tune_here(Device& dev, ArgList args, const TuningKey& key, Inflight& mine,
                   const Entry** out, bool* launched_on_args);
  Result<detail::Selection> tune_key(Device& dev, ArgList args, const TuningKey& key,
                                     TuningReport& report);
  Result<detail::Selection> stored_or_fallback(Device& dev, ArgList args, const TuningKey& key,
                                               TuningReport& report);
  const Entry* conclude(Device& dev, const TuningKey& key, const TuningKey& publish_as,
                        Inflight& job, Result<detail::Selection>& selected,
                        const TuningReport& report);
  void announce(const TuningReport& report) const;
  void record_miss(const Device& dev, ArgList args, const TuningKey& key,
                   const TuningReport& report);

  // Background tuning (TuningMode::background): wait_or_claim starts it.
  Status start_background(Device& dev, ArgList args, const TuningKey& key);
  void run_background(Device* dev, TuningKey key, std::shared_ptr<std::vector<Buffer>> copies,
                      std::shared_ptr<std::vector<ArgValue>> args, std::shared_ptr<Inflight> job);
  // `args` with each buffer replaced by a copy (kept in `copies`), queued on the device now.
  static Status copy_args(Device& dev, ArgList args, std::vector<Buffer>& copies,
                          std::vector<ArgValue>& copied_args);

  // Drift re-validation (AutotunerOptions::drift; autotuner_drift.cpp).
  // The median `report` timed `winner` at (Entry::decided_ns); 0 when it has none.
  static double decided_median(const TuningReport& report, const Config& winner);
  Status sampled_launch(Device& dev, ArgList args, const Entry& e, const LaunchDims& dims);
  Status start_revalidation(Device& dev, ArgList args, const Entry& e);
  Status revalidate(Device& dev, ArgList args, const Entry& old);
  Status publish_revalidated(Device& dev, const Entry& old, const ConfigResult& best);
};

}  // namespace tune
