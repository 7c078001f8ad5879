// The CUDA driver API, loaded at run time: libcuda.so.1 is dlopen'ed on first use and each
// entry point resolved from a table, so a binary built here starts on a machine with no driver
// and reports that cleanly. cuda.h is used for its types and its versioned names only
// (cuMemAlloc expands to cuMemAlloc_v2, which is the symbol we resolve).
#pragma once

#include <cuda.h>

#include "shared_library.hpp"
#include "tune/status.hpp"

namespace tune::cuda::detail {

#define TUNE_CUDA_DRIVER_ENTRY_POINTS(X) \
  X(cuInit)                              \
  X(cuDriverGetVersion)                  \
  X(cuDeviceGetCount)                    \
  X(cuDeviceGet)                         \
  X(cuDeviceGetName)                     \
  X(cuDeviceGetUuid)                     \
  X(cuDeviceGetAttribute)                \
  X(cuDeviceTotalMem)                    \
  X(cuDevicePrimaryCtxRetain)            \
  X(cuDevicePrimaryCtxRelease)           \
  X(cuCtxPushCurrent)                    \
  X(cuCtxPopCurrent)                     \
  X(cuCtxGetCurrent)                     \
  X(cuCtxGetDevice)                      \
  X(cuStreamIsCapturing)                 \
  X(cuThreadExchangeStreamCaptureMode)   \
  X(cuStreamWaitEvent)                   \
  X(cuMemGetAddressRange)                \
  X(cuStreamCreate)                      \
  X(cuStreamDestroy)                     \
  X(cuStreamSynchronize)                 \
  X(cuMemAlloc)                          \
  X(cuMemFree)                           \
  X(cuMemcpyHtoDAsync)                   \
  X(cuMemcpyDtoHAsync)                   \
  X(cuMemcpyDtoDAsync)                   \
  X(cuMemsetD32Async)                    \
  X(cuMemsetD8Async)                     \
  X(cuModuleLoadData)                    \
  X(cuModuleUnload)                      \
  X(cuModuleGetFunction)                 \
  X(cuModuleGetGlobal)                   \
  X(cuFuncGetAttribute)                  \
  X(cuFuncSetAttribute)                  \
  X(cuLaunchKernel)                      \
  X(cuEventCreate)                       \
  X(cuEventDestroy)                      \
  X(cuEventRecord)                       \
  X(cuEventQuery)                        \
  X(cuEventElapsedTime)                  \
  X(cuGetErrorName)                      \
  X(cuGetErrorString)

// Entry points a driver may lack (newer than the oldest driver libtune runs on): resolved when
// present, null otherwise; the feature that needs one reports it missing when used.
//   cuTensorMapEncodeTiled (CUDA 12.0): TMA tensor maps (KernelSource::tensor_maps).
//   cuLaunchKernelEx (CUDA 12.0): launches in thread-block clusters (LaunchDims::cluster).
//   cuFuncGetParamInfo (CUDA 12.4): a cached CUBIN's parameters checked against the kernel.
#define TUNE_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(X) \
  X(cuTensorMapEncodeTiled) X(cuLaunchKernelEx) X(cuFuncGetParamInfo)

// Function pointers, one per entry point, named as cuda.h names them. There is deliberately no
// entry that resets or destroys a context (cuDevicePrimaryCtxReset, cuCtxDestroy, cuCtxCreate):
// libtune works on the application's context or the process's primary context, both shared,
// and never repairs them (a sticky error is reported as device_lost); tests assert the absence.
struct Driver {
#define TUNE_CUDA_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  TUNE_CUDA_DRIVER_ENTRY_POINTS(TUNE_CUDA_DECLARE_ENTRY)
  TUNE_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(TUNE_CUDA_DECLARE_ENTRY)
#undef TUNE_CUDA_DECLARE_ENTRY
  gpu::SharedLibrary library;  // never closed (the driver lives for the process)
};

// The process-wide driver, loaded and cuInit'ed once (thread-safe). Null with `why` set to an
// unavailable status when libcuda.so.1 is missing, a symbol is missing or cuInit fails.
const Driver* driver(Status* why);

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string error_text(const Driver& d, CUresult rc);

}  // namespace tune::cuda::detail
