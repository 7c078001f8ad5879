// GpuStatus: a failed vendor call as a Status naming the call and the error, and the device's
// lost state (a sticky error marks the device lost; later queue operations fail fast).
//
// Ownership: refers to the device's GpuApi, which must outlive it; owns the lost reason.
// Thread safety: every method may be called from any thread (the reason has its own lock; the
// flag is atomic, read without a lock on every launch). Blocking: none.
// The context is never reset or destroyed here: it is the application's, or the process's
// primary context, shared with the runtime API; only the application may reset it.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "current_scope.hpp"
#include "gpu_api.hpp"
#include "tune/status.hpp"

namespace tune::gpu {

class GpuStatus {
 public:
  // `device_name` names the device in a lost device's messages.
  GpuStatus(GpuApi& api, std::string device_name)
      : api_(api), device_name_(std::move(device_name)) {}
  GpuStatus(const GpuStatus&) = delete;
  GpuStatus& operator=(const GpuStatus&) = delete;

  // Status for a failed call: names the call and the error (after `context` when given);
  // sticky errors mark the device lost (device_lost), the others map by ErrorClass, else to
  // `fallback`.
  Status fail(Call call, int code, StatusCode fallback, std::string_view context = {});
  // device_lost with the first sticky error's message once the device is lost; else ok.
  // Inline: one atomic load on every queue operation.
  Status check_lost() const {
    if (!lost_.load()) return {};
    return lost_status();
  }
  // Ok when `scope` bound the context; else the failure, naming the call (unavailable).
  Status entered(const CurrentScope& scope) {
    return scope.rc() == 0 ? Status{}
                           : fail(Call::enter_current, scope.rc(), StatusCode::unavailable);
  }

 private:
  Status lost_status() const;

  GpuApi& api_;
  std::string device_name_;
  std::atomic<bool> lost_{false};
  mutable std::mutex lost_mutex_;  // guards lost_reason_
  std::string lost_reason_;
};

}  // namespace tune::gpu
