// Autotuner::Impl's side paths (autotuner_impl.hpp): what serves a call when its key's own
// decision cannot, each called from the miss path in autotuner.cpp.
#include "autotuner_impl.hpp"

namespace tune {

// Miss stage 0: `key`, or its exact form when one of its buckets was split (read from the store
// on the device's first miss). Only kernels with a pow2 key and edge checks on look.
TuningKey Autotuner::Impl::split_aware(Device& dev, ArgList args, const TuningKey& key) {
  if (!check_edges || std::none_of(def.key.begin(), def.key.end(),
                                   [](const KeySpec& k) { return k.bucket == Bucket::next_pow2; }))
    return key;
  if (detail::KeyForms forms; !splits.loaded(&dev) && keys.forms_of(dev, args, key, &forms).ok())
    splits.load_once(&dev, store.get(), forms.store_key);
  return splits.exact_where_split(&dev, keys.builder(), args, key);
}

// A tuning whose edge checks split its bucket: the split remembered and stored, each bucketed
// key argument whose edge broke named.
void Autotuner::Impl::record_split(Device& dev, const detail::KeyForms& forms,
                                   const TuningReport& report) {
  std::set<std::string> split_args;  // one split per key argument
  for (const EdgeCheck& e : report.bucket.edges) {
    const int spec = [&] {
      for (std::size_t i = 0; i < def.key.size(); ++i)
        if (def.key[i].arg == e.arg) return static_cast<int>(i);
      return -1;
    }();
    if (spec < 0 || !e.broke || !split_args.insert(e.arg).second) continue;
    const std::string why =
        e.winner.ok() ? "{" + report.winner.to_string() + "} slower than the runner-up at " +
                            e.arg + "=" + std::to_string(e.value)
                      : "{" + report.winner.to_string() + "} failed at " + e.arg + "=" +
                            std::to_string(e.value) + ": " + e.winner.message();
    splits.add(&dev, store.get(), forms.store_key, e.arg, forms.key.values[spec], why);
    log_warning("kernel " + def.name + ": bucket " + e.arg + "=" +
                std::to_string(forms.key.values[spec]) + " split: " + why);
  }
}

// A hit whose launch failed (`why`): when another configuration may not fail so, the key's
// next stored candidates in the winner rule's order, compiled and launched in turn; the first
// that launches serves the call and the event is recorded. `why` when none does.
Status Autotuner::Impl::fall_back(Device& dev, ArgList args, const Entry& failed,
                                  const LaunchTarget& target, Status why) {
  if (!detail::may_fall_back(why)) return why;
  const KernelSource* src = def.source_for(dev.language());
  std::vector<Config> order;
  {
    std::lock_guard lock(mu);
    auto it = reports.find({&dev, failed.key.hash});
    if (it != reports.end())
      order = detail::fallback_order(it->second, failed.config, timing.tie_tolerance);
  }
  if (src == nullptr) return why;
  for (const Config& c : order) {
    std::shared_ptr<detail::Variant> v = variants.compile(dev, *src, {c})[0].get();
    if (v == nullptr || !v->status.ok() || v->kernel == nullptr) continue;
    if (!launch_on(c, *v, dev, args, target).ok()) continue;
    std::string member;
    for (const KeySpec& k : def.key) {
      const ArgValue& a = args[static_cast<std::size_t>(def.signature.index_of(k.arg))];
      member += (member.empty() ? "" : ",") + k.arg + "=" +
                std::to_string(a.kind == ArgKind::buffer ? static_cast<std::int64_t>(a.count)
                                                         : a.as_int());
    }
    record_fallback(dev, failed, detail::fallback_event(failed.config, member, why, c));
    return {};
  }
  return why;
}

// The fallback event in the key's report (once per distinct event, at most 16) and the log.
void Autotuner::Impl::record_fallback(const Device& dev, const Entry& failed,
                                      const std::string& event) {
  {
    std::lock_guard lock(mu);
    auto& events = reports[{&dev, failed.key.hash}].launch_fallbacks;
    if (events.size() >= 16 || std::find(events.begin(), events.end(), event) != events.end())
      return;
    events.push_back(event);
  }
  log_warning("kernel " + def.name + ": " + event);
}

// A key missing from memory with a fallback policy: the store's decision for this device and
// toolchain, read as strict mode reads it; without one, the fallback chain (fallback_chain.hpp).
Result<detail::Selection> Autotuner::Impl::stored_or_fallback(Device& dev, ArgList args,
                                                              const TuningKey& key,
                                                              TuningReport& report) {
  detail::KeyForms forms;
  TUNE_RETURN_IF_ERROR(forms_for(dev, args, key, &forms, report));
  detail::SessionContext ctx = context();
  ctx.strict = true;  // read, never time
  auto stored = detail::tune_one_key(ctx, dev, args, forms, report);
  if (stored.ok() || stored.status().code() != StatusCode::failed_precondition) return stored;
  report = TuningReport{};
  std::optional<detail::Selection> near;
  {
    std::lock_guard lock(mu);
    if (const Entry* e = nearest(dev, key)) near = detail::Selection{e->config, e->variant, false};
  }
  return detail::serve_from_chain(context(), keys, dev, args, forms, near, opts.isolation.enabled,
                                  report);
}

// Record mode: the key's line appended to record_path, once per key and process.
void Autotuner::Impl::record_miss(const Device& dev, ArgList args, const TuningKey& key,
                                  const TuningReport& report) {
  {
    std::lock_guard lock(mu);
    if (!recorded.insert(key.hash).second) return;
  }
  detail::KeyForms forms;
  if (!keys.forms_of(dev, args, key, &forms).ok()) return;  // the call reported it already
  const std::string line =
      detail::record_line(def.signature, forms.store_key, args, to_string(report.fallback));
  Status st = detail::append_record_line(record_path, line);
  if (!st.ok()) log_warning("kernel " + def.name + ": key not recorded: " + st.to_string());
}

}  // namespace tune
