#include "isolated_tuning.hpp"

#include <cstddef>
#include <map>

namespace tune::detail {

Result<MirroredArgs> mirror_args(Device& from, Device& to, ArgList args) {
  MirroredArgs out;
  out.args.assign(args.begin(), args.end());
  std::vector<std::byte> host;
  std::map<const DeviceBuffer*, DeviceBuffer*> mirror_of;  // a buffer passed twice aliases
  for (ArgValue& a : out.args) {
    if (a.kind != ArgKind::buffer) continue;
    if (auto it = mirror_of.find(a.buffer); it != mirror_of.end()) {
      a.buffer = it->second;
      continue;
    }
    const std::uint64_t n = a.buffer->size_bytes();
    host.resize(n);
    TUNE_RETURN_IF_ERROR(from.download(*a.buffer, host.data(), n));
    auto b = to.alloc(n);
    TUNE_RETURN_IF_ERROR(b.status());
    TUNE_RETURN_IF_ERROR(to.upload(**b, host.data(), n));
    mirror_of[a.buffer] = b->get();
    a.buffer = b->get();
    out.buffers.push_back(std::move(*b));
  }
  return out;
}

Result<Selection> tune_isolated(const SessionContext& ctx, WorkerPool& workers, Device& dev,
                                ArgList args, const KeyForms& forms, TuningReport& report) {
  const auto fail = [&](Status st) -> Result<Selection> {
    report.kernel = ctx.def.name;
    report.key = forms.text;
    report.device = dev.info().fingerprint();
    report.status = st.with_context("isolated tuning of " + ctx.def.name + " for " + forms.text);
    return report.status;
  };
  const KernelSource* src = ctx.def.source_for(dev.language());
  if (src == nullptr) return tune_one_key(ctx, dev, args, forms, report);
  auto proxy = workers.worker_for(dev, ctx.opts.isolation);
  if (!proxy.ok()) return fail(proxy.status());
  // The first start's failure is the tuning's (a missing worker, another protocol version);
  // a later restart's ends the session as device_lost (WorkerDevice::exchange).
  if (Status st = (*proxy)->start(); !st.ok()) return fail(st);
  Result<Selection> selected = Status(StatusCode::internal, "not tuned");
  {
    auto mirrored = mirror_args(dev, **proxy, args);
    if (!mirrored.ok()) return fail(mirrored.status());
    selected = tune_one_key(ctx, **proxy, mirrored->args, forms, report);
  }  // the copies are freed on the worker before the winner compiles here
  if (!selected.ok()) return selected;
  auto v = ctx.variants.compile(dev, *src, {selected->config}).front().get();
  if (!v->status.ok()) {
    return fail(Status(v->status).with_context("the winner {" + selected->config.to_string() +
                                               "} on this process's device"));
  }
  selected->variant = std::move(v);
  return selected;
}

}  // namespace tune::detail
