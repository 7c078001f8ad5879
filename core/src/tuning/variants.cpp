#include "variants.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <numeric>
#include <system_error>
#include <thread>

#include "elapsed.hpp"
#include "tune/backend/subgroup_size.hpp"

namespace tune::detail {
namespace {

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
  return check_subgroup_size(c.launch().subgroup_size, info);
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
  // Compiles still running hold the device and source by pointer: join them so that every
  // kernel is destroyed here, before the caller destroys devices.
  join_batches(nullptr, true);
}

void VariantCache::join_batches(const Device* dev, bool wait) {
  std::vector<Batch> to_join;
  {
    std::lock_guard lock(batches_mu_);
    for (auto it = batches_.begin(); it != batches_.end();) {
      const bool mine = dev == nullptr || it->device == dev;
      if (mine && (wait || it->running->load(std::memory_order_acquire) == 0)) {
        to_join.push_back(std::move(*it));
        it = batches_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& b : to_join)
    for (auto& t : b.threads) t.join();
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
  join_batches(nullptr, false);  // threads of earlier calls that have ended
  Device* d = &dev;
  const KernelSource* s = &src;
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  const std::size_t n = todo->size();
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = std::max(1u, std::min<unsigned>(hw, static_cast<unsigned>(n)));
  Batch batch{&dev, {}, std::make_shared<std::atomic<unsigned>>(workers)};
  auto work = [todo, d, s, next, n, running = batch.running] {
    for (std::size_t i = next->fetch_add(1); i < n; i = next->fetch_add(1)) {
      auto& [config, promise] = (*todo)[i];
      std::shared_ptr<Variant> v;
      try {
        v = build(*d, *s, config);
      } catch (...) {  // a backend must not throw; never let it end the process here
        v = std::make_shared<Variant>();
        v->status = Status(StatusCode::internal, "compile threw an exception");
      }
      promise->set_value(std::move(v));
      // The future in variants_ now owns the variant alone: whoever drops it destroys the
      // kernel, never this thread after the cache is gone.
      promise.reset();
    }
    running->fetch_sub(1, std::memory_order_acq_rel);
  };
  try {
    for (unsigned w = 0; w < workers; ++w) batch.threads.emplace_back(work);
  } catch (const std::system_error&) {
    // No thread to be had (a process at its thread limit): those that started take every
    // config of the list; with none, this thread compiles them all now.
    const auto missing = workers - static_cast<unsigned>(batch.threads.size());
    batch.running->fetch_sub(missing, std::memory_order_acq_rel);
    if (batch.threads.empty()) {
      batch.running->store(1, std::memory_order_release);
      work();
      return out;
    }
  }
  std::lock_guard lock(batches_mu_);
  batches_.push_back(std::move(batch));
  return out;
}

void VariantCache::forget(const Device& dev, const Config& config) {
  std::lock_guard lock(mu_);
  variants_.erase({&dev, config.to_string()});
}

void VariantCache::release(const Device& dev) {
  join_batches(&dev, true);
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
