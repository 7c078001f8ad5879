#include "worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <compare>
#include <string>
#include <tuple>

#include "tune/environment.hpp"

namespace tune::detail {

namespace {

// What makes two proxies interchangeable: the same worker, opening the same device, with the
// same limits.
struct SharedKey {
  std::string path, spec, fingerprint;
  std::int64_t call_ms = 0, compile_ms = 0;
  auto operator<=>(const SharedKey&) const = default;
};

// The process' live proxies. Weak: a proxy ends with the last pool that holds it.
struct SharedWorkers {
  std::mutex mu;
  std::map<SharedKey, std::weak_ptr<WorkerDevice>> by_key;
};

SharedWorkers& shared_workers() {
  // Never destroyed: an Autotuner in static storage may drop its proxy during exit.
  static auto* s = new SharedWorkers;
  return *s;
}

}  // namespace

Result<WorkerDevice*> WorkerPool::worker_for(const Device& dev, const IsolationOptions& iso) {
  std::lock_guard lock(mu_);
  if (auto it = workers_.find(&dev); it != workers_.end()) return it->second.get();
  WorkerSettings s;
  s.path = !iso.worker.empty() ? iso.worker : env_text("TUNE_WORKER");
  if (s.path.empty()) s.path = TUNE_WORKER_INSTALLED;
  s.spec = !iso.device.empty() ? iso.device : dev.info().reopen_spec;
  if (s.spec.empty()) {
    return Status(StatusCode::unavailable, "isolated tuning: device '" + dev.info().name + "' (" +
                                               dev.info().backend +
                                               ") cannot say how another process opens it; set "
                                               "AutotunerOptions::isolation.device");
  }
  const auto ms = [](double v) { return std::chrono::milliseconds(static_cast<std::int64_t>(v)); };
  s.call_limit = ms(iso.call_timeout_ms);
  s.compile_limit = ms(iso.compile_timeout_ms);
  s.startup = std::max(s.compile_limit, std::chrono::milliseconds(120000));
  const SharedKey key{s.path, s.spec, dev.info().fingerprint(), s.call_limit.count(),
                      s.compile_limit.count()};
  SharedWorkers& shared = shared_workers();
  std::lock_guard shared_lock(shared.mu);
  std::erase_if(shared.by_key, [](const auto& e) { return e.second.expired(); });
  std::shared_ptr<WorkerDevice> w = shared.by_key[key].lock();
  if (w == nullptr) {
    w = std::make_shared<WorkerDevice>(dev.info(), dev.language(), std::move(s));
    shared.by_key[key] = w;
  }
  workers_[&dev] = w;
  return w.get();
}

void WorkerPool::release(const Device& dev,
                         const std::function<void(WorkerDevice&)>& before_destroy) {
  std::shared_ptr<WorkerDevice> last;  // destroyed (its worker ended) outside the lock
  {
    std::lock_guard lock(mu_);
    auto it = workers_.find(&dev);
    if (it == workers_.end()) return;
    before_destroy(*it->second);
    last = std::move(it->second);
    workers_.erase(it);
  }
}

}  // namespace tune::detail
