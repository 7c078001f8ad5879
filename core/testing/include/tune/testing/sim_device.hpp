// SimDevice: a simulated tune::Device for tests and research. Not a backend: it is never
// registered in the backend table, never installed, and reports backend "simulated".
//
// Buffers are real host memory (alloc, upload, download, fill and copy move real bytes, with
// bounds checks). Compiling does nothing but record the configuration; a kernel's run time is
// a deterministic cost model over (config, args), in nanoseconds, optionally multiplied by
// lognormal noise that is itself a pure function of (seed, config, repetition index), so a
// run is reproducible for a seed whatever the thread interleaving. Failures are injected per
// configuration with predicates: compile errors (with a fake compiler log), resource limits,
// launch failures and timeouts; allocations fail past a memory limit (fail_alloc_over). An
// optional kernel body runs at every launch and every timed repetition, so tests can observe
// real buffer effects (accumulation, wrong output).
//
// Observability: counters (compiles, launches, timed repetitions, ...) and, unless disabled,
// an event log of strings such as "compile BM=64", "launch BM=64", "fill out",
// "time BM=64 reps=7", so tests can check hook order and that cache hits do not compile.
//
// Thread safety: compile(), launch(), time() and the buffer calls may run concurrently from
// any number of threads; counters are atomic and the event log is under a mutex. The set_*
// configuration calls are not synchronised with running calls: configure the device before
// sharing it between threads. A kernel body runs on the calling thread without any device
// lock held, so it may call back into the device.
//
// Launch targets (interop): the device models an application's streams and command buffers
// (LaunchTarget::stream / command_buffer, any handle value is a distinct stream or command
// buffer). launch_on() runs the kernel body at once like launch() and logs
// "launch <config> on <target>"; while a target is set capturing (set_capturing), a launch on
// it is logged "capture <config> on <target>" and does not run the body (a captured launch runs
// when its graph does). queue_waits_for() and target_waits_for_queue() log
// "queue waits for <target>" and "<target> waits for queue", so tests check the order of
// operations; <target> is LaunchTarget::to_string().
//
// Cost: with events off, no body, no failure predicates and argument checks off
// (set_fast_launch(true)), launch() is a type check and one relaxed atomic increment, so
// search strategies can be evaluated on huge spaces and the Autotuner's own overhead measured.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/device.hpp"

namespace tune::testing {

// Host memory standing in for device memory. `name` labels it in the event log; alloc()
// names buffers "buf0", "buf1", ... and SimDevice::set_name() renames them.
class SimBuffer final : public DeviceBuffer {
 public:
  // `live_counter` and `live_bytes` (either may be null) are the owning device's counts of
  // live buffers and their bytes, which the device raised for this one: lowered when it dies.
  SimBuffer(std::uint64_t bytes, std::string name, std::atomic<std::uint64_t>* live_counter,
            std::atomic<std::uint64_t>* live_bytes = nullptr)
      : bytes_(bytes), name_(std::move(name)), live_(live_counter), live_bytes_(live_bytes) {}
  ~SimBuffer() override {
    if (live_ != nullptr) live_->fetch_sub(1, std::memory_order_relaxed);
    if (live_bytes_ != nullptr) live_bytes_->fetch_sub(bytes_.size(), std::memory_order_relaxed);
  }
  SimBuffer(const SimBuffer&) = delete;
  SimBuffer& operator=(const SimBuffer&) = delete;
  std::uint64_t size_bytes() const noexcept override { return bytes_.size(); }

  std::span<std::byte> bytes() noexcept { return bytes_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  const std::string& name() const noexcept { return name_; }

 private:
  friend class SimDevice;
  std::vector<std::byte> bytes_;
  std::string name_;
  std::atomic<std::uint64_t>* live_ = nullptr;        // the owning device's live-buffer count
  std::atomic<std::uint64_t>* live_bytes_ = nullptr;  // and its live-byte count
};

// The CompiledKernel the simulated device returns: the configuration it was built for.
class SimKernel final : public CompiledKernel {
 public:
  SimKernel(Config config, std::uint64_t source_hash);
  ~SimKernel() override;
  SimKernel(const SimKernel&) = delete;
  SimKernel& operator=(const SimKernel&) = delete;
  const Config& config() const noexcept { return config_; }
  // config().to_string(), computed once (used in events and failure messages).
  const std::string& label() const noexcept { return label_; }
  std::uint64_t source_hash() const noexcept { return source_hash_; }

 private:
  friend class SimDevice;
  Config config_;
  std::string label_;
  std::uint64_t source_hash_ = 0;
  std::uint64_t config_hash_ = 0;
  // Repetitions timed so far: the index that makes noise deterministic per configuration.
  mutable std::atomic<std::uint64_t> reps_done_{0};
  std::atomic<std::uint64_t>* live_ = nullptr;  // the compiling device's live-kernel count
};

class SimDevice final : public Device {
 public:
  // Modelled run time of one launch in nanoseconds (must be > 0 and finite to be meaningful;
  // a non-finite or non-positive value makes the launch fail with launch_failed).
  using CostModel = std::function<double(const Config&, ArgList)>;
  // Runs at every launch and every timed repetition, after failure checks. May read and
  // write the argument buffers through SimDevice::data()/view().
  using KernelBody = std::function<void(const Config&, ArgList, SimDevice&)>;
  using ConfigPredicate = std::function<bool(const Config&)>;

  // The default snapshot: backend "simulated", name "simulated device", arch "sim", an
  // H100-like set of limits (1024 threads, 48 KiB / 227 KiB shared memory, 64K registers,
  // warp 32, 132 compute units, 50 MiB L2 (the last-level cache), 80 GiB memory), timer
  // resolution 1 ns.
  static DeviceInfo default_info();

  // `info` is used as given except that its backend is always "simulated".
  explicit SimDevice(DeviceInfo info = default_info());
  ~SimDevice() override;

  // --- configuration (call before sharing the device between threads) ---------------------

  // Replaces the cost model; an empty function restores default_cost().
  void set_cost_model(CostModel model);
  // Multiplies each timed repetition by exp(sigma * N(0,1)), where the normal deviate is a
  // pure function of (seed, config hash, repetition index of that compiled kernel). sigma 0
  // (the default) turns noise off.
  void set_noise(double sigma, std::uint64_t seed);
  // A clock that idles low and rises under load, like a GPU whose driver drops its clock
  // between bursts of work: each timed repetition runs `idle_factor` times slower while the
  // clock is idle, falling to 1x after `ramp_ns` of timed work (summed over all time() calls
  // since the clock last idled): linearly when `steps` is 0, else in `steps` equal steps,
  // each level held for ramp_ns / steps (a governor that steps the clock up now and then).
  // idle_factor 1 (the default) turns it off. idle_clock() drops the clock again (a
  // host-side pause); set_clock_ramp() starts idle.
  void set_clock_ramp(double idle_factor, double ramp_ns, int steps = 0);
  void idle_clock() noexcept { busy_ns_.store(0, std::memory_order_relaxed); }
  // A GPU that reaches its power or thermal limit under sustained load: once `after_ns` of
  // timed work has run since the clock last idled (the same count as set_clock_ramp's), each
  // timed repetition runs `factor` times slower (an H200 power-limited after heavy load:
  // up to 1.4x). factor 1 (the default) turns it off; combines with set_clock_ramp.
  void set_clock_throttle(double factor, double after_ns);
  // A power-limited GPU whose clock follows the power of the recent work: each timed
  // repetition runs `level` times slower, where `level` (1 at first) moves towards
  // draw(config) of the repetition's configuration exponentially, with a time constant of
  // `settle_ns` of timed work. A configuration that draws 1.06 runs about 6% slower once it has
  // run alone for a few settle_ns, but between turns of one that draws 1.0 it runs at the
  // mixed level like the other (the H200's two matmul tile orders, bench/RESULTS.md). An empty
  // `draw` turns it off (the default).
  void set_power_draw(std::function<double(const Config&)> draw, double settle_ns);
  // A power-limited GPU's clock that swings by itself: each timed repetition runs
  // 1 + amplitude * (1 - cos(2 pi t / period_ns)) / 2 times slower, where t is the timed work
  // since this call (summed over all time() calls): full speed at t = 0, `amplitude` slower
  // half a period later (the H200's dips by 10-14% about every 0.9 s, in step with the
  // onset of sustained load: 2026-12-03, 71dd9f9). amplitude 0 turns it
  // off (the default); combines with the others.
  void set_clock_wave(double amplitude, double period_ns);
  // compile() fails with compile_error for configs matching `pred`; the message is a fake
  // compiler log that names the config and contains `log_line`.
  void fail_compile_if(ConfigPredicate pred, std::string log_line = "simulated compile error");
  // compile() takes `ms` of real time (it sleeps first) for configs matching `pred`: a slow
  // compiler, for tests of what overlaps compiling.
  void compile_delay_if(ConfigPredicate pred, double ms);
  // compile() fails with out_of_resources for configs matching `pred`. Independently of it,
  // a config whose launch block exceeds info().max_threads_per_block, or whose shared_bytes
  // exceeds info().shared_bytes_per_block_optin, is always out_of_resources.
  void out_of_resources_if(ConfigPredicate pred);
  // alloc() fails with out_of_resources (what the CUDA, HIP and Vulkan backends return when
  // device memory runs out) when the buffers alive with the new one would hold more than
  // `bytes`: a device whose memory is nearly full, for tests of what a failed allocation
  // leaves behind. The buffers already alive count. Without it, only one buffer larger than
  // info().global_memory_bytes fails.
  void fail_alloc_over(std::uint64_t bytes);
  // launch() and time() fail with launch_failed for configs matching `pred`.
  void fail_launch_if(ConfigPredicate pred);
  // launch() and time() fail with timeout for configs matching `pred`. time() also reports a
  // timeout when a repetition's modelled time exceeds plan.timeout_ms.
  void timeout_if(ConfigPredicate pred);
  void set_kernel_body(KernelBody body);
  // Event recording (default on). Off: counters only.
  void set_record_events(bool on);
  // Whether launch()/time() check that buffer arguments are SimBuffers large enough for
  // their declared element count (invalid_argument otherwise). Default on.
  void set_check_args(bool on);
  // Shorthand for the cheapest launch: events off, argument checks off. Bodies and failure
  // predicates still apply if set.
  void set_fast_launch(bool on);
  // Marks `target` as capturing a graph (capturing() reports it) or not. May be called while
  // other threads use the device.
  void set_capturing(const LaunchTarget& target, bool on);

  // --- observation ------------------------------------------------------------------------

  std::uint64_t compiles() const noexcept { return compiles_.load(std::memory_order_relaxed); }
  // Calls of launch() (not the repetitions inside time()).
  std::uint64_t launches() const noexcept { return launches_.load(std::memory_order_relaxed); }
  // Calls of compare().
  std::uint64_t compares() const noexcept { return compares_.load(std::memory_order_relaxed); }
  // Calls of time().
  std::uint64_t time_calls() const noexcept { return time_calls_.load(std::memory_order_relaxed); }
  // Repetitions run inside time() (each one also runs the kernel body).
  std::uint64_t timed_reps() const noexcept { return timed_reps_.load(std::memory_order_relaxed); }
  // Cache flushes performed by time() (one per repetition when plan.flush_l2).
  std::uint64_t flushes() const noexcept { return flushes_.load(std::memory_order_relaxed); }
  // Bytes each flush writes: flush_bytes_for(info()), as a real backend sizes its scratch.
  std::uint64_t flush_bytes() const noexcept;
  // Kernel executions of any kind: launches() + timed_reps().
  std::uint64_t executions() const noexcept { return launches() + timed_reps(); }
  // Buffers allocated and not yet destroyed.
  std::uint64_t live_buffers() const noexcept {
    return live_buffers_.load(std::memory_order_relaxed);
  }
  // Bytes of the buffers allocated and not yet destroyed.
  std::uint64_t live_bytes() const noexcept { return live_bytes_.load(std::memory_order_relaxed); }
  // Compiled kernels not yet destroyed. Like a real backend's, a kernel must not outlive its
  // device: the destructor aborts the process, naming the count, when one does (a tuner that
  // left a compile running behind it, say).
  std::uint64_t live_kernels() const noexcept {
    return live_kernels_.load(std::memory_order_acquire);
  }
  // Calls of launch_on() with a stream or command-buffer target that ran (not captured).
  std::uint64_t target_launches() const noexcept {
    return target_launches_.load(std::memory_order_relaxed);
  }
  // Launches on a capturing target (recorded into the graph, not run).
  std::uint64_t captured() const noexcept { return captured_.load(std::memory_order_relaxed); }
  // Zeroes every counter and clears the event log.
  void reset_counters();

  // A copy of the event log, oldest first. Event forms:
  //   "alloc <buf> <bytes>"  "upload <buf>"  "download <buf>"  "fill <buf>"
  //   "copy <dst><-<src>"    "compile <config>"  "compile_error <config>"
  //   "out_of_resources <config>"  "launch <config>"  "launch_empty <config>" (a grid with a
  //   zero dimension: nothing runs)  "launch_failed <config>"
  //   "timeout <config>"  "time <config> reps=<n>"  "flush"  "rep <config>"  "sync"
  // where <config> is Config::to_string(). Within one time() call: "time ...", then per
  // repetition the "fill"/"copy" events of plan.resets, "flush" (when flush_l2), "rep <config>".
  std::vector<std::string> events() const;
  // The dims of the last launch() or launch_on() while events are recorded (set_record_events).
  LaunchDims last_launch_dims() const;
  // Appends a custom event (tests record their hooks' calls in the same log to check order).
  void record(std::string event);
  void clear_events();

  // The modelled time of `config` with `args` (the current cost model, without noise).
  double modelled_ns(const Config& config, ArgList args) const;
  // The default cost model: 1000 ns, plus every buffer argument's bytes at 1 byte/ps, plus a
  // penalty of 5% per unit of |log2(v) - 5| summed over the config's positive integer
  // parameters (so 32 is the best value of every integer parameter), plus 10% when a boolean
  // parameter is true. Deterministic and config-order independent.
  static double default_cost(const Config& config, ArgList args);

  // --- buffer access for tests and kernel bodies -------------------------------------------

  // The host bytes of a buffer allocated by a SimDevice (empty span for any other buffer).
  static std::span<std::byte> data(DeviceBuffer& buffer) noexcept;
  static std::span<const std::byte> data(const DeviceBuffer& buffer) noexcept;
  // The bytes of a buffer argument viewed as T (count elements, clamped to the buffer size);
  // empty for a scalar argument or a non-simulated buffer.
  template <class T>
  static std::span<T> view(const ArgValue& arg) noexcept {
    if (arg.kind != ArgKind::buffer || arg.buffer == nullptr) return {};
    auto bytes = data(*arg.buffer);
    std::uint64_t n = bytes.size() / sizeof(T);
    if (arg.count < n) n = arg.count;
    return {reinterpret_cast<T*>(bytes.data()), static_cast<std::size_t>(n)};
  }
  // Renames a buffer in the event log ("out", "acc", ...). No effect on other buffers.
  static void set_name(DeviceBuffer& buffer, std::string name);

  // Allocates and uploads `values`, returning the buffer (convenience for tests).
  template <class T>
  Result<Buffer> make_buffer(std::span<const T> values, std::string name) {
    auto buf = alloc(values.size_bytes() == 0 ? sizeof(T) : values.size_bytes());
    if (!buf.ok()) return buf;
    set_name(**buf, std::move(name));
    if (!values.empty()) TUNE_RETURN_IF_ERROR(upload(**buf, values.data(), values.size_bytes()));
    return buf;
  }
  // Downloads a whole buffer as a vector of T.
  template <class T>
  std::vector<T> read(const DeviceBuffer& buffer) {
    std::vector<T> out(buffer.size_bytes() / sizeof(T));
    (void)download(buffer, out.data(), out.size() * sizeof(T));
    return out;
  }

  // --- tune::Device -------------------------------------------------------------------------

  const DeviceInfo& info() const noexcept override { return info_; }
  Language language() const noexcept override { return Language::simulated; }

  Result<Buffer> alloc(std::uint64_t bytes) override;
  Status upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                std::uint64_t offset = 0) override;
  Status download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                  std::uint64_t offset = 0) override;
  Status fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
              std::uint64_t offset = 0) override;
  Status copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) override;

  // Fails with invalid_argument when `source.language` is not Language::simulated; then with
  // the injected compile_error / out_of_resources; else returns a SimKernel.
  Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& source,
                                                  const Config& config) override;
  // Injected failures first (launch_failed, timeout), then the kernel body. Returns at once.
  Status launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) override;
  // plan.reps repetitions; each: plan.resets (fill() and copy(); a failure is returned as
  // is), the L2 flush when plan.flush_l2, the kernel body, then the modelled time times the noise
  // and the clock factor (set_clock_ramp).
  Result<std::vector<double>> time(const CompiledKernel& kernel, const LaunchDims& dims,
                                   ArgList args, const TimingPlan& plan) override;
  Status synchronize() override;
  // compare_host over the buffers' host bytes (the comparison a backend runs on its device),
  // counted in compares().
  Result<Comparison> compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                             const CompareSpec& spec) override;
  // A stream or command-buffer target: the body runs now (not on a capturing target), the
  // event names the target. The queue target is launch().
  Status launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                   const LaunchTarget& target) override;
  Result<bool> capturing(const LaunchTarget& target) override;
  Status queue_waits_for(const LaunchTarget& target) override;
  Status target_waits_for_queue(const LaunchTarget& target) override;

 private:
  Status launch_impl(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                     const LaunchTarget& target);
  Status check_launch(const SimKernel& k, ArgList args) const;
  Status check_range(const char* op, const SimBuffer* b, std::uint64_t bytes,
                     std::uint64_t offset) const;
  double noise_factor(const SimKernel& k, std::uint64_t rep) const noexcept;
  bool recording() const noexcept { return record_events_.load(std::memory_order_relaxed); }

  DeviceInfo info_;
  CostModel cost_;
  double noise_sigma_ = 0.0;
  double clock_idle_factor_ = 1.0;
  double clock_ramp_ns_ = 0.0;
  int clock_steps_ = 0;
  double throttle_factor_ = 1.0;
  double throttle_after_ns_ = 0.0;
  std::atomic<std::uint64_t> busy_ns_{0};            // timed work since the clock last idled
  std::function<double(const Config&)> power_draw_;  // set_power_draw; empty: off
  double power_settle_ns_ = 1.0;
  std::mutex power_mutex_;       // guards power_level_ (time() may run on several threads)
  double power_level_ = 1.0;     // the clock's slowdown now, following the recent power draw
  double wave_amplitude_ = 0.0;  // set_clock_wave; 0: off
  double wave_period_ns_ = 1.0;
  double wave_ns_ = 0.0;  // timed work since set_clock_wave (guarded by power_mutex_)
  std::uint64_t noise_seed_ = 0;
  ConfigPredicate compile_fails_;
  std::string compile_log_line_;
  ConfigPredicate out_of_resources_;
  ConfigPredicate compile_slow_;
  double compile_delay_ms_ = 0.0;
  ConfigPredicate launch_fails_;
  std::uint64_t alloc_limit_ = UINT64_MAX;  // fail_alloc_over
  ConfigPredicate times_out_;
  KernelBody body_;
  bool check_args_ = true;

  std::atomic<bool> record_events_{true};
  std::atomic<std::uint64_t> compiles_{0}, launches_{0}, time_calls_{0}, timed_reps_{0},
      flushes_{0}, live_buffers_{0}, next_buffer_id_{0}, target_launches_{0}, captured_{0},
      compares_{0}, live_bytes_{0}, live_kernels_{0};
  std::atomic<bool> any_capturing_{false};
  mutable std::mutex capture_mu_;
  std::vector<LaunchTarget> capturing_;  // under capture_mu_
  mutable std::mutex events_mu_;
  std::vector<std::string> events_;
  LaunchDims last_dims_;  // guarded by events_mu_
};

}  // namespace tune::testing
