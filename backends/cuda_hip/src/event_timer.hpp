// EventTimer: what GpuDevice::time() times with on its queue: a start and an end event per
// timed rep, read back as elapsed nanoseconds, and the scratch buffer whose fill flushes the
// last-level cache before a rep.
//
// Ownership: owns its events and the scratch buffer (allocated on first use, kept); the
// destructor frees them and must run with the device's context current, after the stream has
// drained (GpuDevice's destructor). Refers to the device's GpuApi and GpuStatus.
// Thread safety: none of its own: GpuDevice's queue lock is held around every call.
// Blocking: elapsed_ns() waits for each rep's end event, spinning briefly then sleeping, up to
// its timeout; the rest enqueues and returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_api.hpp"
#include "gpu_status.hpp"
#include "tune/device.hpp"

namespace tune::gpu {

class EventTimer {
 public:
  // `info` sizes the scratch buffer (twice the last-level cache,
  // tune/backend/last_level_cache.hpp).
  EventTimer(GpuApi& api, GpuStatus& status, const DeviceInfo& info) noexcept
      : api_(api), status_(status), info_(info) {}
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Events for `reps` reps, and the scratch buffer when `flush`; made once, then reused.
  Status prepare(std::size_t reps, bool flush);
  // Enqueues rep `rep`'s cache flush on `stream` (a fill of the scratch buffer).
  Status flush(std::size_t rep, Handle stream);
  // Records rep `rep`'s start (or end) event on `stream`; failures name `what`.
  Status start(std::size_t rep, Handle stream, std::string_view what);
  Status end(std::size_t rep, Handle stream, std::string_view what);
  // Each of the first `reps` reps' time between its events, in ns, once its end event is
  // reached; timeout when one is not reached within `timeout_ms`.
  Result<std::vector<double>> elapsed_ns(std::size_t reps, double timeout_ms,
                                         std::string_view what);

 private:
  Status ensure_flush_buffer();
  Status ensure_events(std::size_t pairs);
  Status wait_event(Handle event, double timeout_ms, std::string_view what);

  GpuApi& api_;
  GpuStatus& status_;
  const DeviceInfo& info_;
  DevPtr flush_ptr_ = 0;
  std::uint64_t flush_bytes_ = 0;
  std::vector<Handle> events_;  // 2 per timed rep: start, end
};

}  // namespace tune::gpu
