// GpuStatus: vendor failures named and classified, and the sticky lost state.
#include "gpu_status.hpp"

namespace tune::gpu {

Status GpuStatus::fail(Call call, int code, StatusCode fallback, std::string_view context) {
  std::string msg;
  if (!context.empty()) msg = std::string(context) + ": ";
  msg += api_.call_name(call);
  msg += " failed: ";
  msg += api_.error_text(code);
  switch (api_.classify(code)) {
    case ErrorClass::sticky: {
      // Never reset here: the context is shared with the application (and the primary one
      // with every runtime-API user of the process); only the application may reset it.
      msg +=
          " (a sticky error: the context is unusable, and CUDA keeps the process unusable after "
          "an illegal address until it is relaunched; isolated tuning keeps faulting candidates "
          "out of the application's process)";
      std::lock_guard<std::mutex> lock(lost_mutex_);
      if (!lost_.load()) {
        lost_reason_ = msg;
        lost_.store(true);
      }
      return Status(StatusCode::device_lost, msg);
    }
    case ErrorClass::out_of_memory:
    case ErrorClass::out_of_resources:
      return Status(StatusCode::out_of_resources, msg);
    case ErrorClass::bad_image:
      return Status(StatusCode::compile_error, msg);
    case ErrorClass::not_ready:
    case ErrorClass::other:
      break;
  }
  return Status(fallback, msg);
}

Status GpuStatus::lost_status() const {
  std::lock_guard<std::mutex> lock(lost_mutex_);
  return Status(StatusCode::device_lost,
                "device " + device_name_ + " was lost earlier: " + lost_reason_);
}

}  // namespace tune::gpu
