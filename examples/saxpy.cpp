// libtune quick start: tune a user's own Vulkan kernel, y = a * x + y, over workgroup size and
// elements per thread; the key is n rounded up to a power of two. The kernel updates y in
// place, so y is restored before every timed run (restore_value) and the caller's data is
// untouched by tuning. Built by CI as an installed-package consumer (tests/consumer).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <tune/tune.hpp>

static const char* kSaxpy = R"(#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; int n; };
void main() {
  uint base = gl_GlobalInvocationID.x * ELEMS;
  for (uint i = 0; i < ELEMS; ++i) {
    uint j = base + i;
    if (j < uint(n)) y[j] = a * x[j] + y[j];
  }
})";

int main() {
  using namespace tune;
  auto dev = open_device("vulkan");  // or open_device() for the default device
  if (!dev.ok()) {
    std::printf("no device: %s\n", dev.status().to_string().c_str());
    return 77;
  }

  KernelDef k;
  k.name = "saxpy";
  k.sources = {{Language::glsl, "main", kSaxpy}};
  k.signature.buffer("x", ElemType::f32)
      .buffer("y", ElemType::f32)
      .scalar("a", ElemType::f32)
      .scalar("n", ElemType::i32);
  k.space.param("block.x", {64, 128, 256}).param("ELEMS", {1, 2, 4});
  k.space.constrain("fits", [](const Config& c, const DeviceInfo& d) {
    return c.launch().block.x <= d.max_threads_per_block;
  });
  k.key = {KeySpec::pow2("n")};
  k.restore_value = {"y"};
  k.dims = [](const Config& c, ArgList args) {
    auto n = static_cast<std::uint64_t>(args[3].as_int());
    std::uint64_t per_group = c.launch().block.x * static_cast<std::uint64_t>(c.get_int("ELEMS"));
    return LaunchDims{
        {static_cast<std::uint32_t>((n + per_group - 1) / per_group), 1, 1}, c.launch().block, 0};
  };
  AutotunerOptions opts;
  opts.persistent = false;  // keep this example's results in memory only
  opts.bench.warmup_ms = 2;
  opts.bench.rep_ms = 10;
  auto tuner = Autotuner::make(k, opts).value();

  const int n = 100000;
  const float a = 0.75f;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = u(rng), y[i] = u(rng);
  auto dx = (*dev)->alloc(n * 4).value();
  auto dy = (*dev)->alloc(n * 4).value();
  throw_if_error((*dev)->upload(*dx, x.data(), n * 4));
  throw_if_error((*dev)->upload(*dy, y.data(), n * 4));

  ArgValue args[] = {ArgValue::buf(*dx, ElemType::f32, n), ArgValue::buf(*dy, ElemType::f32, n), a,
                     n};
  throw_if_error(tuner->run(**dev, args));  // tunes on this first call, then launches the winner

  std::vector<float> out(n);
  throw_if_error((*dev)->download(*dy, out.data(), n * 4));
  for (int i = 0; i < n; ++i) {
    float want = a * x[i] + y[i];
    if (std::fabs(out[i] - want) > 1e-6f * (1 + std::fabs(want))) {
      std::printf("wrong result at %d: %g, expected %g\n", i, out[i], want);
      return 1;
    }
  }
  std::printf("saxpy on %s: best config {%s}, output verified\n", (*dev)->info().name.c_str(),
              tuner->best(**dev, args)->to_string().c_str());
  tuner.reset();  // before the device
  return 0;
}
