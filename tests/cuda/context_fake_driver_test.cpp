// Issue 13's "never harm the host", on a fake CUDA driver (no GPU): a driver table whose entry
// points are this file's functions, handed to the backend's opening code (cuda_open.hpp), so
// the real CudaApi and GpuDevice run against it and every context operation is watched.
//
//   - the calling thread's current context (the top of its context stack), the stack's depth
//     and its capture-interaction mode are the same after every Device call as before it: with
//     another context current, with none, and with the device's own (then nothing is pushed);
//     modules load in relaxed mode (legal during an application's global-mode capture);
//   - a sticky error (an illegal address) is device_lost, stays so, and nothing resets or
//     destroys a context: the driver table has no such entry point (checked at compile time)
//     and the primary context's retains and releases balance; a primary context already holding
//     a sticky error is device_lost at open, on both opening paths;
//   - a launch on an application's stream with buffers it has used before allocates nothing.
// The same on a GPU with two real contexts: cuda_interop_test.cpp.
#include <cuda.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "allocation_counter.hpp"
#include "cuda_open.hpp"

using namespace tune;
using tune::cuda::detail::Driver;

namespace {

// ---- the fake driver's state (one test thread) ----------------------------------------------

CUcontext handle(std::uintptr_t v) { return reinterpret_cast<CUcontext>(v); }
const CUcontext kPrimary = handle(0x1000);  // device 0's primary context
const CUcontext kOther = handle(0x2000);    // another context of the application
const CUcontext kApp = handle(0x3000);      // an application's own context, borrowed

struct Fake {
  // The thread's context stack (a fixed array: the fake itself must not allocate).
  CUcontext stack[16] = {};
  int depth = 0;
  int pushes = 0, pops = 0;
  int retains = 0, releases = 0;
  CUresult retain_result = CUDA_SUCCESS;
  CUresult launch_result = CUDA_SUCCESS;
  // The thread's capture-interaction mode (cuThreadExchangeStreamCaptureMode), and what it was
  // when the last module was loaded.
  CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  CUstreamCaptureMode mode_at_load = CU_STREAM_CAPTURE_MODE_GLOBAL;
  // Launches by entry point, and what the last cuLaunchKernelEx was given (copied: the config
  // lives on the caller's stack).
  int plain_launches = 0, ex_launches = 0;
  unsigned ex_grid[3] = {}, ex_block[3] = {}, ex_shared = 0, ex_attrs = 0;
  CUlaunchAttributeID ex_attr_id = CU_LAUNCH_ATTRIBUTE_IGNORE;
  unsigned ex_cluster[3] = {};
  int non_portable_opt_ins = 0;  // cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
  std::uintptr_t next_handle = 0x10000;
  CUdeviceptr next_ptr = 0x7000'0000;
};
Fake g;

template <class T>
T fresh() {
  return reinterpret_cast<T>(g.next_handle += 0x10);
}

CUresult ok() { return CUDA_SUCCESS; }

// Every entry point not given below: succeeds and does nothing.
template <class F>
struct Succeed;
template <class... A>
struct Succeed<CUresult (*)(A...)> {
  static CUresult call(A...) { return CUDA_SUCCESS; }
};

int attribute(CUdevice_attribute a) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return 9;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return 132;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      return 0x7fffffff;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      return 48 * 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return 227 * 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
      return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return 32;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      return 4 << 20;
    default:
      return 0;
  }
}

Driver fake_driver() {
  Driver d;
#define TUNE_FAKE_SUCCEED(name) d.name = &Succeed<decltype(d.name)>::call;
  TUNE_CUDA_DRIVER_ENTRY_POINTS(TUNE_FAKE_SUCCEED)
#undef TUNE_FAKE_SUCCEED
  d.cuDriverGetVersion = [](int* v) {
    *v = 13000;
    return ok();
  };
  d.cuDeviceGetCount = [](int* n) {
    *n = 1;
    return ok();
  };
  d.cuDeviceGetName = [](char* name, int len, CUdevice) {
    std::strncpy(name, "Fake H200", static_cast<std::size_t>(len));
    return ok();
  };
  d.cuDeviceGetUuid = [](CUuuid* u, CUdevice) {
    for (int i = 0; i < 16; ++i) u->bytes[i] = static_cast<char>(0x10 + i);
    return ok();
  };
  d.cuDeviceGetAttribute = [](int* v, CUdevice_attribute a, CUdevice) {
    *v = attribute(a);
    return ok();
  };
  d.cuDeviceTotalMem = [](std::size_t* bytes, CUdevice) {
    *bytes = std::size_t{80} << 30;
    return ok();
  };
  d.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
    if (g.retain_result != CUDA_SUCCESS) return g.retain_result;
    ++g.retains;
    *c = kPrimary;
    return ok();
  };
  d.cuDevicePrimaryCtxRelease = [](CUdevice) {
    ++g.releases;
    return ok();
  };
  d.cuCtxGetCurrent = [](CUcontext* c) {
    *c = g.depth == 0 ? nullptr : g.stack[g.depth - 1];
    return ok();
  };
  d.cuCtxPushCurrent = [](CUcontext c) {
    ++g.pushes;
    g.stack[g.depth++] = c;
    return ok();
  };
  d.cuCtxPopCurrent = [](CUcontext* c) {
    ++g.pops;
    if (g.depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
    *c = g.stack[--g.depth];
    return ok();
  };
  d.cuStreamCreate = [](CUstream* s, unsigned) {
    *s = fresh<CUstream>();
    return ok();
  };
  d.cuMemAlloc = [](CUdeviceptr* p, std::size_t bytes) {
    *p = g.next_ptr;
    g.next_ptr += (bytes + 0xffff) & ~std::size_t{0xffff};
    return ok();
  };
  d.cuMemGetAddressRange = [](CUdeviceptr* base, std::size_t* bytes, CUdeviceptr p) {
    *base = p;
    *bytes = std::size_t{1} << 30;
    return ok();
  };
  d.cuThreadExchangeStreamCaptureMode = [](CUstreamCaptureMode* mode) {
    std::swap(*mode, g.capture_mode);
    return ok();
  };
  d.cuModuleLoadData = [](CUmodule* m, const void*) {
    g.mode_at_load = g.capture_mode;
    *m = fresh<CUmodule>();
    return ok();
  };
  d.cuModuleGetFunction = [](CUfunction* f, CUmodule, const char*) {
    *f = fresh<CUfunction>();
    return ok();
  };
  d.cuEventCreate = [](CUevent* e, unsigned) {
    *e = fresh<CUevent>();
    return ok();
  };
  d.cuEventElapsedTime = [](float* ms, CUevent, CUevent) {
    *ms = 0.01f;
    return ok();
  };
  d.cuLaunchKernel = [](CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void**, void**) {
    ++g.plain_launches;
    return g.launch_result;
  };
  d.cuLaunchKernelEx = [](const CUlaunchConfig* c, CUfunction, void**, void**) {
    ++g.ex_launches;
    const unsigned grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
    const unsigned block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    std::memcpy(g.ex_grid, grid, sizeof grid);
    std::memcpy(g.ex_block, block, sizeof block);
    g.ex_shared = c->sharedMemBytes;
    g.ex_attrs = c->numAttrs;
    if (c->numAttrs > 0) {
      g.ex_attr_id = c->attrs[0].id;
      const unsigned cluster[3] = {c->attrs[0].value.clusterDim.x, c->attrs[0].value.clusterDim.y,
                                   c->attrs[0].value.clusterDim.z};
      std::memcpy(g.ex_cluster, cluster, sizeof cluster);
    }
    return g.launch_result;
  };
  d.cuFuncSetAttribute = [](CUfunction, CUfunction_attribute a, int v) {
    if (a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED && v == 1)
      ++g.non_portable_opt_ins;
    return ok();
  };
  d.cuGetErrorName = [](CUresult rc, const char** name) {
    *name = rc == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE";
    return ok();
  };
  return d;
}

// libtune has no way to reset, destroy or create a context: the table lacks the entry points.
template <class D>
concept can_touch_contexts = requires(D d) {
  d.cuDevicePrimaryCtxReset;
}
|| requires(D d) { d.cuCtxDestroy; }
|| requires(D d) { d.cuCtxCreate; };
static_assert(!can_touch_contexts<Driver>, "libtune must never reset, destroy or create a context");

// The thread's binding (and capture-interaction mode) before a call, compared after it.
struct Binding {
  CUcontext top = nullptr;
  int depth = 0;
  CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  static Binding now() {
    return {g.depth == 0 ? nullptr : g.stack[g.depth - 1], g.depth, g.capture_mode};
  }
  bool operator==(const Binding&) const = default;
};

// Starts the thread with `current` as its only context (nullptr: none) and a fresh fake.
void start_with(CUcontext current) {
  g = Fake{};
  if (current != nullptr) g.stack[g.depth++] = current;
}

KernelSource source() {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = "k";
  s.text = "extern \"C\" __global__ void k(float* x, int n) { if (threadIdx.x < n) x[0] = 1; }";
  return s;
}

const LaunchDims kDims{{4, 1, 1}, {128, 1, 1}, 0};

std::string name_of(CUcontext c) {
  return c == nullptr ? "none" : c == kOther ? "another context" : "the device's own";
}

}  // namespace

TEST_CASE("every Device call leaves the thread's current context as it found it") {
  const Driver d = fake_driver();
  for (CUcontext current : {kOther, static_cast<CUcontext>(nullptr), kPrimary}) {
    CAPTURE(name_of(current));
    start_with(current);
    const Binding before = Binding::now();
    // Checked after each step: the step's name says which call changed the binding.
    auto same = [&](const char* step) { CHECK_MESSAGE(Binding::now() == before, step); };
    {
      auto opened = cuda::detail::open_on_context(d, cuda::OpenOptions{});
      REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
      same("open_device");
      Device& dev = **opened;
      auto x = dev.alloc(4096).value();
      same("alloc");
      std::vector<float> host(1024, 1.0f);
      REQUIRE(dev.upload(*x, host.data(), 4096).ok());
      same("upload");
      REQUIRE(dev.download(*x, host.data(), 4096).ok());
      same("download");
      REQUIRE(dev.fill(*x, 0, 4096).ok());
      same("fill");
      auto y = cuda::wrap_buffer(dev, 0x5000'0000, 4096).value();
      same("wrap_buffer");
      REQUIRE(dev.copy(*y, *x, 4096).ok());
      same("copy");
      auto k = dev.compile(source(), Config{});
      REQUIRE_MESSAGE(k.ok(), k.status().to_string());
      same("compile");
      // Loaded in relaxed mode: legal while an application's stream captures in global mode.
      CHECK(g.mode_at_load == CU_STREAM_CAPTURE_MODE_RELAXED);
      const ArgValue args[] = {ArgValue::buf(*y, ElemType::f32, 1024), ArgValue(1024)};
      REQUIRE(dev.launch(**k, kDims, args).ok());
      same("launch");
      TimingPlan plan;
      plan.reps = 2;
      REQUIRE(dev.time(**k, kDims, args, plan).ok());
      same("time");
      REQUIRE(dev.synchronize().ok());
      same("synchronize");
      const LaunchTarget stream = LaunchTarget::stream(reinterpret_cast<void*>(0x4242));
      REQUIRE(dev.launch_on(**k, kDims, args, stream).ok());
      same("launch_on a stream");
      REQUIRE(dev.capturing(stream).ok());
      same("capturing");
      REQUIRE(dev.queue_waits_for(stream).ok());
      same("queue_waits_for");
      REQUIRE(dev.target_waits_for_queue(stream).ok());
      same("target_waits_for_queue");
      k->reset();
      same("a kernel's destructor");
      x.reset();
      y.reset();
      same("a buffer's destructor");
    }
    same("the device's destructor");
    CHECK(g.pushes == g.pops);
    if (current == kPrimary) CHECK(g.pushes == 0);  // already current: nothing to do
    CHECK(g.retains == g.releases);
  }
}

TEST_CASE("opening on an application's context or by selector leaves the binding as it was") {
  const Driver d = fake_driver();
  start_with(kOther);
  const Binding before = Binding::now();
  {
    cuda::OpenOptions options;
    options.context = kApp;
    auto on_app = cuda::detail::open_on_context(d, options);
    REQUIRE_MESSAGE(on_app.ok(), on_app.status().to_string());
    CHECK(Binding::now() == before);
    CHECK(g.retains == 0);  // borrowed, not retained
    auto by_selector = cuda::detail::open_selected(d, "Fake");
    REQUIRE_MESSAGE(by_selector.ok(), by_selector.status().to_string());
    CHECK(Binding::now() == before);
    CHECK((*by_selector)->info().name == "Fake H200");
    // DeviceInfo::uuid comes from cuDeviceGetUuid (the per-GPU timing lock's name).
    CHECK((*by_selector)->info().uuid == "10111213-1415-1617-1819-1a1b1c1d1e1f");
  }
  CHECK(Binding::now() == before);
  CHECK(g.retains == 1);
  CHECK(g.releases == 1);
}

TEST_CASE("a sticky error is device_lost and stays so; no context is reset or destroyed") {
  const Driver d = fake_driver();
  start_with(kOther);
  {
    auto dev = cuda::detail::open_selected(d, "").value();
    auto x = dev->alloc(4096).value();
    auto k = dev->compile(source(), Config{}).value();
    const ArgValue args[] = {ArgValue::buf(*x, ElemType::f32, 1024), ArgValue(1024)};
    g.launch_result = CUDA_ERROR_ILLEGAL_ADDRESS;
    Status st = dev->launch_on(*k, kDims, args, LaunchTarget::stream(nullptr));
    CHECK(st.code() == StatusCode::device_lost);
    CHECK(st.message().find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
    CHECK(st.message().find("until it is relaunched") != std::string::npos);
    g.launch_result = CUDA_SUCCESS;  // whatever the driver says now, the device stays lost
    CHECK(dev->launch(*k, kDims, args).code() == StatusCode::device_lost);
    CHECK(dev->synchronize().code() == StatusCode::device_lost);
    CHECK(dev->alloc(64).status().code() == StatusCode::device_lost);
  }
  CHECK(g.retains == 1);
  CHECK(g.releases == 1);  // released, never reset (the table has no reset: static_assert above)
  CHECK(Binding::now().top == kOther);
}

TEST_CASE("a primary context that already holds a sticky error is device_lost at open") {
  const Driver d = fake_driver();
  start_with(nullptr);
  g.retain_result = CUDA_ERROR_ILLEGAL_ADDRESS;
  auto by_selector = cuda::detail::open_selected(d, "0");
  REQUIRE_FALSE(by_selector.ok());
  CHECK(by_selector.status().code() == StatusCode::device_lost);
  CHECK(by_selector.status().message().find("never resets") != std::string::npos);
  auto by_options = cuda::detail::open_on_context(d, cuda::OpenOptions{});
  REQUIRE_FALSE(by_options.ok());
  CHECK(by_options.status().code() == StatusCode::device_lost);
  CHECK(g.releases == 0);
}

TEST_CASE("a cluster launch reaches the driver as cuLaunchKernelEx with the cluster attribute") {
  const Driver d = fake_driver();
  start_with(nullptr);
  auto dev = cuda::detail::open_selected(d, "").value();
  auto x = dev->alloc(4096).value();
  auto k = dev->compile(source(), Config{}).value();
  const ArgValue args[] = {ArgValue::buf(*x, ElemType::f32, 1024), ArgValue(1024)};
  // No cluster (the default, or one block): the plain cuLaunchKernel, as before clusters.
  REQUIRE(dev->launch(*k, kDims, args).ok());
  REQUIRE(dev->launch(*k, LaunchDims{{4, 1, 1}, {128, 1, 1}, 0, {1, 1, 1}}, args).ok());
  CHECK(g.plain_launches == 2);
  CHECK(g.ex_launches == 0);
  // Pairs of blocks along x: one attribute, the cluster dimension, and no non-portable opt-in
  // (2 is portable); on the device's queue, timed, and on an application's stream alike.
  const LaunchDims pairs{{6, 1, 1}, {384, 1, 1}, 1024, {2, 1, 1}};
  REQUIRE(dev->launch(*k, pairs, args).ok());
  CHECK(g.ex_launches == 1);
  CHECK(g.plain_launches == 2);
  CHECK(g.ex_grid[0] == 6);
  CHECK(g.ex_block[0] == 384);
  CHECK(g.ex_shared == 1024);
  CHECK(g.ex_attrs == 1);
  CHECK(g.ex_attr_id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  CHECK(g.ex_cluster[0] == 2);
  CHECK(g.ex_cluster[1] == 1);
  CHECK(g.ex_cluster[2] == 1);
  CHECK(g.non_portable_opt_ins == 0);
  TimingPlan plan;
  plan.reps = 2;
  REQUIRE(dev->time(*k, pairs, args, plan).ok());
  REQUIRE(dev->launch_on(*k, pairs, args, LaunchTarget::stream(nullptr)).ok());
  CHECK(g.ex_launches >= 4);  // the timed launches (warm-up and reps) and the stream's
  CHECK(g.plain_launches == 2);
  // 16 blocks per cluster exceed the portable 8: the function's opt-in comes first.
  REQUIRE(dev->launch(*k, LaunchDims{{32, 1, 1}, {128, 1, 1}, 0, {16, 1, 1}}, args).ok());
  CHECK(g.non_portable_opt_ins == 1);
  CHECK(g.ex_cluster[0] == 16);
  // A grid that is not a multiple of its cluster: refused naming the kernel, the driver
  // untouched.
  const int before = g.ex_launches;
  const Status odd = dev->launch(*k, LaunchDims{{3, 1, 1}, {128, 1, 1}, 0, {2, 1, 1}}, args);
  CHECK(odd.code() == StatusCode::invalid_argument);
  CHECK_MESSAGE(odd.message().starts_with("k"), odd.message());
  CHECK_MESSAGE(
      odd.message().find("grid 3x1x1 is not a multiple of its cluster 2x1x1") != std::string::npos,
      odd.message());
  CHECK(dev->launch(*k, LaunchDims{{4, 1, 1}, {128, 1, 1}, 0, {0, 1, 1}}, args).code() ==
        StatusCode::invalid_argument);
  CHECK(g.ex_launches == before);
}

#ifndef TUNE_TEST_SANITIZED
TEST_CASE("a launch on an application's stream allocates nothing once it has run") {
  const Driver d = fake_driver();
  for (CUcontext current : {kOther, kPrimary}) {
    CAPTURE(name_of(current));
    start_with(current);
    auto dev = cuda::detail::open_on_context(d, cuda::OpenOptions{}).value();
    auto x = cuda::wrap_buffer(*dev, 0x5000'0000, 4096).value();
    auto k = dev->compile(source(), Config{}).value();
    const ArgValue args[] = {ArgValue::buf(*x, ElemType::f32, 1024), ArgValue(1024)};
    const LaunchTarget stream = LaunchTarget::stream(reinterpret_cast<void*>(0x4242));
    REQUIRE(dev->launch_on(*k, kDims, args, stream).ok());
    bool all_ok = true;
    const std::size_t n = testing::allocations_of([&] {
      for (int i = 0; i < 100; ++i) all_ok &= dev->launch_on(*k, kDims, args, stream).ok();
    });
    CHECK(all_ok);
    CHECK_MESSAGE(n == 0, n << " allocations in 100 launches on a stream");
  }
}
#endif
