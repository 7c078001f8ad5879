#include "tuner.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "call_args.hpp"
#include "call_context.hpp"
#include "convert.hpp"
#include "errors.hpp"
#include "external_array.hpp"
#include "host_array.hpp"
#include "store_options.hpp"

namespace tune::python {
namespace {

AutotunerOptions make_options(const py::kwargs& kw) {
  AutotunerOptions o;
  for (auto [key, v] : kw) {
    const auto k = key.cast<std::string>();
    if (k == "effort") {
      const auto e = v.cast<std::string>();
      const std::optional<Effort> parsed = parse_effort(e);
      if (!parsed)
        throw py::value_error("effort: '" + e + "' (expected 'quick', 'standard' or 'thorough')");
      o.effort = *parsed;
    } else if (k == "warmup_ms")
      o.bench.warmup_ms = v.cast<double>();
    else if (k == "rep_ms")
      o.bench.rep_ms = v.cast<double>();
    else if (k == "warmup_count")
      o.bench.warmup_count = v.cast<int>();
    else if (k == "rep_count")
      o.bench.rep_count = v.cast<int>();
    else if (k == "racing")
      o.bench.racing = v.cast<bool>();
    else if (k == "tolerance")
      o.bench.tolerance = v.cast<double>();
    else if (k == "race_tolerance")
      o.bench.expert.race_tolerance = v.cast<double>();
    else if (k == "tie_tolerance")
      o.bench.expert.tie_tolerance = v.cast<double>();
    else if (k == "timing_cache") {
      const auto c = v.cast<std::string>();
      if (c == "flush")
        o.bench.cache = tune::TimingCache::flush;
      else if (c == "rotate")
        o.bench.cache = tune::TimingCache::rotate;
      else if (c == "none")
        o.bench.cache = tune::TimingCache::none;
      else
        throw py::value_error("timing_cache: '" + c + "' (expected 'flush', 'rotate' or 'none')");
    } else if (k == "timeout_ms")
      o.bench.timeout_ms = v.cast<double>();
    else if (k == "persistent")
      o.persistent = v.cast<bool>();
    else if (k == "store")
      o.store = store_option(v);
    else if (k == "bundles")
      o.bundles = bundles_option(v);
    else if (k == "tuning_budget_ms")
      o.tuning_budget_ms = v.cast<double>();
    else if (k == "disable")
      o.disable = v.cast<bool>();
    else if (k == "strict")
      o.strict = v.cast<bool>();
    else if (k == "print")
      o.print = v.cast<bool>();
    else if (k == "gpu_lock")
      o.gpu_lock = v.cast<bool>();
    else if (k == "verify") {
      const auto m = v.cast<std::string>();
      if (m != "winner_candidates" && m != "every_configuration")
        throw py::value_error("verify: '" + m +
                              "' (expected 'winner_candidates' or 'every_configuration')");
      o.verify = m == "every_configuration" ? VerifyScope::every_configuration
                                            : VerifyScope::winner_candidates;
    } else if (k == "capture_miss") {
      const auto m = v.cast<std::string>();
      if (m != "fallback" && m != "error")
        throw py::value_error("capture_miss: '" + m + "' (expected 'fallback' or 'error')");
      o.capture_miss = m == "error" ? CaptureMiss::error : CaptureMiss::fallback;
    } else {
      throw py::type_error("Tuner() got an unexpected keyword argument '" + k + "'");
    }
  }
  return o;
}

struct CallOptions {
  std::optional<LaunchTarget> target;
  py::object reference = py::none();
  double rtol = 1e-5, atol = 1e-8;
};

CallOptions call_options(const py::kwargs& kw) {
  CallOptions o;
  for (auto [key, v] : kw) {
    const auto k = key.cast<std::string>();
    if (k == "stream") {
      if (!v.is_none()) o.target = LaunchTarget::stream(reinterpret_cast<void*>(stream_handle(v)));
    } else if (k == "command_buffer") {
      if (!v.is_none())
        o.target = LaunchTarget::command_buffer(reinterpret_cast<void*>(v.cast<std::uint64_t>()));
    } else if (k == "reference") {
      o.reference = py::reinterpret_borrow<py::object>(v);
    } else if (k == "rtol") {
      o.rtol = v.cast<double>();
    } else if (k == "atol") {
      o.atol = v.cast<double>();
    } else {
      throw py::type_error("unexpected keyword argument '" + k + "'");
    }
  }
  return o;
}

// The stream of an external array as a LaunchTarget: 0 and 1 are the legacy default stream
// (CUDA array interface v3 writes 1 for it), 2 the per-thread default (CU_STREAM_PER_THREAD).
LaunchTarget stream_target(std::uint64_t s) {
  return LaunchTarget::stream(s == 1 ? nullptr : reinterpret_cast<void*>(s));
}

std::vector<Reference> references(const ArgMeta& meta, ArgList values, py::handle refs) {
  std::vector<Reference> out;
  if (refs.is_none()) return out;
  if (!py::isinstance<py::dict>(refs))
    throw py::type_error("reference: a dict of output name -> expected array");
  for (auto [name, expected] : refs.cast<py::dict>()) {
    const auto n = name.cast<std::string>();
    const int i = meta.index_of(n);
    if (i < 0 || meta.decls[static_cast<std::size_t>(i)].kind != ArgKind::buffer)
      throw py::value_error("reference: '" + n + "' is not a buffer argument");
    py::array host = to_host(expected).attr("reshape")(-1);
    const auto count = values[static_cast<std::size_t>(i)].count;
    if (static_cast<std::uint64_t>(host.size()) != count)
      throw py::value_error("reference '" + n + "' has " + std::to_string(host.size()) +
                            " elements, the argument " + std::to_string(count));
    out.push_back({static_cast<std::size_t>(i), host});
  }
  return out;
}

}  // namespace

PyTuner::PyTuner(std::shared_ptr<PyKernel> kernel, const py::kwargs& options)
    : kernel_(std::move(kernel)) {
  AutotunerOptions o = make_options(options);
  o.listener = [log = log_](const TuningReport& r) { log->add(r); };
  held_ = std::make_shared<Held>();
  held_->tuner = check(Autotuner::make(kernel_->def(), std::move(o)));
}

PyTuner::~PyTuner() { close(); }

void PyTuner::close() {
  std::shared_ptr<Held> held;
  {
    std::lock_guard lock(mu_);
    held = std::move(held_);
  }
  if (!held) return;
  // The Autotuner's destructor waits for calls that are tuning, whose callbacks need the GIL.
  if (PyGILState_Check() != 0) {
    py::gil_scoped_release nogil;
    held.reset();
  }
}

std::shared_ptr<PyTuner::Held> PyTuner::acquire(const std::shared_ptr<PyDevice>& dev) {
  std::shared_ptr<Held> held;
  {
    std::lock_guard lock(mu_);
    held = held_;
  }
  if (!held) raise_status(Status(StatusCode::failed_precondition, "the Tuner was closed"));
  std::lock_guard lock(held->mu);
  if (std::find(held->devices.begin(), held->devices.end(), dev) == held->devices.end())
    held->devices.push_back(dev);
  return held;
}

template <class F>
void PyTuner::run_call(const std::shared_ptr<PyDevice>& dev, const py::args& args,
                       const py::kwargs& kw, F&& fn) {
  if (!dev) throw py::type_error("a device is required (libtune.open_device())");
  CallOptions opts = call_options(kw);
  std::shared_ptr<Held> held = acquire(dev);
  CallArgs bound = CallArgs::bind(dev, *kernel_->meta(), args);
  LaunchTarget target = LaunchTarget::queue();
  if (opts.target)
    target = *opts.target;
  else if (bound.stream)
    target = stream_target(*bound.stream);

  CallContext ctx;
  ctx.args = args;
  ctx.shapes = bound.shapes;
  ctx.references = references(*kernel_->meta(), bound.values(), opts.reference);
  ctx.rtol = opts.rtol;
  ctx.atol = opts.atol;
  PythonErrorSlot::clear();
  Status st;
  {
    CallContext::Scope scope(ctx);
    py::gil_scoped_release nogil;
    Device& d = dev->device();
    st = bound.prepare(*dev);
    // Host copies were uploaded on the device's queue; a launch on the caller's stream or
    // command buffer must come after them, and their download after it.
    const bool order = !target.is_queue() && bound.has_copies();
    if (st.ok() && order) st = d.target_waits_for_queue(target);
    if (st.ok()) st = fn(*held->tuner, d, bound.values(), target);
    if (st.ok() && order) st = d.queue_waits_for(target);
    Status fin = bound.finish(*dev, st.ok());
    if (st.ok()) st = fin;
    held.reset();  // after close(), the last call destroys the Autotuner: without the GIL
  }
  check(st);
}

void PyTuner::call(const std::shared_ptr<PyDevice>& dev, const py::args& args,
                   const py::kwargs& kw) {
  run_call(dev, args, kw, [](Autotuner& t, Device& d, ArgList a, const LaunchTarget& target) {
    return t.run(d, a, target);
  });
}

py::dict PyTuner::tune(const std::shared_ptr<PyDevice>& dev, const py::args& args,
                       const py::kwargs& kw) {
  Config chosen;
  run_call(dev, args, kw, [&](Autotuner& t, Device& d, ArgList a, const LaunchTarget& target) {
    auto c = target.is_queue() ? t.tune(d, a) : t.tune(d, a, target);
    if (!c.ok()) return c.status();
    chosen = std::move(*c);
    return Status();
  });
  return config_to_dict(chosen);
}

py::object PyTuner::best(const std::shared_ptr<PyDevice>& dev, const py::args& args) {
  std::optional<Config> found;
  run_call(dev, args, py::kwargs(), [&](Autotuner& t, Device& d, ArgList a, const LaunchTarget&) {
    found = t.best(d, a);
    return Status();
  });
  if (!found) return py::none();
  return config_to_dict(*found);
}

void PyTuner::warmup(const std::shared_ptr<PyDevice>& dev) {
  std::shared_ptr<Held> held = acquire(dev);
  PythonErrorSlot::clear();
  Status st;
  {
    py::gil_scoped_release nogil;
    st = held->tuner->warmup(dev->device());
    held.reset();
  }
  check(st);
}

py::list PyTuner::reports() const {
  py::list out;
  for (const auto& r : log_->all()) out.append(report_dict(r));
  return out;
}

}  // namespace tune::python
