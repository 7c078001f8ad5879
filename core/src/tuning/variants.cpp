#include "variants.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <numeric>
#include <thread>

#include "elapsed.hpp"

namespace tune::detail {
namespace {

// Runs `fn(i)` for i in [0, n) on up to `threads` detached worker threads; returns at once.
void run_pool(std::size_t n, unsigned threads, std::function<void(std::size_t)> fn) {
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  auto shared_fn = std::make_shared<std::function<void(std::size_t)>>(std::move(fn));
  unsigned workers = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(n)));
  for (unsigned w = 0; w < workers; ++w) {
    std::thread([next, shared_fn, n] {
      for (std::size_t i = next->fetch_add(1); i < n; i = next->fetch_add(1)) (*shared_fn)(i);
    }).detach();
  }
}

// Launch options against device limits, before anything is compiled or launched.
Status check_limits(const Config& c, const DeviceInfo& info) {
  const Dim3& b = c.launch().block;
  if (info.max_threads_per_block != 0 && b.product() > info.max_threads_per_block) {
    return Status(StatusCode::out_of_resources, "block " + to_string(b) + " exceeds the device's " +
                                                    std::to_string(info.max_threads_per_block) +
                                                    " threads per block");
  }
  if (info.max_block.x != 0 &&
      (b.x > info.max_block.x || b.y > info.max_block.y || b.z > info.max_block.z)) {
    return Status(StatusCode::out_of_resources, "block dimensions exceed the device's limits");
  }
  std::uint32_t smem_limit =
      std::max(info.shared_bytes_per_block, info.shared_bytes_per_block_optin);
  if (smem_limit != 0 && c.launch().shared_bytes > smem_limit) {
    return Status(StatusCode::out_of_resources,
                  "dynamic shared memory " + std::to_string(c.launch().shared_bytes) +
                      " B exceeds the device's " + std::to_string(smem_limit) + " B");
  }
  return {};
}

std::shared_ptr<Variant> build(Device& dev, const KernelSource& src, const Config& c) {
  auto v = std::make_shared<Variant>();
  auto t0 = Clock::now();
  v->status = check_limits(c, dev.info());
  if (v->status.ok()) {
    auto k = dev.compile(src, c);
    if (k.ok())
      v->kernel = std::move(*k);
    else
      v->status = k.status();
  }
  v->compile_ms = ms_since(t0);
  return v;
}

}  // namespace

VariantCache::~VariantCache() {
  // Compiles still running on the pool hold the device and source by pointer: wait for them
  // so that kernels are destroyed before the caller destroys devices.
  for (auto& [k, f] : variants_) f.wait();
}

std::vector<VariantFuture> VariantCache::compile(Device& dev, const KernelSource& src,
                                                 const std::vector<Config>& configs) {
  using Promise = std::promise<std::shared_ptr<Variant>>;
  std::vector<VariantFuture> out(configs.size());
  auto todo = std::make_shared<std::vector<std::pair<Config, std::shared_ptr<Promise>>>>();
  {
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      auto k = std::make_pair(static_cast<const Device*>(&dev), configs[i].to_string());
      if (auto it = variants_.find(k); it != variants_.end()) {
        // A compile that met a lost device (an isolated worker that could not restart) says
        // nothing about the config: compile it again rather than keep that answer.
        const bool lost =
            it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready &&
            it->second.get()->status.code() == StatusCode::device_lost;
        if (!lost) {
          out[i] = it->second;
          continue;
        }
        variants_.erase(it);
      }
      auto p = std::make_shared<Promise>();
      out[i] = p->get_future().share();
      variants_.emplace(k, out[i]);
      todo->emplace_back(configs[i], std::move(p));
    }
  }
  if (todo->empty()) return out;
  Device* d = &dev;
  const KernelSource* s = &src;
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  run_pool(todo->size(), hw, [todo, d, s](std::size_t i) {
    auto& [config, promise] = (*todo)[i];
    std::shared_ptr<Variant> v;
    try {
      v = build(*d, *s, config);
    } catch (...) {  // a backend must not throw; never let it end the process here
      v = std::make_shared<Variant>();
      v->status = Status(StatusCode::internal, "compile threw an exception");
    }
    promise->set_value(std::move(v));
  });
  return out;
}

void VariantCache::release(const Device& dev) {
  std::lock_guard lock(mu_);
  for (auto it = variants_.begin(); it != variants_.end();) {
    if (it->first.first == &dev) {
      it->second.wait();
      it = variants_.erase(it);
    } else {
      ++it;
    }
  }
}

CompileWaiter::CompileWaiter(std::vector<VariantFuture> futures)
    : futures_(std::move(futures)), pending_(futures_.size()) {
  std::iota(pending_.begin(), pending_.end(), std::size_t{0});
}

std::optional<std::size_t> CompileWaiter::next(Clock::time_point give_up) {
  for (;;) {
    for (std::size_t p = 0; p < pending_.size(); ++p) {
      const std::size_t j = pending_[p];
      if (futures_[j].wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(p));
        return j;
      }
    }
    if (pending_.empty() || Clock::now() >= give_up) return std::nullopt;
    futures_[pending_.front()].wait_for(std::chrono::microseconds(100));
  }
}

}  // namespace tune::detail
