// NVRTC, loaded at run time on the first compile: libnvrtc.so.<major> is dlopen'ed and each
// entry point resolved by name, as the driver is (cuda_driver.hpp). A process whose kernels all
// come from the binary cache never loads NVRTC (about 20 ms of dynamic loading per process),
// and a machine with the driver but no toolkit runs cached binaries.
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

#include "shared_library.hpp"
#include "tune/status.hpp"

namespace tune::cuda::detail {

#define TUNE_NVRTC_ENTRY_POINTS(X) \
  X(nvrtcVersion)                  \
  X(nvrtcGetNumSupportedArchs)     \
  X(nvrtcGetSupportedArchs)        \
  X(nvrtcGetErrorString)           \
  X(nvrtcCreateProgram)            \
  X(nvrtcDestroyProgram)           \
  X(nvrtcAddNameExpression)        \
  X(nvrtcCompileProgram)           \
  X(nvrtcGetProgramLogSize)        \
  X(nvrtcGetProgramLog)            \
  X(nvrtcGetLoweredName)           \
  X(nvrtcGetCUBINSize)             \
  X(nvrtcGetCUBIN)

// Function pointers named as nvrtc.h names them, and what the loaded library says of itself.
struct Nvrtc {
#define TUNE_NVRTC_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  TUNE_NVRTC_ENTRY_POINTS(TUNE_NVRTC_DECLARE_ENTRY)
#undef TUNE_NVRTC_DECLARE_ENTRY
  gpu::SharedLibrary library;  // never closed (compiles may run until exit)
  int major = 0, minor = 0;
  std::vector<int> archs;  // sm numbers it can target; empty when it would not say
};

// The process-wide NVRTC, loaded once (thread-safe; the first call blocks for the load). Null
// with `why` set to an unavailable status naming every file tried when none loads or one lacks
// an entry point.
const Nvrtc* nvrtc(Status* why);

// "NVRTC 13.0": the NVRTC libtune was built against (its headers' CUDA version), known without
// loading the library; part of every binary-cache key and DeviceInfo::compiler_version.
std::string built_nvrtc_version();

}  // namespace tune::cuda::detail
