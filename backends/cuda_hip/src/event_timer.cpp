// EventTimer: timing events, their elapsed times, and the cache-flush scratch buffer.
#include "event_timer.hpp"

#include <chrono>
#include <thread>

#include "tune/backend/last_level_cache.hpp"

namespace tune::gpu {

EventTimer::~EventTimer() {
  for (Handle e : events_) (void)api_.event_destroy(e);
  if (flush_ptr_ != 0) (void)api_.mem_free(flush_ptr_);
}

Status EventTimer::prepare(std::size_t reps, bool flush) {
  if (flush) TUNE_RETURN_IF_ERROR(ensure_flush_buffer());
  return ensure_events(reps);
}

Status EventTimer::ensure_flush_buffer() {
  if (flush_ptr_ != 0) return {};
  const std::uint64_t bytes = flush_bytes_for(info_);  // twice the last-level cache
  if (int rc = api_.mem_alloc(&flush_ptr_, bytes); rc != 0) {
    flush_ptr_ = 0;
    return status_.fail(
        Call::mem_alloc, rc, StatusCode::out_of_resources,
        "allocating the " + std::to_string(bytes >> 20) + " MiB cache flush buffer");
  }
  flush_bytes_ = bytes;
  return {};
}

Status EventTimer::ensure_events(std::size_t pairs) {
  while (events_.size() < 2 * pairs) {
    Handle e = nullptr;
    if (int rc = api_.event_create(&e); rc != 0)
      return status_.fail(Call::event_create, rc, StatusCode::internal);
    events_.push_back(e);
  }
  return {};
}

Status EventTimer::flush(std::size_t rep, Handle stream) {
  if (int rc = api_.memset_d8(flush_ptr_, static_cast<std::uint8_t>(rep), flush_bytes_, stream);
      rc != 0)
    return status_.fail(Call::memset_d8, rc, StatusCode::internal, "cache flush");
  return {};
}

Status EventTimer::start(std::size_t rep, Handle stream, std::string_view what) {
  if (int rc = api_.event_record(events_[2 * rep], stream); rc != 0)
    return status_.fail(Call::event_record, rc, StatusCode::internal, what);
  return {};
}

Status EventTimer::end(std::size_t rep, Handle stream, std::string_view what) {
  if (int rc = api_.event_record(events_[2 * rep + 1], stream); rc != 0)
    return status_.fail(Call::event_record, rc, StatusCode::internal, what);
  return {};
}

Status EventTimer::wait_event(Handle event, double timeout_ms, std::string_view what) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit = std::chrono::duration<double, std::milli>(timeout_ms);
  for (int spins = 0;; ++spins) {
    int rc = api_.event_query(event);
    if (rc == 0) return {};
    if (api_.classify(rc) != ErrorClass::not_ready)
      return status_.fail(Call::event_query, rc, StatusCode::launch_failed, what);
    if (clock::now() - start > limit) {
      return Status(StatusCode::timeout,
                    std::string(what) + ": not finished after " + std::to_string(timeout_ms) +
                        " ms (the launch keeps the device busy until it ends)");
    }
    // Spin briefly for short kernels, then back off so a long one does not burn a core.
    if (spins < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

Result<std::vector<double>> EventTimer::elapsed_ns(std::size_t reps, double timeout_ms,
                                                   std::string_view what) {
  std::vector<double> ns(reps);
  for (std::size_t r = 0; r < reps; ++r) {
    TUNE_RETURN_IF_ERROR(wait_event(events_[2 * r + 1], timeout_ms, what));
    float ms = 0;
    if (int rc = api_.event_elapsed_ms(&ms, events_[2 * r], events_[2 * r + 1]); rc != 0)
      return status_.fail(Call::event_elapsed, rc, StatusCode::internal, what);
    ns[r] = static_cast<double>(ms) * 1e6;
  }
  return ns;
}

}  // namespace tune::gpu
