// The HIP runtime and hiprtc, loaded at run time: libamdhip64 is dlopen'ed on the first HIP
// call (listing or opening a device, compiling) and each entry point resolved from a table, as
// the CUDA driver is (backends/cuda/src/cuda_driver.hpp). A program built with the hip backend
// starts, and runs its other backends, where ROCm is not installed, and a process that never
// touches HIP never loads libamdhip64 and its dependencies (the HSA runtime, comgr, LLVM).
// The HIP headers are used for their types and enums only. On ROCm 5.2 hiprtc lives inside
// libamdhip64, so one library serves both tables.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include "hip_internal.hpp"
#include "shared_library.hpp"

namespace tune::hip::detail {

#define TUNE_HIP_RUNTIME_ENTRY_POINTS(X) \
  X(hipGetErrorName)                     \
  X(hipGetErrorString)                   \
  X(hipGetDeviceCount)                   \
  X(hipGetDeviceProperties)              \
  X(hipDeviceGet)                        \
  X(hipDeviceGetUuid)                    \
  X(hipDriverGetVersion)                 \
  X(hipGetDevice)                        \
  X(hipSetDevice)                        \
  X(hipThreadExchangeStreamCaptureMode)  \
  X(hipFree)                             \
  X(hipMemcpyHtoDAsync)                  \
  X(hipMemcpyDtoHAsync)                  \
  X(hipMemcpyDtoDAsync)                  \
  X(hipMemsetD32Async)                   \
  X(hipMemsetD8Async)                    \
  X(hipStreamCreateWithFlags)            \
  X(hipStreamDestroy)                    \
  X(hipStreamSynchronize)                \
  X(hipStreamIsCapturing)                \
  X(hipStreamWaitEvent)                  \
  X(hipModuleLoadData)                   \
  X(hipModuleUnload)                     \
  X(hipModuleGetFunction)                \
  X(hipModuleGetGlobal)                  \
  X(hipFuncGetAttribute)                 \
  X(hipModuleLaunchKernel)               \
  X(hipEventCreate)                      \
  X(hipEventCreateWithFlags)             \
  X(hipEventDestroy)                     \
  X(hipEventRecord)                      \
  X(hipEventQuery)                       \
  X(hipEventElapsedTime)                 \
  X(hipMemGetAddressRange)

#define TUNE_HIPRTC_ENTRY_POINTS(X) \
  X(hiprtcVersion)                  \
  X(hiprtcGetErrorString)           \
  X(hiprtcCreateProgram)            \
  X(hiprtcDestroyProgram)           \
  X(hiprtcAddNameExpression)        \
  X(hiprtcCompileProgram)           \
  X(hiprtcGetProgramLogSize)        \
  X(hiprtcGetProgramLog)            \
  X(hiprtcGetLoweredName)           \
  X(hiprtcGetCodeSize)              \
  X(hiprtcGetCode)

// Entry points the headers overload for C++ (a template beside the C function, so &::name is
// ambiguous), each with the C function's type.
using HipMallocFn = hipError_t(void**, size_t);
#define TUNE_HIP_OVERLOADED_ENTRY_POINTS(X) X(hipMalloc, HipMallocFn)

// Function pointers, one per entry point, named as the HIP headers name them.
struct HipLibrary {
#define TUNE_HIP_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
#define TUNE_HIP_DECLARE_TYPED_ENTRY(name, type) type* name = nullptr;
  TUNE_HIP_RUNTIME_ENTRY_POINTS(TUNE_HIP_DECLARE_ENTRY)
  TUNE_HIP_OVERLOADED_ENTRY_POINTS(TUNE_HIP_DECLARE_TYPED_ENTRY)
  TUNE_HIPRTC_ENTRY_POINTS(TUNE_HIP_DECLARE_ENTRY)
#undef TUNE_HIP_DECLARE_TYPED_ENTRY
#undef TUNE_HIP_DECLARE_ENTRY
  gpu::SharedLibrary library;  // never closed (devices and compiles may run until exit)
};

// The process-wide HIP library, loaded from hip_library_candidates() once (thread-safe; the
// first call blocks for the load, a few tens of milliseconds). Null with `why` set to an
// unavailable status naming every file tried when none loads, or the entry point one lacks.
const HipLibrary* hip_library(Status* why);

// "hipErrorNoDevice (no ROCm-capable device is detected)".
std::string error_text(const HipLibrary& h, hipError_t rc);

}  // namespace tune::hip::detail
