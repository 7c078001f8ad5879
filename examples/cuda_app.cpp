// libtune inside a CUDA runtime-API application: the program owns the memory (cudaMalloc), the
// stream and the work around libtune's call; libtune is opened on the runtime's primary context,
// uses the program's pointers as buffers, tunes a kernel once and launches it on the program's
// stream. Plain C++ (no .cu file): the kernel is CUDA C that libtune compiles with NVRTC for
// each configuration it tries. Exits 77 (CTest: skipped) without a CUDA driver or GPU.
// Built by CI as an installed-package consumer (tests/consumer, examples/CMakeLists.txt).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <tune/cuda.hpp>
#include <tune/tune.hpp>

// y = a * x + y, EPT elements per thread; block.x and EPT are tuned.
static const char* kSaxpy = R"(
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  const long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * EPT;
  for (int e = 0; e < EPT; ++e) {
    const long long i = base + e;
    if (i < n) y[i] = a * x[i] + y[i];
  }
})";

// Every runtime call is checked: the failing call and the runtime's reason, then exit 1.
#define CHECK_CUDA(call)                                             \
  do {                                                               \
    if (cudaError_t e_ = (call); e_ != cudaSuccess) {                \
      std::printf("%s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                  \
    }                                                                \
  } while (0)

static tune::KernelDef saxpy_kernel() {
  using namespace tune;
  KernelDef k;
  k.name = "cuda_app_saxpy";
  k.sources = {{Language::cuda_hip, "saxpy", kSaxpy}};
  k.signature.buffer("x", ElemType::f32)
      .buffer("y", ElemType::f32)
      .scalar("a", ElemType::f32)
      .scalar("n", ElemType::i32);
  k.space.param("block.x", {128, 256, 512}).param("EPT", {1, 2, 4});
  k.key = {KeySpec::pow2("n")};
  k.restore_value = {"y"};  // tuning runs saxpy many times in place: y is put back each time
  k.dims = [](const Config& c, ArgList args) {
    const auto n = static_cast<std::uint64_t>(args[3].as_int());
    const std::uint64_t per_block =
        c.launch().block.x * static_cast<std::uint64_t>(c.get_int("EPT"));
    return LaunchDims{
        {static_cast<std::uint32_t>((n + per_block - 1) / per_block), 1, 1}, c.launch().block, 0};
  };
  return k;
}

int main() {
  int gpus = 0;
  if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess || gpus == 0) {
    std::printf("skipped: no CUDA GPU (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(0));

  // The application's data, memory and stream.
  const int n = 1 << 20;
  const float a = 0.75f;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) x[i] = u(rng), y[i] = u(rng);
  float *dx = nullptr, *dy = nullptr;
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dy, n * sizeof(float)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    // libtune on the runtime's primary context of device 0 (retained, never reset).
    auto dev = tune::cuda::open_device(tune::cuda::OpenOptions{.ordinal = 0});
    if (!dev.ok()) {
      std::printf("tune::cuda::open_device: %s\n", dev.status().to_string().c_str());
      return 1;
    }
    // The application's pointers as libtune buffers (never freed by libtune).
    auto bx = tune::cuda::wrap_pointer(**dev, dx, n * sizeof(float)).value();
    auto by = tune::cuda::wrap_pointer(**dev, dy, n * sizeof(float)).value();
    tune::AutotunerOptions opts;
    opts.persistent = false;  // keep this example's results in memory only
    auto tuner = tune::Autotuner::make(saxpy_kernel(), opts).value();
    tune::ArgValue args[] = {tune::ArgValue::buf(*bx, tune::ElemType::f32, n),
                             tune::ArgValue::buf(*by, tune::ElemType::f32, n), a, n};

    // Work of the application before: the inputs arrive on its stream (asynchronously).
    CHECK_CUDA(cudaMemcpyAsync(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaMemcpyAsync(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
    // The first call tunes (on libtune's own stream, after the copies above), then launches the
    // winner on `stream`; the next ones are cache hits: an asynchronous launch on `stream`.
    for (int step = 0; step < 3; ++step) {
      tune::Status st = tuner->run(**dev, args, tune::LaunchTarget::stream(stream));
      if (!st.ok()) {
        std::printf("run: %s\n", st.to_string().c_str());
        return 1;
      }
    }
    // Work of the application after: it sees the three launches' output.
    CHECK_CUDA(cudaMemcpyAsync(out.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    for (int i = 0; i < n; ++i) {
      float want = y[i];
      for (int step = 0; step < 3; ++step) want = a * x[i] + want;
      if (!(std::fabs(out[i] - want) <= 1e-5f * (1 + std::fabs(want)))) {
        std::printf("wrong result at %d: %g, expected %g\n", i, out[i], want);
        return 1;
      }
    }
    std::printf("saxpy on %s, the application's stream: best config {%s}, output verified\n",
                (*dev)->info().name.c_str(), tuner->best(**dev, args)->to_string().c_str());
  }  // the tuner, the wrapped buffers and the device go before the memory they use
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  return 0;
}
