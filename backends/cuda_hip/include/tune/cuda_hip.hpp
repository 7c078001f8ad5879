// What the CUDA and HIP backends' public headers (tune/cuda.hpp, tune/hip.hpp) share: the
// result of compiling a kernel without a device (tune::cuda::compile, tune::hip::compile), and
// the rules of using libtune inside a CUDA or HIP application.
//
// --- Using libtune inside a CUDA or HIP application ---------------------------------------------
//
// open_device(OpenOptions) opens a Device on the application's context (CUDA: a device's
// primary context, or a CUcontext of the application; HIP: a device's primary context), and
// wrap_buffer / wrap_pointer hand libtune the application's memory (never freed by libtune;
// destroy the Buffer before freeing the memory). Then
//   tuner->run(dev, args, tune::LaunchTarget::stream(my_stream))
// launches on the application's stream: a known key asynchronously, with no lock, no
// allocation and no synchronisation; a new key is tuned on the device's own queue, ordered
// after the work already on my_stream, and work queued on my_stream later waits for it. While
// my_stream captures a graph, a known key is captured like any launch and a new key follows
// AutotunerOptions::capture_miss (a fallback compiles in relaxed capture mode, legal during a
// global-mode capture).
//
// What libtune never does to its host:
//   - change the calling thread's current context (CUDA) or device (HIP): every call binds the
//     device's context for its own duration (cuCtxPushCurrent / cuCtxPopCurrent; hipSetDevice
//     and back) and does nothing when it is already current;
//   - reset, destroy or create a context: the primary context is shared by every runtime-API
//     user of the process. A sticky error (an illegal address, a trap) makes the device
//     device_lost, every later call fails fast with device_lost, and opening again on that
//     context is device_lost too, the old open_device(selector) path included. Not even the
//     application can repair it: after an illegal address CUDA keeps the process unusable
//     until it is relaunched (a cudaDeviceReset does not help: measured on the H200). Tune
//     kernels that may fault with AutotunerOptions::isolation;
//   - synchronise the device on a hit (tuning synchronises only libtune's own stream, or the
//     application's stream made the device's queue with OpenOptions::use_stream).
#pragma once

#include <string>

namespace tune {

// A compiled code object (CUBIN / HSACO) and the compiler's log.
struct RtcOutput {
  std::string binary;
  std::string log;
  bool from_cache = false;  // read from the BinaryCache, not compiled in this call
  // The lowered / mangled name of the entry point in `binary` (e.g. what NVRTC reports for a
  // name expression); empty when the binary's symbol is the source's entry name itself.
  // Stored in and restored from the binary cache with the binary.
  std::string entry_name;
  // The BinaryCache key it was found or stored under; empty without a cache (what
  // Device::evict_binary drops).
  std::string cache_key;
};

}  // namespace tune
