// WorkerPool: an Autotuner's worker proxies for isolated tuning (AutotunerOptions::isolation),
// one WorkerDevice per device tuned in isolation, taken on first use; its worker process starts
// on the proxy's first call (WorkerDevice::start).
//
// Sharing: the proxies are process-wide, one per (worker executable, device spec, device
// fingerprint, time limits): every Autotuner that tunes in isolation on a GPU shares that GPU's
// worker process and context, so 50 tuned kernels cost one worker, not 50. The proxy serialises
// calls (one request on its socket at a time), so tunings of several Autotuners take turns in
// it; a candidate that kills the worker costs the others a replay of their live buffers and
// kernels in the restarted one (WorkerDevice), never a wrong result. A proxy lives while some
// Autotuner holds it: its worker ends with the last Autotuner's release() of the device or the
// last Autotuner's end.
//
// Ownership: each pool holds shared references to its proxies. An Autotuner declares its pool
// before its VariantCache so that the proxies outlive the proxy kernels the cache holds.
// Thread safety: every member may be called concurrently (the pool's mutex, and the process'
// table's).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "tune/autotuner.hpp"
#include "worker_device.hpp"

namespace tune::detail {

class WorkerPool {
 public:
  // The proxy of `dev`, taken on first use from `iso` (worker path: iso.worker, else
  // TUNE_WORKER, else the installed tune-worker; device: iso.device, else the device's reopen
  // spec): the process' proxy for that worker and device when one lives, else a new one.
  // unavailable, naming the device, when another process cannot open it.
  Result<WorkerDevice*> worker_for(const Device& dev, const IsolationOptions& iso);

  // Drops this pool's reference to the proxy of `dev`, if any, after `before_destroy` ran on it
  // (the caller releases the kernels it compiled on the proxy first); the proxy and its worker
  // end when no other Autotuner holds them.
  void release(const Device& dev, const std::function<void(WorkerDevice&)>& before_destroy);

 private:
  std::mutex mu_;
  std::map<const Device*, std::shared_ptr<WorkerDevice>> workers_;
};

}  // namespace tune::detail
