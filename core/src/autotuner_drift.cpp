// Drift re-validation (AutotunerOptions::drift; docs/caches.md, "Drift re-validation"): the
// sampled hit timed on the device, and the one background re-validation a drifting sample of
// a decision starts: its winner and runner-up timed again, the decision replaced when their
// order changed.
#include <cmath>

#include "autotuner_impl.hpp"
#include "tuning/decision_record.hpp"

namespace tune {

double Autotuner::Impl::decided_median(const TuningReport& report, const Config& winner) {
  for (const ConfigResult& r : report.results) {
    if (r.status.ok() && r.config == winner && std::isfinite(r.stats.median) && r.stats.median > 0)
      return r.stats.median;
  }
  return 0;
}

// The hit chosen by Entry::sample_now: its launch is one repetition of Device::time (no flush,
// no resets), which returns once the launch finished; a drift starts the key's re-validation
// unless this decision had one already.
Status Autotuner::Impl::sampled_launch(Device& dev, ArgList args, const Entry& e,
                                       const LaunchDims& dims) {
  TimingPlan plan;
  plan.flush_l2 = false;
  auto times = dev.time(*e.variant->kernel, dims, args, plan);
  if (!times.ok()) return fall_back(dev, args, e, LaunchTarget::queue(), times.status());
  if (times->empty() || !(times->front() > opts.drift.threshold * e.decided_ns)) return {};
  if (e.revalidated.exchange(true, std::memory_order_acq_rel)) return {};
  CallGuard guard(*this);
  if (!guard.admitted()) return {};
  std::lock_guard lock(mu);
  Status st = start_revalidation(dev, args, e);
  if (!st.ok())
    log_warning("kernel " + def.name + ": drift re-validation not started: " + st.to_string());
  return {};
}

// Caller holds mu. On copies of the call's buffers, as a background tuning.
Status Autotuner::Impl::start_revalidation(Device& dev, ArgList args, const Entry& e) {
  auto copies = std::make_shared<std::vector<Buffer>>();
  auto copied_args = std::make_shared<std::vector<ArgValue>>();
  TUNE_RETURN_IF_ERROR(copy_args(dev, args, *copies, *copied_args));
  Device* d = &dev;
  const Entry* old = &e;  // entries stay allocated while the Autotuner lives
  jobs.push_back({&dev, std::thread([this, d, copies, copied_args, old] {
                    Status st = revalidate(*d, *copied_args, *old);
                    copies->clear();
                    if (!st.ok()) {
                      log_warning("kernel " + def.name + ": drift re-validation of {" +
                                  old->config.to_string() +
                                  "} failed, the decision stays: " + st.to_string());
                    }
                  })});
  return {};
}

// The decision's winner and its record's runner-up timed again (measure_configs: the tuning's
// rules); the rows and a new record stored; the runner-up published when it is now faster.
Status Autotuner::Impl::revalidate(Device& dev, ArgList args, const Entry& old) {
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(keys.forms_of(dev, args, old.key, &forms));
  if (detail::is_exact_member(old.key)) {  // a split bucket's member: its own rows (tune_key)
    forms.text += ";split";
    forms.store_key.key = forms.text;
  }
  const std::string what = "key {" + forms.text + "}";
  detail::StoredResults stored(store.get(), forms.store_key, def, forms.heuristics);
  const auto last = detail::last_decision(stored.rows());
  const std::string winner = old.config.to_string();
  if (!last || last->first != winner || last->second.runner_up.empty()) {
    return Status(StatusCode::failed_precondition,
                  what + ": no stored decision record of {" + winner + "} names a runner-up");
  }
  auto cands = detail::make_candidates(def, dev.info(), args, forms.heuristics);
  TUNE_RETURN_IF_ERROR(Status(cands.status()).with_context(what));
  std::vector<Config> pair{old.config};
  for (const Config& c : cands->configs)
    if (c.to_string() == last->second.runner_up) pair.push_back(c);
  if (pair.size() != 2) {
    return Status(StatusCode::not_found,
                  what + ": the runner-up {" + last->second.runner_up + "} is not a candidate");
  }
  TuningReport report;
  report.kernel = def.name;
  report.key = forms.text;
  report.device = dev.info().fingerprint();
  auto results = detail::measure_configs(context(), dev, args, forms, pair, report);
  TUNE_RETURN_IF_ERROR(Status(results.status()).with_context(what));
  report.results = std::move(*results);
  // The winner keeps a tie; a failed configuration's median is +inf.
  const bool flipped = report.results[1].status.ok() &&
                       (!report.results[0].status.ok() ||
                        report.results[1].stats.median < report.results[0].stats.median);
  const std::vector<std::size_t> ranked =
      flipped ? std::vector<std::size_t>{1, 0} : std::vector<std::size_t>{0, 1};
  const ConfigResult& best = report.results[ranked[0]];
  if (!best.status.ok()) {
    return Status(StatusCode::all_failed, what + ": the winner failed (" + best.status.to_string() +
                                              ") and so did the runner-up");
  }
  std::vector<StoredResult> rows;
  for (const ConfigResult& r : report.results) rows.push_back(detail::row_of(r));
  const std::string decided = best.config.to_string();
  if (auto record = detail::record_decision(report, decided, ranked, last->second, last->first))
    detail::attach_decision(*record, decided, stored.rows(), rows);
  stored.save(rows);
  if (!flipped) return {};  // the order holds: the decision (and its `revalidated`) stays
  return publish_revalidated(dev, old, best);
}

// The runner-up that won a re-validation, compiled (from the variant cache) and published in
// place of `old`: a new decision, sampled afresh.
Status Autotuner::Impl::publish_revalidated(Device& dev, const Entry& old,
                                            const ConfigResult& best) {
  const KernelSource* src = def.source_for(dev.language());
  if (src == nullptr)
    return Status(StatusCode::unavailable, "no " + std::string(to_string(dev.language())) +
                                               " source for device " + dev.info().name);
  auto v = variants.compile(dev, *src, {best.config}).front().get();
  TUNE_RETURN_IF_ERROR(Status(v->status).with_context("{" + best.config.to_string() + "}"));
  auto e = std::make_unique<Entry>();
  e->key = old.key;
  e->device = &dev;
  e->config = best.config;
  e->variant = std::move(v);
  e->decided_ns = best.stats.median;
  std::lock_guard lock(mu);
  published.replace(std::move(e));
  return {};
}

}  // namespace tune
