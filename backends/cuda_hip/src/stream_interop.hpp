// Interop with the application's streams and memory (LaunchTarget::stream, wrap_buffer): the
// stream a launch target names, whether it is capturing a graph, ordering between two streams
// by an event, and an application's device pointer checked before it is wrapped. Also the raw
// vendor handles of a GpuDevice's objects (tune::cuda::native_function, ...).
//
// Ownership: application streams and memory are borrowed, never destroyed or freed; the
// ordering events it makes are released at once (the driver keeps them until the wait is
// satisfied). Refers to the device's GpuApi, GpuStatus and DeviceInfo.
// Thread safety: reentrant; the caller holds the device's queue lock around order() when
// either stream is the device's queue. Blocking: none: nothing here synchronises; order() makes
// one stream's later work wait for the other's queued work on the device.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpu_api.hpp"
#include "gpu_status.hpp"
#include "tune/device.hpp"

namespace tune::gpu {

class StreamInterop {
 public:
  StreamInterop(GpuApi& api, GpuStatus& status, const DeviceInfo& info) noexcept
      : api_(api), status_(status), info_(info) {}

  // The vendor stream `target` names: `queue` (the device's own) for the queue, the
  // application's for a stream; unavailable naming `what` for any other target (a command
  // buffer).
  Result<Handle> stream_of(const LaunchTarget& target, Handle queue, std::string_view what) const;
  // Whether work queued on `stream` (`target`'s) now would be captured into a graph.
  Result<bool> capturing(Handle stream, const LaunchTarget& target);
  // Work on `waiter` waits for what is queued on `signaller` (an ordering event); nothing when
  // they are one stream. Failures name `what`.
  Status order(Handle waiter, Handle signaller, std::string_view what);
  // Ok when `bytes` at `ptr` lie inside one allocation the driver knows; invalid_argument
  // otherwise (a null pointer, zero bytes, memory of another context, an overrun).
  Status check_wrappable(DevPtr ptr, std::uint64_t bytes);

 private:
  GpuApi& api_;
  GpuStatus& status_;
  const DeviceInfo& info_;
};

// Raw vendor handles of objects made by a GpuDevice of `backend`; nullptr otherwise.
Handle native_function(const CompiledKernel& kernel, std::string_view backend);
Handle native_stream(const Device& device, std::string_view backend);
// GpuDevice::wrap on a device of `backend`; invalid_argument for any other device.
Result<Buffer> wrap_buffer(Device& device, std::string_view backend, DevPtr ptr,
                           std::uint64_t bytes);

}  // namespace tune::gpu
