#include "worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "tune/environment.hpp"

namespace tune::detail {

Result<WorkerDevice*> WorkerPool::worker_for(const Device& dev, const IsolationOptions& iso) {
  std::lock_guard lock(mu_);
  auto& w = workers_[&dev];
  if (w != nullptr) return w.get();
  WorkerSettings s;
  s.path = !iso.worker.empty() ? iso.worker : env_text("TUNE_WORKER");
  if (s.path.empty()) s.path = TUNE_WORKER_INSTALLED;
  s.spec = !iso.device.empty() ? iso.device : dev.info().reopen_spec;
  if (s.spec.empty()) {
    workers_.erase(&dev);
    return Status(StatusCode::unavailable, "isolated tuning: device '" + dev.info().name + "' (" +
                                               dev.info().backend +
                                               ") cannot say how another process opens it; set "
                                               "AutotunerOptions::isolation.device");
  }
  const auto ms = [](double v) { return std::chrono::milliseconds(static_cast<std::int64_t>(v)); };
  s.call_limit = ms(iso.call_timeout_ms);
  s.compile_limit = ms(iso.compile_timeout_ms);
  s.startup = std::max(s.compile_limit, std::chrono::milliseconds(120000));
  w = std::make_unique<WorkerDevice>(dev.info(), dev.language(), std::move(s));
  return w.get();
}

void WorkerPool::release(const Device& dev,
                         const std::function<void(WorkerDevice&)>& before_destroy) {
  std::lock_guard lock(mu_);
  auto it = workers_.find(&dev);
  if (it == workers_.end()) return;
  before_destroy(*it->second);
  workers_.erase(it);
}

}  // namespace tune::detail
