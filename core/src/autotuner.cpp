// Autotuner: the published results (tuning/published.hpp, read lock-free by every call), the
// keys in flight (who tunes, who waits), background tunings, and the public API. A call's key
// is tuning/call_keys.hpp; one key's tuning itself is tuning/session.cpp.
//
// A call: run() builds the key (CallKeys) and looks it up (the hit path); a key not found is a
// miss (Impl::miss, its stages in order below it).
#include "autotuner_impl.hpp"

namespace tune {

// The miss path: a key not in the table, met by run() (`launch_it`: the call launches) or by
// tune(). In order:
//   0. a key whose bucket was split (AutotunerOptions::check_bucket_edges) is keyed exactly,
//      and the bucket's marker published, so that the member's next call is a hit;
//   1. admitted: the call keeps the Autotuner alive until it returns (CallGuard);
//   2. capture_miss: run() on a target capturing a graph tunes nothing (refused, or an untimed
//      stand-in launched);
//   3. the device's queue waits for what the caller queued on its target (tuning reads it);
//   4. wait_or_claim: the key's entry if it was published meanwhile, the nearest key's as a
//      stand-in while a background tuning runs, or another call's tuning waited for; else the
//      key is this call's to tune: tune_here (tune_key, conclude, announce);
//   5. Triton's semantics: after tuning launched on the caller's buffers, the real launch
//      sees zeroed reset_to_zero buffers;
//   6. whatever happened on the device's queue, the caller's later work comes after it;
//   7. the launch.
Status Autotuner::Impl::miss(Device& dev, ArgList args, const TuningKey& bucketed,
                             const LaunchTarget& target, bool launch_it, const Entry** out) {
  TuningKey key = split_aware(dev, args, bucketed);  // 0.
  CallGuard guard(*this);                            // 1.
  if (!guard.admitted()) return being_destroyed();
  if (key != bucketed) {
    std::lock_guard lock(mu);
    mark_split(dev, bucketed);
  }
  if (launch_it) {  // 2.
    auto cap = dev.capturing(target);
    if (!cap.ok()) return Status(cap.status()).with_context("kernel " + def.name);
    if (*cap) return capture_miss(dev, args, key, target);
  }
  const auto where = [&] { return "kernel " + def.name + " on " + target.to_string(); };
  if (!target.is_queue())  // 3.
    TUNE_RETURN_IF_ERROR(dev.queue_waits_for(target).with_context(where()));
  std::shared_ptr<Inflight> mine;
  bool launched_on_args = false;
  Status st = wait_or_claim(dev, args, key, out, &mine);  // 4.
  if (st.ok() && mine != nullptr) st = tune_here(dev, args, key, *mine, out, &launched_on_args);
  if (st.ok() && launch_it && launched_on_args)  // 5.
    st = detail::zero_buffers(dev, args, zero_idx);
  if (!target.is_queue()) {  // 6.
    Status ordered = dev.target_waits_for_queue(target).with_context(where());
    if (st.ok()) st = std::move(ordered);
  }
  TUNE_RETURN_IF_ERROR(st);
  if (!launch_it) return {};
  return launch_on((*out)->config, *(*out)->variant, dev, args, target);  // 7.
}

// Miss stage 2: a new key while `target` captures a graph: refused (CaptureMiss::error), or the
// nearest tuned key's config, or (without isolation) the first candidate, launched untimed.
Status Autotuner::Impl::capture_miss(Device& dev, ArgList args, const TuningKey& key,
                                     const LaunchTarget& target) {
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(keys.forms_of(dev, args, key, &forms).with_context("kernel " + def.name));
  const std::string what = "kernel " + def.name + ": key {" + forms.text + "} is not tuned and " +
                           target.to_string() + " is capturing a graph";
  if (opts.capture_miss == CaptureMiss::error) {
    return Status(StatusCode::failed_precondition,
                  what +
                      ": tune before capturing (Autotuner::tune) or set "
                      "AutotunerOptions::capture_miss = CaptureMiss::fallback");
  }
  const Entry* near = nullptr;
  {
    std::lock_guard lock(mu);
    near = nearest(dev, key);  // entries stay allocated until release()
  }
  if (near != nullptr) {
    log_warning(what + ": launching the nearest tuned key's {" + near->config.to_string() +
                "} (CaptureMiss::fallback)");
    return launch_on(near->config, *near->variant, dev, args, target);
  }
  // Isolation exists so that no unverified candidate runs in the application's context; the
  // first candidate has never run anywhere, so with isolation only a tuned key may stand in.
  if (opts.isolation.enabled) {
    return Status(StatusCode::failed_precondition,
                  what +
                      ", no key of this device is tuned yet, and with isolation on no untimed, "
                      "unverified candidate is launched in the application's context: tune "
                      "before capturing (Autotuner::tune)");
  }
  auto ctx = context();
  auto first = detail::first_candidate(ctx, dev, args, forms);
  if (!first.ok()) return Status(first.status()).with_context(what);
  log_warning(what + ": launching the first candidate {" + first->config.to_string() +
              "}, untimed (CaptureMiss::fallback)");
  return launch_on(first->config, *first->variant, dev, args, target);
}

// Miss stage 4: under the lock, the key's entry (`*out`) if one can serve now, or this call's claim
// on tuning it (`*mine`).
Status Autotuner::Impl::wait_or_claim(Device& dev, ArgList args, TuningKey& key, const Entry** out,
                                      std::shared_ptr<Inflight>* mine) {
  std::unique_lock lock(mu);
  for (;;) {
    if (const Entry* e = published.find(key, dev)) {
      if (e->split_specs == 0) {
        *out = e;
        return {};
      }
      // The bucket split while this call waited on its tuning: the member's own key.
      key = detail::exact_member_key(keys.builder(), args, key, e->split_specs);
      continue;
    }
    auto it = inflight.find(key.hash);
    // Strict mode never tunes, in the background either: a new key is read or refused here.
    // With a fallback policy the chain's nearest_key level stands in (tune_here).
    const bool background =
        opts.mode == TuningMode::background && !strict && fallback == FallbackPolicy::tune;
    if (background && (it == inflight.end() || it->second->background)) {
      // Launch the nearest tuned key's config now; tune this key off the critical path.
      if (const Entry* near = nearest(dev, key)) {
        if (it == inflight.end() && !failed_background.count(key.hash)) {
          Status st = start_background(dev, args, key);
          if (!st.ok())
            log_warning("background tuning of " + def.name + " not started: " + st.to_string());
        }
        *out = near;
        return {};
      }
    }
    if (it == inflight.end()) break;
    auto other = it->second;
    cv.wait(lock, [&] { return other->done; });
    // A failure of the definition is everyone's; any other belongs to the call that met
    // it (a throwing callback, a lost device, a budget): tune the key here instead.
    if (!other->status.ok() && detail::is_definition_error(other->status)) return other->status;
  }
  *mine = std::make_shared<Inflight>();
  inflight.emplace(key.hash, *mine);
  return {};
}

// Miss stage 4, the key claimed: tuned here (or, with a fallback policy, read from the store
// or served by the fallback chain, then tuned in the background when the policy says so),
// published, announced.
Status Autotuner::Impl::tune_here(Device& dev, ArgList args, const TuningKey& key, Inflight& mine,
                                  const Entry** out, bool* launched_on_args) {
  TuningReport report;
  const bool chain = fallback != FallbackPolicy::tune && !disabled;
  auto selected =
      chain ? stored_or_fallback(dev, args, key, report) : tune_key(dev, args, key, report);
  // A split bucket's decision was made at this call's member: published as its exact key.
  const TuningKey as = report.bucket.split ? split_aware(dev, args, key) : key;
  {
    std::lock_guard lock(mu);
    *out = conclude(dev, key, as, mine, selected, report);
    if (selected.ok() && report.fallback != FallbackLevel::none &&
        fallback == FallbackPolicy::background && !strict) {
      Status st = start_background(dev, args, key);
      if (!st.ok())
        log_warning("background tuning of " + def.name + " not started: " + st.to_string());
    }
  }
  announce(report);
  if (!record_path.empty() && (!selected.ok() || report.fallback != FallbackLevel::none))
    record_miss(dev, args, key, report);
  if (!selected.ok()) return selected.status();
  *launched_on_args = selected->launched_on_args;
  return {};
}

// Tunes the key (its forms built here): in a worker process with isolation, else here
// (tune_one_key). Fills `report`.
Result<detail::Selection> Autotuner::Impl::tune_key(Device& dev, ArgList args, const TuningKey& key,
                                                    TuningReport& report) {
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(forms_for(dev, args, key, &forms, report));
  auto ctx = context();
  // Disabled and strict tuning time nothing: no worker is needed.
  if (detail::is_exact_member(key)) {  // a split bucket's member: its own rows
    forms.text += ";split";
    forms.store_key.key = forms.text;
  }
  if (opts.isolation.enabled && !disabled && !strict)
    return detail::tune_isolated(ctx, workers, dev, args, forms, report);
  auto selected = detail::tune_one_key(ctx, dev, args, forms, report);
  if (report.bucket.split) record_split(dev, forms, report);
  return selected;
}

// A finished tuning's outcome: its waiters woken (with its status when it failed), else its
// entry and report published. Caller holds mu.
const Entry* Autotuner::Impl::conclude(Device& dev, const TuningKey& key,
                                       const TuningKey& publish_as, Inflight& job,
                                       Result<detail::Selection>& selected,
                                       const TuningReport& report) {
  inflight.erase(key.hash);
  job.done = true;
  cv.notify_all();
  if (!selected.ok()) {
    job.status = selected.status();
    return nullptr;
  }
  auto e = std::make_unique<Entry>();
  e->key = publish_as;
  e->device = &dev;
  e->config = selected->config;
  e->variant = selected->variant;
  e->decided_ns = decided_median(report, selected->config);
  // A background tuning replaces the fallback that stood in for its key.
  const Entry* out = nullptr;
  if (published.find(publish_as, dev) != nullptr) {
    published.replace(std::move(e));
    out = published.find(publish_as, dev);
  } else {
    out = published.publish(std::move(e));
  }
  reports[{&dev, publish_as.hash}] = report;
  if (publish_as != key) mark_split(dev, key);  // the calls waiting on `key` find the marker
  return out;
}

// The report to AutotunerOptions::listener and, with TUNE_PRINT_AUTOTUNING, to stderr.
void Autotuner::Impl::announce(const TuningReport& report) const {
  if (print) std::fprintf(stderr, "%s", report.to_string().c_str());
  if (!opts.listener) return;
  Status st = detail::call_user_status("listener", nullptr, [&] {
    opts.listener(report);
    return Status();
  });
  if (!st.ok()) log_warning("kernel " + def.name + ": " + st.message() + " (ignored)");
}

Status Autotuner::Impl::start_background(Device& dev, ArgList args, const TuningKey& key) {
  // Caller holds mu. The tuning times on copies of the caller's buffers, taken now in queue
  // order, so the caller may reuse or free its buffers at once.
  auto copies = std::make_shared<std::vector<Buffer>>();
  auto copied_args = std::make_shared<std::vector<ArgValue>>();
  TUNE_RETURN_IF_ERROR(copy_args(dev, args, *copies, *copied_args));
  auto job = std::make_shared<Inflight>();
  job->background = true;
  inflight.emplace(key.hash, job);
  Device* d = &dev;
  jobs.push_back({&dev, std::thread([this, d, key, copies, copied_args, job] {
                    run_background(d, key, copies, copied_args, job);
                  })});
  return {};
}

Status Autotuner::Impl::copy_args(Device& dev, ArgList args, std::vector<Buffer>& copies,
                                  std::vector<ArgValue>& copied_args) {
  copied_args.assign(args.begin(), args.end());
  for (auto& a : copied_args) {
    if (a.kind != ArgKind::buffer) continue;
    auto b = dev.alloc(a.buffer->size_bytes());
    if (!b.ok()) return b.status();
    TUNE_RETURN_IF_ERROR(dev.copy(**b, *a.buffer, a.buffer->size_bytes()));
    a.buffer = b->get();
    copies.push_back(std::move(*b));
  }
  return {};
}

void Autotuner::Impl::run_background(Device* dev, TuningKey key,
                                     std::shared_ptr<std::vector<Buffer>> copies,
                                     std::shared_ptr<std::vector<ArgValue>> args,
                                     std::shared_ptr<Inflight> job) {
  TuningReport report;
  auto selected = tune_key(*dev, *args, key, report);
  copies->clear();
  const TuningKey as = report.bucket.split ? split_aware(*dev, *args, key) : key;
  {
    std::lock_guard lock(mu);
    conclude(*dev, key, as, *job, selected, report);
    // A definition error would fail every retry; anything else is retried by a later call.
    if (!selected.ok() && detail::is_definition_error(selected.status()))
      failed_background.insert(key.hash);
  }
  if (!selected.ok()) {
    log_warning("background tuning failed; the nearest key's config stays: " +
                selected.status().to_string());
  }
  announce(report);
}

Autotuner::Autotuner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Autotuner::~Autotuner() {
  detail::hit_generation.fetch_add(1, std::memory_order_acq_rel);  // a HitMemo may name this one
}

Result<std::unique_ptr<Autotuner>> Autotuner::make(KernelDef def, AutotunerOptions opts) {
  auto bad = [&](const std::string& msg) {
    return Status(StatusCode::invalid_argument, "kernel '" + def.name + "': " + msg);
  };
  if (def.name.empty()) return Status(StatusCode::invalid_argument, "kernel has no name");
  if (def.sources.empty()) return bad("no source");
  if (!def.dims) return bad("no dims function (grid and block of a launch)");
  TUNE_RETURN_IF_ERROR(def.space.validate().with_context("kernel '" + def.name + "'"));
  TUNE_RETURN_IF_ERROR(
      detail::validate_options(def, opts).with_context("kernel '" + def.name + "'"));
  TUNE_RETURN_IF_ERROR(check_names(def).with_context("kernel '" + def.name + "'"));
  auto kb = KeyBuilder::make(def.signature, def.key);
  if (!kb.ok()) return Status(kb.status()).with_context("kernel '" + def.name + "'");
  auto impl = std::make_unique<Impl>();
  for (const auto& [list, out] : {std::pair{&def.reset_to_zero, &impl->zero_idx},
                                  std::pair{&def.restore_value, &impl->restore_idx}}) {
    for (const auto& name : *list) {
      int idx = def.signature.index_of(name);
      if (idx < 0) return bad("hook argument '" + name + "' is not an argument of the kernel");
      if (def.signature.decls()[static_cast<std::size_t>(idx)].kind != ArgKind::buffer)
        return bad("hook argument '" + name + "' is not a buffer");
      out->push_back(idx);
    }
  }
  if (def.heuristics.size() + def.key.size() + 1 > static_cast<std::size_t>(kMaxKeyValues))
    return bad("too many key arguments and heuristics together");
  for (const auto& h : def.heuristics)
    if (!h.fn) return bad("heuristic '" + h.param + "' has no function");
  impl->print = opts.print.value_or(env_flag("TUNE_PRINT_AUTOTUNING"));
  impl->disabled = opts.disable.value_or(env_flag("TUNE_DISABLE"));
  impl->strict = opts.strict.value_or(env_flag("TUNE_STRICT"));
  impl->check_edges = opts.check_bucket_edges.value_or(env_flag("TUNE_BUCKET_EDGES", true));
  impl->fallback = opts.fallback.value_or(fallback_policy_from_env());
  if (!impl->disabled && !impl->strict && !opts.isolation.enabled)
    impl->drift_period = opts.drift.sample_period;
  impl->record_path = opts.record.empty() ? env_text("TUNE_RECORD") : opts.record;
  if (opts.gpu_lock.value_or(env_flag("TUNE_GPU_LOCK", true)))
    impl->gpu_lock_dir = detail::gpu_lock_dir();
  impl->store = build_store_stack({opts.store, opts.persistent, opts.bundles});
  // Every module the backends build for this kernel is checked against its signature.
  for (KernelSource& src : def.sources)
    if (src.signature.decls().empty()) src.signature = def.signature;
  impl->def = std::move(def);
  impl->timing = resolve_timing(opts.bench, opts.effort);
  impl->keys.init(std::move(*kb));
  impl->opts = std::move(opts);
  return std::unique_ptr<Autotuner>(new Autotuner(std::move(impl)));
}

Status Autotuner::run(Device& dev, ArgList args) { return run(dev, args, LaunchTarget::queue()); }

Status Autotuner::run(Device& dev, ArgList args, const LaunchTarget& target) {
  Impl& m = *impl_;
  // This thread's previous hit with the same arguments (hit_memo.hpp): no key to build, no
  // dims to call; straight to the backend's launch.
  thread_local detail::HitMemo<Entry> memo;
  if (!m.keys.calls_user_code()) {
    if (const Entry* e = memo.find(&m, &dev, args)) {
      if (m.drift_period != 0 && target.is_queue() && e->sample_now(m.drift_period))
        return m.sampled_launch(dev, args, *e, memo.dims);
      Status st = Impl::launch_dims(*e->variant, memo.dims, dev, args, target);
      return st.ok() ? st : m.fall_back(dev, args, *e, target, std::move(st));
    }
  }
  const std::uint64_t generation = detail::hit_generation.load(std::memory_order_acquire);
  TuningKey key{TuningKey::Unfilled{}};
  TUNE_RETURN_IF_ERROR(m.keys.key_of(dev, args, &key));
  const Entry* e = m.published.find(key, dev);
  if (e != nullptr && e->split_specs != 0) e = m.split_member(dev, args, key, *e);
  if (e == nullptr) return m.miss(dev, args, key, target, /*launch_it=*/true, &e);
  LaunchDims dims;
  TUNE_RETURN_IF_ERROR(m.dims_of(e->config, args, &dims));
  if (!m.keys.calls_user_code()) memo.remember(&m, &dev, generation, args, e, dims);
  if (m.drift_period != 0 && target.is_queue() && e->sample_now(m.drift_period))
    return m.sampled_launch(dev, args, *e, dims);
  Status st = Impl::launch_dims(*e->variant, dims, dev, args, target);
  return st.ok() ? st : m.fall_back(dev, args, *e, target, std::move(st));
}

Result<Config> Autotuner::tune(Device& dev, ArgList args) {
  return tune(dev, args, LaunchTarget::queue());
}

Result<Config> Autotuner::tune(Device& dev, ArgList args, const LaunchTarget& target) {
  Impl& m = *impl_;
  TuningKey key{TuningKey::Unfilled{}};
  TUNE_RETURN_IF_ERROR(m.keys.key_of(dev, args, &key));
  const Entry* known = m.published.find(key, dev);
  if (known != nullptr && known->split_specs != 0) known = m.split_member(dev, args, key, *known);
  if (known != nullptr) return known->config;
  auto cap = dev.capturing(target);
  if (!cap.ok()) return Status(cap.status()).with_context("kernel " + m.def.name);
  if (*cap) {
    return Status(StatusCode::failed_precondition,
                  "kernel " + m.def.name + ": cannot tune while " + target.to_string() +
                      " is capturing a graph; call tune() before the capture begins");
  }
  const Entry* e = nullptr;
  TUNE_RETURN_IF_ERROR(m.miss(dev, args, key, target, /*launch_it=*/false, &e));
  return e->config;
}

Status Autotuner::warmup(Device& dev) {
  Impl& m = *impl_;
  const KernelSource* src = m.def.source_for(dev.language());
  if (src == nullptr)
    return Status(StatusCode::unavailable, "kernel " + m.def.name + " has no " +
                                               std::string(to_string(dev.language())) + " source");
  Result<std::vector<Config>> configs = Status(StatusCode::internal, "not enumerated");
  try {
    configs = m.def.space.enumerate(dev.info());
  } catch (...) {
    return detail::current_exception_status("the config space", nullptr)
        .with_context("warmup of " + m.def.name);
  }
  if (!configs.ok()) return configs.status();
  auto futures = m.variants.compile(dev, *src, *configs);
  std::string why;
  bool any = false;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    auto v = futures[i].get();
    if (v->status.ok())
      any = true;
    else
      why += "\n  {" + (*configs)[i].to_string() + "}: " + v->status.to_string();
  }
  if (!any && !futures.empty())
    return Status(StatusCode::all_failed,
                  "warmup of " + m.def.name + ": every configuration failed:" + why);
  return {};
}

Result<std::string> Autotuner::key_text(const Device& dev, ArgList args) const {
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(impl_->keys.forms_of(dev, args, &forms));
  return forms.text;
}

Result<std::vector<Config>> Autotuner::candidates(const Device& dev, ArgList args) const {
  const Impl& m = *impl_;
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(m.keys.forms_of(dev, args, &forms));
  auto cands = detail::make_candidates(m.def, dev.info(), args, forms.heuristics);
  if (!cands.ok())
    return Status(cands.status())
        .with_context("kernel " + m.def.name + " key {" + forms.text + "}");
  return std::move(cands->configs);
}

Result<std::vector<ConfigResult>> Autotuner::measure(Device& dev, ArgList args,
                                                     std::span<const Config> configs) {
  Impl& m = *impl_;
  Impl::CallGuard guard(m);
  if (!guard.admitted()) return m.being_destroyed();
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(m.keys.forms_of(dev, args, &forms));
  for (const Config& c : configs) TUNE_RETURN_IF_ERROR(m.keys.check_point_of_key(dev, forms, c));
  TuningReport scratch;  // the session's ledger; measure() reports nothing
  return detail::measure_configs(m.context(), dev, args, forms, configs, scratch);
}

Status Autotuner::adopt(Device& dev, ArgList args, const Config& config,
                        std::span<const ConfigResult> results) {
  Impl& m = *impl_;
  Impl::CallGuard guard(m);
  if (!guard.admitted()) return m.being_destroyed();
  TuningKey key{TuningKey::Unfilled{}};
  TUNE_RETURN_IF_ERROR(m.keys.key_of(dev, args, &key));
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(
      m.keys.forms_of(dev, args, key, &forms).with_context("kernel " + m.def.name));
  const std::string what = "adopting {" + config.to_string() + "} for kernel " + m.def.name;
  TUNE_RETURN_IF_ERROR(m.keys.check_point_of_key(dev, forms, config));
  for (const ConfigResult& r : results)
    TUNE_RETURN_IF_ERROR(m.keys.check_point_of_key(dev, forms, r.config).with_context(what));
  const KernelSource* src = m.def.source_for(dev.language());
  if (src == nullptr) {
    return Status(StatusCode::unavailable, what + ": no " + std::string(to_string(dev.language())) +
                                               " source for device " + dev.info().name);
  }
  auto v = m.variants.compile(dev, *src, {config}).front().get();
  TUNE_RETURN_IF_ERROR(Status(v->status).with_context(what));
  if (!results.empty() && m.store != nullptr) {
    std::vector<StoredResult> rows;
    rows.reserve(results.size());
    for (const ConfigResult& r : results) rows.push_back(detail::row_of(r));
    detail::StoredResults(m.store.get(), forms.store_key, m.def, forms.heuristics).save(rows);
  }
  TuningReport report;
  report.kernel = m.def.name;
  report.key = forms.text;
  report.device = dev.info().fingerprint();
  report.source = ResultSource::shared;
  report.results.assign(results.begin(), results.end());
  report.winner = config;
  auto e = std::make_unique<Entry>();
  e->key = key;
  e->device = &dev;
  e->config = config;
  e->variant = std::move(v);
  e->decided_ns = Impl::decided_median(report, config);
  {
    std::lock_guard lock(m.mu);
    m.published.replace(std::move(e));
    m.reports[{&dev, key.hash}] = report;
  }
  m.announce(report);
  return {};
}

std::optional<Config> Autotuner::best(const Device& dev, ArgList args) const {
  TuningKey key{TuningKey::Unfilled{}};
  if (!impl_->keys.key_of(dev, args, &key).ok()) return std::nullopt;
  key = impl_->splits.exact_where_split(&dev, impl_->keys.builder(), args, key);
  const Entry* e = impl_->published.find(key, dev);
  if (e == nullptr) return std::nullopt;
  return e->config;
}

std::optional<TuningReport> Autotuner::last_report(const Device& dev, ArgList args) const {
  TuningKey key{TuningKey::Unfilled{}};
  if (!impl_->keys.key_of(dev, args, &key).ok()) return std::nullopt;
  key = impl_->splits.exact_where_split(&dev, impl_->keys.builder(), args, key);
  std::lock_guard lock(impl_->mu);
  auto it = impl_->reports.find({&dev, key.hash});
  if (it == impl_->reports.end()) return std::nullopt;
  return it->second;
}

void Autotuner::release(const Device& dev) {
  auto& m = *impl_;
  detail::hit_generation.fetch_add(1, std::memory_order_acq_rel);  // no HitMemo finds dev's entries
  m.join_jobs(&dev);
  m.variants.release(dev);
  m.splits.forget(&dev);
  // The worker proxy's kernels before the proxy itself.
  m.workers.release(dev, [&](detail::WorkerDevice& proxy) { m.variants.release(proxy); });
  std::lock_guard lock(m.mu);
  m.published.release(dev);
  std::erase_if(m.reports, [&](const auto& r) { return r.first.first == &dev; });
}

const KernelDef& Autotuner::kernel() const noexcept { return impl_->def; }

}  // namespace tune
