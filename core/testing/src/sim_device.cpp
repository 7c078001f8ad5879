#include "tune/testing/sim_device.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numbers>
#include <thread>
#include <typeinfo>

#include "tune/backend/hash.hpp"
#include "tune/backend/last_level_cache.hpp"

namespace tune::testing {
namespace {

// The simulated device's buffers and kernels are final classes: a typeid comparison is the
// cheapest exact type check (no dynamic_cast walk on the launch path).
SimBuffer* as_sim(DeviceBuffer* b) noexcept {
  return b != nullptr && typeid(*b) == typeid(SimBuffer) ? static_cast<SimBuffer*>(b) : nullptr;
}
const SimBuffer* as_sim(const DeviceBuffer* b) noexcept {
  return b != nullptr && typeid(*b) == typeid(SimBuffer) ? static_cast<const SimBuffer*>(b)
                                                         : nullptr;
}
const SimKernel* as_sim(const CompiledKernel& k) noexcept {
  return typeid(k) == typeid(SimKernel) ? static_cast<const SimKernel*>(&k) : nullptr;
}

Status not_sim_kernel() {
  return {StatusCode::invalid_argument, "kernel was not compiled by a SimDevice"};
}

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform double in (0, 1] from 53 random bits.
double unit_interval(std::uint64_t bits) noexcept {
  return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

}  // namespace

SimKernel::SimKernel(Config config, std::uint64_t source_hash)
    : config_(std::move(config)),
      label_(config_.to_string()),
      source_hash_(source_hash),
      config_hash_(config_.hash()) {}

SimKernel::~SimKernel() {
  if (live_ != nullptr) live_->fetch_sub(1, std::memory_order_acq_rel);
}

DeviceInfo SimDevice::default_info() {
  DeviceInfo d;
  d.backend = "simulated";
  d.vendor = "libtune";
  d.name = "simulated device";
  d.arch = "sim";
  d.driver_version = "sim-1";
  d.compiler_version = "simcc-1";
  d.compute_units = 132;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647u, 65535u, 65535u};
  d.shared_bytes_per_block = 48u * 1024u;
  d.shared_bytes_per_block_optin = 227u * 1024u;
  d.registers_per_block = 65536;
  d.warp_size = 32;
  d.l2_bytes = 50ull << 20;
  d.llc_bytes = d.l2_bytes;
  d.llc_source = CacheSizeSource::reported;
  d.global_memory_bytes = 80ull << 30;
  d.timer_resolution_ns = 1.0;
  return d;
}

std::uint64_t SimDevice::flush_bytes() const noexcept { return flush_bytes_for(info_); }

SimDevice::SimDevice(DeviceInfo info) : info_(std::move(info)) {
  info_.backend = "simulated";
  // Each SimDevice is a GPU of its own (its per-GPU timing lock is its own), unless the caller
  // names one: processes that set the same uuid share a lock.
  static std::atomic<std::uint64_t> next{0};
  if (info_.uuid.empty())
    info_.uuid = "sim-" + std::to_string(::getpid()) + "-" + std::to_string(next++);
}

SimDevice::~SimDevice() {
  // A kernel destroyed later would write to this device's counter after it is gone (on a real
  // backend: call into a destroyed device). Say so loudly rather than corrupt memory.
  if (const std::uint64_t n = live_kernels(); n != 0) {
    std::fprintf(stderr,
                 "SimDevice destroyed while %llu of its compiled kernels are alive: destroy (or "
                 "release) the Autotuner before the device\n",
                 static_cast<unsigned long long>(n));
    std::abort();
  }
}

// --- configuration ---------------------------------------------------------------------------

void SimDevice::set_cost_model(CostModel model) { cost_ = std::move(model); }

void SimDevice::set_noise(double sigma, std::uint64_t seed) {
  noise_sigma_ = sigma;
  noise_seed_ = seed;
}

void SimDevice::set_clock_ramp(double idle_factor, double ramp_ns, int steps) {
  clock_idle_factor_ = std::max(1.0, idle_factor);
  clock_ramp_ns_ = std::max(0.0, ramp_ns);
  clock_steps_ = std::max(0, steps);
  idle_clock();
}

void SimDevice::set_clock_throttle(double factor, double after_ns) {
  throttle_factor_ = std::max(1.0, factor);
  throttle_after_ns_ = std::max(0.0, after_ns);
}

void SimDevice::set_power_draw(std::function<double(const Config&)> draw, double settle_ns) {
  power_draw_ = std::move(draw);
  power_settle_ns_ = std::max(1.0, settle_ns);
  std::lock_guard<std::mutex> lock(power_mutex_);
  power_level_ = 1.0;
}

void SimDevice::set_clock_wave(double amplitude, double period_ns) {
  std::lock_guard<std::mutex> lock(power_mutex_);
  wave_amplitude_ = std::max(0.0, amplitude);
  wave_period_ns_ = std::max(1.0, period_ns);
  wave_ns_ = 0.0;
}

void SimDevice::compile_delay_if(ConfigPredicate pred, double ms) {
  compile_slow_ = std::move(pred);
  compile_delay_ms_ = ms;
}

void SimDevice::fail_compile_if(ConfigPredicate pred, std::string log_line) {
  compile_fails_ = std::move(pred);
  compile_log_line_ = std::move(log_line);
}

void SimDevice::out_of_resources_if(ConfigPredicate pred) { out_of_resources_ = std::move(pred); }
void SimDevice::fail_alloc_over(std::uint64_t bytes) { alloc_limit_ = bytes; }
void SimDevice::fail_launch_if(ConfigPredicate pred) { launch_fails_ = std::move(pred); }
void SimDevice::timeout_if(ConfigPredicate pred) { times_out_ = std::move(pred); }
void SimDevice::set_kernel_body(KernelBody body) { body_ = std::move(body); }
void SimDevice::set_record_events(bool on) { record_events_.store(on); }
void SimDevice::set_check_args(bool on) { check_args_ = on; }

void SimDevice::set_fast_launch(bool on) {
  set_record_events(!on);
  set_check_args(!on);
}

// --- observation -----------------------------------------------------------------------------

void SimDevice::reset_counters() {
  compiles_ = 0;
  launches_ = 0;
  time_calls_ = 0;
  timed_reps_ = 0;
  flushes_ = 0;
  target_launches_ = 0;
  captured_ = 0;
  clear_events();
}

std::vector<std::string> SimDevice::events() const {
  std::lock_guard lock(events_mu_);
  return events_;
}

LaunchDims SimDevice::last_launch_dims() const {
  std::lock_guard lock(events_mu_);
  return last_dims_;
}

void SimDevice::record(std::string event) {
  std::lock_guard lock(events_mu_);
  events_.push_back(std::move(event));
}

void SimDevice::clear_events() {
  std::lock_guard lock(events_mu_);
  events_.clear();
}

double SimDevice::modelled_ns(const Config& config, ArgList args) const {
  return cost_ ? cost_(config, args) : default_cost(config, args);
}

double SimDevice::default_cost(const Config& config, ArgList args) {
  double bytes = 0;
  for (const ArgValue& a : args)
    if (a.kind == ArgKind::buffer) bytes += static_cast<double>(a.count * size_of(a.type));
  double penalty = 0;
  for (const auto& [name, value] : config.params()) {
    if (const auto* i = std::get_if<std::int64_t>(&value); i != nullptr && *i > 0) {
      penalty += 0.05 * std::abs(std::log2(static_cast<double>(*i)) - 5.0);
    } else if (const auto* b = std::get_if<bool>(&value); b != nullptr && *b) {
      penalty += 0.10;
    }
  }
  const LaunchOptions& lo = config.launch();
  if (lo.block.product() > 0)
    penalty += 0.05 * std::abs(std::log2(static_cast<double>(lo.block.product())) - 8.0);
  if (lo.num_stages > 0) penalty += 0.02 * std::abs(lo.num_stages - 3);
  return (1000.0 + bytes / 1000.0) * (1.0 + penalty);
}

// --- buffers ---------------------------------------------------------------------------------

std::span<std::byte> SimDevice::data(DeviceBuffer& buffer) noexcept {
  SimBuffer* b = as_sim(&buffer);
  return b != nullptr ? b->bytes() : std::span<std::byte>{};
}

std::span<const std::byte> SimDevice::data(const DeviceBuffer& buffer) noexcept {
  const SimBuffer* b = as_sim(&buffer);
  return b != nullptr ? b->bytes() : std::span<const std::byte>{};
}

void SimDevice::set_name(DeviceBuffer& buffer, std::string name) {
  if (SimBuffer* b = as_sim(&buffer)) b->name_ = std::move(name);
}

Result<Buffer> SimDevice::alloc(std::uint64_t bytes) {
  if (info_.global_memory_bytes != 0 && bytes > info_.global_memory_bytes) {
    return Status(StatusCode::out_of_resources,
                  "simulated alloc of " + std::to_string(bytes) + " bytes exceeds the " +
                      std::to_string(info_.global_memory_bytes) + " bytes of device memory");
  }
  // Reserved before the check, so that concurrent allocations cannot both pass it.
  const std::uint64_t held = live_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (held > alloc_limit_) {
    live_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return Status(StatusCode::out_of_resources,
                  "simulated alloc of " + std::to_string(bytes) +
                      " bytes: out of device memory (live buffers would hold " +
                      std::to_string(held) + " bytes, over the " + std::to_string(alloc_limit_) +
                      " of SimDevice::fail_alloc_over)");
  }
  std::string name = "buf" + std::to_string(next_buffer_id_.fetch_add(1));
  std::unique_ptr<SimBuffer> b;
  try {
    b = std::make_unique<SimBuffer>(bytes, name, &live_buffers_, &live_bytes_);
  } catch (const std::bad_alloc&) {
    live_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    return Status(StatusCode::out_of_resources,
                  "simulated alloc of " + std::to_string(bytes) + " bytes: out of host memory");
  }
  live_buffers_.fetch_add(1, std::memory_order_relaxed);
  if (recording()) record("alloc " + name + " " + std::to_string(bytes));
  return Buffer(std::move(b));
}

Status SimDevice::check_range(const char* op, const SimBuffer* b, std::uint64_t bytes,
                              std::uint64_t offset) const {
  if (b == nullptr) {
    return {StatusCode::invalid_argument,
            std::string(op) + ": buffer was not allocated by a SimDevice"};
  }
  const std::uint64_t size = b->size_bytes();
  if (offset > size || bytes > size - offset) {
    return {StatusCode::invalid_argument, std::string(op) + " of " + std::to_string(bytes) +
                                              " bytes at offset " + std::to_string(offset) +
                                              " is out of bounds of buffer '" + b->name() + "' (" +
                                              std::to_string(size) + " bytes)"};
  }
  return {};
}

Status SimDevice::upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                         std::uint64_t offset) {
  SimBuffer* b = as_sim(&dst);
  TUNE_RETURN_IF_ERROR(check_range("upload", b, bytes, offset));
  if (bytes > 0) std::memcpy(b->bytes_.data() + offset, src, bytes);
  if (recording()) record("upload " + b->name());
  return {};
}

Status SimDevice::download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                           std::uint64_t offset) {
  const SimBuffer* b = as_sim(&src);
  TUNE_RETURN_IF_ERROR(check_range("download", b, bytes, offset));
  if (bytes > 0) std::memcpy(dst, b->bytes_.data() + offset, bytes);
  if (recording()) record("download " + b->name());
  return {};
}

Status SimDevice::fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
                       std::uint64_t offset) {
  SimBuffer* b = as_sim(&dst);
  TUNE_RETURN_IF_ERROR(check_range("fill", b, bytes, offset));
  if (bytes % 4 != 0) {
    return {StatusCode::invalid_argument,
            "fill of " + std::to_string(bytes) + " bytes: not a multiple of 4"};
  }
  std::byte word[4];
  std::memcpy(word, &pattern, 4);  // host order: little-endian on every supported host
  for (std::uint64_t i = 0; i < bytes; ++i) b->bytes_[offset + i] = word[i % 4];
  if (recording()) record("fill " + b->name());
  return {};
}

Status SimDevice::copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) {
  SimBuffer* d = as_sim(&dst);
  const SimBuffer* s = as_sim(&src);
  TUNE_RETURN_IF_ERROR(check_range("copy (destination)", d, bytes, 0));
  TUNE_RETURN_IF_ERROR(check_range("copy (source)", s, bytes, 0));
  if (bytes > 0) std::memmove(d->bytes_.data(), s->bytes_.data(), bytes);
  if (recording()) record("copy " + d->name() + "<-" + s->name());
  return {};
}

// --- kernels ---------------------------------------------------------------------------------

Result<std::unique_ptr<CompiledKernel>> SimDevice::compile(const KernelSource& source,
                                                           const Config& config) {
  if (source.language != Language::simulated) {
    return Status(StatusCode::invalid_argument,
                  "SimDevice compiles Language::simulated sources, not " +
                      std::string(to_string(source.language)));
  }
  if (compile_slow_ && compile_slow_(config))
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(compile_delay_ms_));
  compiles_.fetch_add(1, std::memory_order_relaxed);
  const std::string label = config.to_string();

  if (compile_fails_ && compile_fails_(config)) {
    if (recording()) record("compile_error " + label);
    return Status(StatusCode::compile_error,
                  "sim.kernel(1): error: " + compile_log_line_ + "\n  while compiling '" +
                      source.entry + "' with " + label +
                      "\n1 error detected in the compilation of \"sim.kernel\".");
  }

  std::string limit;
  const LaunchOptions& lo = config.launch();
  if (info_.max_threads_per_block != 0 && lo.block.product() > info_.max_threads_per_block) {
    limit = "block of " + std::to_string(lo.block.product()) + " threads exceeds the limit of " +
            std::to_string(info_.max_threads_per_block) + " threads per block";
  } else if (info_.shared_bytes_per_block_optin != 0 &&
             lo.shared_bytes > info_.shared_bytes_per_block_optin) {
    limit = std::to_string(lo.shared_bytes) + " bytes of shared memory exceed the limit of " +
            std::to_string(info_.shared_bytes_per_block_optin) + " bytes per block";
  } else if (out_of_resources_ && out_of_resources_(config)) {
    limit = "simulated resource limit exceeded";
  }
  if (!limit.empty()) {
    if (recording()) record("out_of_resources " + label);
    return Status(StatusCode::out_of_resources, limit + " (" + label + ")");
  }

  auto k = std::make_unique<SimKernel>(config, source.hash());
  k->live_ = &live_kernels_;
  live_kernels_.fetch_add(1, std::memory_order_acq_rel);
  k->resources_.registers = 32;
  k->resources_.shared_bytes = lo.shared_bytes;
  k->resources_.max_threads = info_.max_threads_per_block;
  k->log_ = "simulated compile of '" + source.entry + "' with " + label + ": ok";
  if (recording()) record("compile " + label);
  return std::unique_ptr<CompiledKernel>(std::move(k));
}

Status SimDevice::check_launch(const SimKernel& k, ArgList args) const {
  if (launch_fails_ && launch_fails_(k.config())) {
    return {StatusCode::launch_failed, "simulated launch failure of " + k.label()};
  }
  if (times_out_ && times_out_(k.config())) {
    return {StatusCode::timeout, "simulated launch of " + k.label() + " did not finish"};
  }
  if (check_args_) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const ArgValue& a = args[i];
      if (a.kind != ArgKind::buffer) continue;
      const SimBuffer* b = as_sim(a.buffer);
      if (b == nullptr) {
        return {StatusCode::invalid_argument,
                "argument " + std::to_string(i) + ": buffer was not allocated by a SimDevice"};
      }
      if (a.count > b->size_bytes() / size_of(a.type)) {
        return {StatusCode::invalid_argument,
                "argument " + std::to_string(i) + ": " + std::to_string(a.count) + " " +
                    std::string(to_string(a.type)) + " elements overflow buffer '" + b->name() +
                    "' of " + std::to_string(b->size_bytes()) + " bytes"};
      }
    }
  }
  return {};
}

Status SimDevice::launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) {
  return launch_impl(kernel, dims, args, LaunchTarget::queue());
}

Status SimDevice::launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                            const LaunchTarget& target) {
  return launch_impl(kernel, dims, args, target);
}

Status SimDevice::launch_impl(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                              const LaunchTarget& target) {
  const SimKernel* k = as_sim(kernel);
  if (k == nullptr) return not_sim_kernel();
  if (recording()) {
    std::lock_guard lock(events_mu_);
    last_dims_ = dims;
  }
  if (dims.grid.product() == 0) {  // an empty problem: launches nothing, as on every backend
    if (recording()) record("launch_empty " + k->label());
    return {};
  }
  launches_.fetch_add(1, std::memory_order_relaxed);
  if (launch_fails_ || times_out_ || check_args_) {
    Status st = check_launch(*k, args);
    if (!st.ok()) {
      if (recording()) record(std::string(to_string(st.code())) + " " + k->label());
      return st;
    }
  }
  if (target.is_queue()) {
    if (recording()) record("launch " + k->label());
  } else {
    bool captured = false;
    if (any_capturing_.load(std::memory_order_acquire)) captured = capturing(target).value();
    if (captured) {
      captured_.fetch_add(1, std::memory_order_relaxed);
      if (recording()) record("capture " + k->label() + " on " + target.to_string());
      return {};
    }
    target_launches_.fetch_add(1, std::memory_order_relaxed);
    if (recording()) record("launch " + k->label() + " on " + target.to_string());
  }
  if (body_) body_(k->config(), args, *this);
  return {};
}

void SimDevice::set_capturing(const LaunchTarget& target, bool on) {
  std::lock_guard lock(capture_mu_);
  std::erase_if(capturing_, [&](const LaunchTarget& t) {
    return t.kind == target.kind && t.handle == target.handle;
  });
  if (on) capturing_.push_back(target);
  any_capturing_.store(!capturing_.empty(), std::memory_order_release);
}

Result<bool> SimDevice::capturing(const LaunchTarget& target) {
  std::lock_guard lock(capture_mu_);
  return std::any_of(capturing_.begin(), capturing_.end(), [&](const LaunchTarget& t) {
    return t.kind == target.kind && t.handle == target.handle;
  });
}

Status SimDevice::queue_waits_for(const LaunchTarget& target) {
  if (recording() && !target.is_queue()) record("queue waits for " + target.to_string());
  return {};
}

Status SimDevice::target_waits_for_queue(const LaunchTarget& target) {
  if (recording() && !target.is_queue()) record(target.to_string() + " waits for queue");
  return {};
}

double SimDevice::noise_factor(const SimKernel& k, std::uint64_t rep) const noexcept {
  const std::uint64_t h = hash_combine(hash_combine(noise_seed_, k.config_hash_), rep);
  const double u1 = unit_interval(splitmix64(h));
  const double u2 = unit_interval(splitmix64(h ^ 0x5bd1e9955bd1e995ULL));
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::exp(noise_sigma_ * z);
}

Result<std::vector<double>> SimDevice::time(const CompiledKernel& kernel,
                                            const LaunchDims& /*dims*/, ArgList args,
                                            const TimingPlan& plan) {
  const SimKernel* k = as_sim(kernel);
  if (k == nullptr) return not_sim_kernel();
  if (plan.reps < 0) {
    return Status(StatusCode::invalid_argument,
                  "TimingPlan.reps is negative (" + std::to_string(plan.reps) + ")");
  }
  time_calls_.fetch_add(1, std::memory_order_relaxed);
  if (recording()) record("time " + k->label() + " reps=" + std::to_string(plan.reps));
  if (Status st = check_launch(*k, args); !st.ok()) {
    if (recording()) record(std::string(to_string(st.code())) + " " + k->label());
    return st;
  }
  const double base_ns = modelled_ns(k->config(), args);
  if (!(base_ns > 0) || !std::isfinite(base_ns)) {
    return Status(StatusCode::launch_failed, "simulated cost model returned " +
                                                 std::to_string(base_ns) + " ns for " + k->label());
  }
  const double limit_ns = plan.timeout_ms * 1e6;

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(plan.reps));
  for (int r = 0; r < plan.reps; ++r) {
    // The resets as the device's own fills and copies, outside the timed span.
    if (!plan.resets.empty()) TUNE_RETURN_IF_ERROR(apply_resets(*this, plan.resets));
    if (plan.flush_l2) {
      flushes_.fetch_add(1, std::memory_order_relaxed);
      if (recording()) record("flush");
    }
    if (recording()) record("rep " + k->label());
    if (body_) body_(k->config(), args, *this);
    timed_reps_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t rep = k->reps_done_.fetch_add(1, std::memory_order_relaxed);
    double ns = noise_sigma_ > 0 ? base_ns * noise_factor(*k, rep) : base_ns;
    if (clock_idle_factor_ > 1.0 || throttle_factor_ > 1.0) {
      const double busy = static_cast<double>(busy_ns_.load(std::memory_order_relaxed));
      if (clock_idle_factor_ > 1.0) {
        double up = clock_ramp_ns_ > 0 ? std::min(1.0, busy / clock_ramp_ns_) : 1.0;
        if (clock_steps_ > 0) up = std::floor(up * clock_steps_) / clock_steps_;
        ns *= clock_idle_factor_ - (clock_idle_factor_ - 1.0) * up;
      }
      if (busy >= throttle_after_ns_) ns *= throttle_factor_;
      busy_ns_.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
    }
    if (power_draw_) {
      const double draw = power_draw_(k->config());
      std::lock_guard<std::mutex> lock(power_mutex_);
      power_level_ += (draw - power_level_) * (1.0 - std::exp(-ns / power_settle_ns_));
      ns *= power_level_;
    }
    if (wave_amplitude_ > 0) {
      std::lock_guard<std::mutex> lock(power_mutex_);
      const double phase = 2 * std::numbers::pi * wave_ns_ / wave_period_ns_;
      const double slow = 1.0 + wave_amplitude_ * (1.0 - std::cos(phase)) / 2;
      wave_ns_ += ns * slow;
      ns *= slow;
    }
    if (ns > limit_ns) {
      if (recording()) record("timeout " + k->label());
      return Status(StatusCode::timeout, "simulated launch of " + k->label() + " took " +
                                             std::to_string(ns / 1e6) + " ms, over the " +
                                             std::to_string(plan.timeout_ms) + " ms limit");
    }
    samples.push_back(ns);
  }
  return samples;
}

Status SimDevice::synchronize() {
  if (recording()) record("sync");
  return {};
}

Result<Comparison> SimDevice::compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                      const CompareSpec& spec) {
  compares_.fetch_add(1, std::memory_order_relaxed);
  if (recording()) record("compare");
  const auto* a = dynamic_cast<const SimBuffer*>(&actual);
  const auto* e = dynamic_cast<const SimBuffer*>(&expected);
  if (a == nullptr || e == nullptr)
    return Status(StatusCode::invalid_argument, "compare: a buffer is not this device's");
  return compare_host(data(actual), data(expected), spec);
}

}  // namespace tune::testing
