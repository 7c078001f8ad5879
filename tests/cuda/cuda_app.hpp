// A CUDA application for the GPU suites that test libtune inside one (cuda_interop_test,
// isolation_gpu_test): the driver API resolved through cuda::driver_symbol (no cuda.h, no link
// to libcuda), the primary context of device 0 retained and current, and libtune opened on it
// (cuda::OpenOptions). Skips the test case with the reason when there is no driver or device.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "skip.hpp"
#include "tune/cuda.hpp"
#include "tune/tune.hpp"

namespace tune::testing::cuda_app {

// Driver API types as plain C types (cuda.h is not needed).
using CUresult = int;
using CUdeviceptr = unsigned long long;
using CUstream = void*;
using CUcontext = void*;
using CUgraph = void*;
using CUgraphExec = void*;
using CUfunction = void*;
using CUdevice = int;

// The driver entry points the application uses.
struct Cu {
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxGetCurrent)(CUcontext*);
  CUresult (*CtxCreate)(CUcontext*, unsigned, CUdevice);
  CUresult (*CtxDestroy)(CUcontext);
  CUresult (*CtxSynchronize)();
  CUresult (*MemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, std::size_t);
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, std::size_t);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
  CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, std::size_t, CUstream);
  CUresult (*StreamCreate)(CUstream*, unsigned);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*StreamBeginCapture)(CUstream, int);
  CUresult (*StreamEndCapture)(CUstream, CUgraph*);
  CUresult (*GraphInstantiate)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*GraphLaunch)(CUgraphExec, CUstream);
  CUresult (*GraphExecDestroy)(CUgraphExec);
  CUresult (*GraphDestroy)(CUgraph);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**);
};

template <class F>
void resolve(F* f, const char* name) {
  *f = reinterpret_cast<F>(cuda::driver_symbol(name));
  // Called once the driver loaded: an entry point it lacks is a failure, not a skip.
  const bool found = *f != nullptr;
  const std::string why = std::string("driver entry point missing: ") + name;
  REQUIRE_MESSAGE(found, why);
}

// The application: the primary context of device 0, libtune opened on it.
struct CudaApp {
  Cu cu{};
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  std::unique_ptr<Device> dev;

  explicit CudaApp(const cuda::OpenOptions& options = {}) {
    Status st = cuda::driver_status();
    if (!st.ok()) TUNE_SKIP("no CUDA driver: " + st.to_string());
    resolve(&cu.DeviceGet, "cuDeviceGet");
    resolve(&cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(&cu.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    resolve(&cu.CtxSetCurrent, "cuCtxSetCurrent");
    resolve(&cu.CtxGetCurrent, "cuCtxGetCurrent");
    resolve(&cu.CtxCreate, "cuCtxCreate_v2");
    resolve(&cu.CtxDestroy, "cuCtxDestroy_v2");
    resolve(&cu.CtxSynchronize, "cuCtxSynchronize");
    resolve(&cu.MemAlloc, "cuMemAlloc_v2");
    resolve(&cu.MemFree, "cuMemFree_v2");
    resolve(&cu.MemcpyHtoD, "cuMemcpyHtoD_v2");
    resolve(&cu.MemcpyDtoH, "cuMemcpyDtoH_v2");
    resolve(&cu.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    resolve(&cu.MemsetD32Async, "cuMemsetD32Async");
    resolve(&cu.StreamCreate, "cuStreamCreate");
    resolve(&cu.StreamDestroy, "cuStreamDestroy_v2");
    resolve(&cu.StreamSynchronize, "cuStreamSynchronize");
    resolve(&cu.StreamBeginCapture, "cuStreamBeginCapture_v2");
    resolve(&cu.StreamEndCapture, "cuStreamEndCapture");
    resolve(&cu.GraphInstantiate, "cuGraphInstantiateWithFlags");
    resolve(&cu.GraphLaunch, "cuGraphLaunch");
    resolve(&cu.GraphExecDestroy, "cuGraphExecDestroy");
    resolve(&cu.GraphDestroy, "cuGraphDestroy");
    resolve(&cu.LaunchKernel, "cuLaunchKernel");
    if (cu.DeviceGet(&device, 0) != 0) TUNE_SKIP("no CUDA device 0");
    REQUIRE(cu.PrimaryCtxRetain(&ctx, device) == 0);
    REQUIRE(cu.CtxSetCurrent(ctx) == 0);
    auto opened = cuda::open_device(options);
    skip_if_unavailable(opened.status(), "no CUDA device");
    REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
    dev = std::move(*opened);
  }
  ~CudaApp() {
    dev.reset();
    if (ctx != nullptr) (void)cu.PrimaryCtxRelease(device);
  }

  void current() { REQUIRE(cu.CtxSetCurrent(ctx) == 0); }
  CUdeviceptr alloc(std::size_t bytes) {
    CUdeviceptr p = 0;
    REQUIRE(cu.MemAlloc(&p, bytes) == 0);
    return p;
  }
  void upload(CUdeviceptr p, const std::vector<float>& v) {
    REQUIRE(cu.MemcpyHtoD(p, v.data(), v.size() * sizeof(float)) == 0);
  }
  std::vector<float> download(CUdeviceptr p, std::size_t n) {
    std::vector<float> v(n);
    REQUIRE(cu.MemcpyDtoH(v.data(), p, n * sizeof(float)) == 0);
    return v;
  }
};

}  // namespace tune::testing::cuda_app
