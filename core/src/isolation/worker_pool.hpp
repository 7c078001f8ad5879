// WorkerPool: an Autotuner's worker proxies for isolated tuning (AutotunerOptions::isolation),
// one WorkerDevice per device tuned in isolation, made on first use; its worker process starts
// on the proxy's first call (WorkerDevice::start).
//
// Ownership: owns the proxies; one lives until release() of its device or the pool's end. An
// Autotuner declares its pool before its VariantCache so that the proxies outlive the proxy
// kernels the cache holds. Thread safety: every member may be called concurrently (one mutex).
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
  // The proxy of `dev`, made on first use from `iso` (worker path: iso.worker, else
  // TUNE_WORKER, else the installed tune-worker; device: iso.device, else the device's reopen
  // spec). unavailable, naming the device, when another process cannot open it.
  Result<WorkerDevice*> worker_for(const Device& dev, const IsolationOptions& iso);

  // Destroys the proxy of `dev`, if any, after `before_destroy` ran on it (the caller releases
  // the kernels compiled on the proxy first).
  void release(const Device& dev, const std::function<void(WorkerDevice&)>& before_destroy);

 private:
  std::mutex mu_;
  std::map<const Device*, std::unique_ptr<WorkerDevice>> workers_;
};

}  // namespace tune::detail
