// Interop: the application's streams and memory, and the raw vendor handles.
#include "stream_interop.hpp"

#include <string>
#include <typeinfo>

#include "current_scope.hpp"
#include "gpu_device.hpp"

namespace tune::gpu {

Result<Handle> StreamInterop::stream_of(const LaunchTarget& target, Handle queue,
                                        std::string_view what) const {
  if (target.is_queue()) return queue;
  if (target.kind == LaunchTarget::Kind::stream) return target.handle;
  return Status(StatusCode::unavailable, std::string(what) + ": a " + info_.backend +
                                             " device cannot use a " + target.to_string() +
                                             "; give a stream (LaunchTarget::stream)");
}

Result<bool> StreamInterop::capturing(Handle stream, const LaunchTarget& target) {
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  bool on = false;
  if (int rc = api_.stream_is_capturing(&on, stream); rc != 0)
    return status_.fail(Call::stream_is_capturing, rc, StatusCode::invalid_argument,
                        target.to_string());
  return on;
}

Status StreamInterop::order(Handle waiter, Handle signaller, std::string_view what) {
  if (waiter == signaller) return {};
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  Handle event = nullptr;
  if (int rc = api_.event_create_ordering(&event); rc != 0)
    return status_.fail(Call::event_create, rc, StatusCode::internal, what);
  Status st;
  if (int rc = api_.event_record(event, signaller); rc != 0)
    st = status_.fail(Call::event_record, rc, StatusCode::invalid_argument, what);
  else if (int rc2 = api_.stream_wait_event(waiter, event); rc2 != 0)
    st = status_.fail(Call::stream_wait_event, rc2, StatusCode::invalid_argument, what);
  (void)api_.event_destroy(event);  // released by the driver once the wait is satisfied
  return st;
}

Status StreamInterop::check_wrappable(DevPtr ptr, std::uint64_t bytes) {
  if (ptr == 0 || bytes == 0) {
    return Status(StatusCode::invalid_argument,
                  "wrap_buffer: a null pointer or zero bytes (" + std::to_string(bytes) + ")");
  }
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  DevPtr base = 0;
  std::size_t size = 0;
  if (int rc = api_.mem_get_address_range(&base, &size, ptr); rc != 0) {
    return status_.fail(
        Call::mem_get_address_range, rc, StatusCode::invalid_argument,
        "wrap_buffer: the pointer is not device memory of this " + info_.backend + " context");
  }
  if (ptr + bytes > base + size) {
    return Status(StatusCode::invalid_argument, "wrap_buffer: " + std::to_string(bytes) +
                                                    " bytes from the pointer overrun its "
                                                    "allocation (" +
                                                    std::to_string(base + size - ptr) +
                                                    " bytes left in it)");
  }
  return {};
}

Handle native_function(const CompiledKernel& kernel, std::string_view backend) {
  if (typeid(kernel) != typeid(GpuKernel)) return nullptr;
  const auto& k = static_cast<const GpuKernel&>(kernel);
  return k.owner()->info().backend == backend ? k.function() : nullptr;
}

Handle native_stream(const Device& device, std::string_view backend) {
  const auto* d = dynamic_cast<const GpuDevice*>(&device);
  return d != nullptr && d->info().backend == backend ? d->stream() : nullptr;
}

Result<Buffer> wrap_buffer(Device& device, std::string_view backend, DevPtr ptr,
                           std::uint64_t bytes) {
  auto* d = dynamic_cast<GpuDevice*>(&device);
  if (d == nullptr || d->info().backend != backend) {
    return Status(StatusCode::invalid_argument,
                  std::string(backend) + "::wrap_buffer: " + device.info().name + " is not a " +
                      std::string(backend) + " device");
  }
  return d->wrap(ptr, bytes);
}

}  // namespace tune::gpu
