// Variants: compiled configurations of one kernel, per device, compiled on a thread pool and
// shared by every key (and every call) that uses them.
//
// A compile is started once per (device, config); its result (the kernel or the reason it
// could not be built) is kept until release(). Compiles that a caller stopped waiting for (a
// tuning budget ran out) finish in the background and serve a later call.
// Thread safety: every member may be called concurrently. Ownership: the cache owns the
// threads it starts and every variant they build (a thread keeps no reference to a variant
// once it has handed it over); they hold the source and the device by pointer. release(dev)
// and the destructor join the threads that compile for that device (all of them), so no
// kernel of a device outlives release(dev) or the cache: destroy the cache before the
// KernelDef and the Devices it compiled for. Blocking: release() and the destructor wait for
// the compiles they join.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tune/device.hpp"

namespace tune::detail {

// One compiled variant (or the reason it could not be built).
struct Variant {
  std::unique_ptr<CompiledKernel> kernel;
  Status status;
  double compile_ms = 0;
};
using VariantFuture = std::shared_future<std::shared_ptr<Variant>>;

class VariantCache {
 public:
  VariantCache() = default;
  ~VariantCache();
  VariantCache(const VariantCache&) = delete;
  VariantCache& operator=(const VariantCache&) = delete;

  // One future per config, in order; compiles those not started yet on the pool. `src` must
  // outlive the cache.
  std::vector<VariantFuture> compile(Device& dev, const KernelSource& src,
                                     const std::vector<Config>& configs);
  // Drops the variant of `config` on `dev` (a compile still running finishes and is dropped),
  // so that the next compile() of it compiles again.
  void forget(const Device& dev, const Config& config);
  // Waits for every compile for `dev`, joins its threads and drops every variant of `dev`.
  void release(const Device& dev);

 private:
  // The threads of one compile() call: they work through its list and then end.
  struct Batch {
    const Device* device = nullptr;
    std::vector<std::thread> threads;
    std::shared_ptr<std::atomic<unsigned>> running;  // threads not yet finished
  };
  // Joins the batches of `dev` (nullptr: all) that are finished, or all of them when `wait`.
  void join_batches(const Device* dev, bool wait);

  std::mutex mu_;
  std::map<std::pair<const Device*, std::string>, VariantFuture> variants_;
  std::mutex batches_mu_;  // guards batches_; never held while mu_ is taken
  std::vector<Batch> batches_;
};

// Which compile finishes next. Polls: futures have no wait-for-any, and a compile takes far
// longer than the 100 us between looks.
class CompileWaiter {
 public:
  explicit CompileWaiter(std::vector<VariantFuture> futures);
  bool empty() const noexcept { return pending_.empty(); }
  // The index of a finished compile, removed from those pending; waits at most until
  // `give_up` (now: do not wait). nullopt when none finished by then.
  std::optional<std::size_t> next(std::chrono::steady_clock::time_point give_up);
  std::shared_ptr<Variant> get(std::size_t i) const { return futures_[i].get(); }

 private:
  std::vector<VariantFuture> futures_;
  std::vector<std::size_t> pending_;
};

}  // namespace tune::detail
