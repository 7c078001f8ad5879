// The cost of verification while tuning (issue 15): one kernel tuned from scratch without
// verification and with it (KernelDef::reference: a reference configuration's output compared
// on the device), side by side in one process, printing the ratio. The kernel writes a large
// output (out = 2 * in + 1 over `mb` MiB of floats) over 40 configurations (BLOCK x EPT x PAD),
// so verifying every configuration by downloading its output would dominate; verifying only
// what can win, on the device, should cost one launch and a comparison (target <= 1.15x).
//
// Each side is tuned `rounds` times, alternating (without, with, without, ...), each by a fresh
// Autotuner with nothing persisted; one warm-up tuning first fills the binary cache, so every
// tuning compiles alike (binary-cache hits). Medians are printed. Blocks; prints to stdout.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace tune::bench {

inline KernelSource verify_cost_source(Language lang) {
  KernelSource s;
  s.language = lang;
  if (lang == Language::glsl) {
    s.entry = "main";
    s.text = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer I { float x[]; };
layout(std430, binding = 1) writeonly buffer O { float y[]; };
layout(push_constant) uniform P { uint n; };
void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + gl_LocalInvocationID.x;
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < n) y[i] = 2.0 * x[i] + 1.0 + float(PAD) * 0.0;
  }
}
)";
  } else {
    s.entry = "affine";
    s.text = R"(
extern "C" __global__ void affine(const float* x, float* y, unsigned n) {
  const unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
  const unsigned base = group * (TUNE_BLOCK_X * EPT) + threadIdx.x;
#pragma unroll
  for (unsigned j = 0; j < EPT; ++j) {
    const unsigned i = base + j * TUNE_BLOCK_X;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f + (float)PAD * 0.0f;
  }
}
)";
  }
  return s;
}

inline KernelDef verify_cost_kernel(Language lang) {
  KernelDef def;
  def.name = "verify_cost_affine";
  def.sources = {verify_cost_source(lang)};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::u32);
  def.space.param(std::string(kBlockX), {64, 128, 256, 512})
      .param("EPT", {1, 2, 4, 8, 16})
      .param("PAD", {0, 1});
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    const std::uint64_t per = std::uint64_t{c.launch().block.x} * c.get_int("EPT");
    const std::uint64_t groups = (args[2].as_int() + per - 1) / per;
    const auto x = static_cast<std::uint32_t>(std::min<std::uint64_t>(groups, 32768));
    const auto y = static_cast<std::uint32_t>((groups + x - 1) / x);
    return LaunchDims{{x, y, 1}, c.launch().block, 0};
  };
  return def;
}

// Runs the comparison on `dev` over `mb` MiB of output; returns 0, or 1 with a message.
inline int run_verify_cost(Device& dev, std::uint64_t mb, int rounds) {
  const std::uint64_t n = mb * 1024 * 1024 / sizeof(float);
  auto x = dev.alloc(n * sizeof(float));
  auto y = dev.alloc(n * sizeof(float));
  if (!x.ok() || !y.ok()) {
    std::fprintf(stderr, "verify-cost: cannot allocate 2 x %llu MiB\n",
                 static_cast<unsigned long long>(mb));
    return 1;
  }
  std::vector<float> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.25f;
  if (!dev.upload(**x, host.data(), n * sizeof(float)).ok()) return 1;
  const std::vector<ArgValue> args = {ArgValue::buf(**x, ElemType::f32, n),
                                      ArgValue::buf(**y, ElemType::f32, n),
                                      ArgValue(static_cast<std::uint32_t>(n))};
  const auto tune_once = [&](bool verify, double* verify_ms) -> double {
    KernelDef def = verify_cost_kernel(dev.language());
    if (verify) {
      ReferenceOutput out;
      out.arg = "y";
      def.reference.outputs = {out};
      def.reference.config = Config().set("EPT", 1).set("PAD", 0).set(std::string(kBlockX), 256);
    }
    AutotunerOptions opts;
    opts.persistent = false;
    opts.print = false;
    auto tuner = Autotuner::make(std::move(def), opts);
    if (!tuner.ok()) return -1;
    const auto t0 = std::chrono::steady_clock::now();
    auto tuned = (*tuner)->tune(dev, args);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!tuned.ok()) {
      std::fprintf(stderr, "verify-cost: %s\n", tuned.status().to_string().c_str());
      return -1;
    }
    if (verify_ms != nullptr) *verify_ms = (*tuner)->last_report(dev, args)->times.verify;
    return ms;
  };
  double ignored = 0;
  if (tune_once(true, &ignored) < 0) return 1;  // warm-up: fills the binary cache
  std::vector<double> without, with, verify_parts;
  for (int r = 0; r < rounds; ++r) {
    const double a = tune_once(false, nullptr);
    double v = 0;
    const double b = tune_once(true, &v);
    if (a < 0 || b < 0) return 1;
    without.push_back(a);
    with.push_back(b);
    verify_parts.push_back(v);
    std::printf("round %d: without %.1f ms, with %.1f ms (verification %.1f ms)\n", r + 1, a, b, v);
    std::fflush(stdout);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("verify-cost on %s: %llu MiB output, 40 configurations, %d rounds each\n",
              dev.info().name.c_str(), static_cast<unsigned long long>(mb), rounds);
  std::printf("| tuning | median wall | of which verification |\n|---|---|---|\n");
  std::printf("| without verification | %.1f ms | - |\n", median(without));
  std::printf("| with reference (config, compared on the device) | %.1f ms | %.1f ms |\n",
              median(with), median(verify_parts));
  std::printf("ratio with/without: %.3fx (target <= 1.15x)\n", median(with) / median(without));
  return 0;
}

// "--verify-cost" or "--verify-cost=MB" in argv: the MiB asked (default `fallback`), else 0.
inline std::uint64_t verify_cost_flag(int argc, char** argv, std::uint64_t fallback) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--verify-cost") == 0) return fallback;
    if (std::strncmp(argv[i], "--verify-cost=", 14) == 0) return std::stoull(argv[i] + 14);
  }
  return 0;
}

}  // namespace tune::bench
