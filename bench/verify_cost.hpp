// The cost of verification while tuning (issue 15): one kernel tuned from scratch without
// verification and with it (KernelDef::reference: a reference configuration's output compared
// on the device), side by side in one process, printing the ratio. The kernel writes a large
// output (y = 2 * x + 1 over `mb` MiB of floats) over 40 configurations (BLOCK x EPT x PAD),
// so verifying every configuration by downloading its output would dominate; verifying only
// what can win, on the device, should cost one launch and a comparison (target <= 1.15x).
// The input and the output are each split into two buffers of mb / 2 MiB (x0 x1, y0 y1, both
// outputs verified), so that 256 MiB fit devices whose largest storage buffer is 128 MiB
// (lavapipe's maxStorageBufferRange).
//
// Each side is tuned `rounds` times (`--verify-rounds=N`, default 3), one of each per round in
// alternating order (without first in odd rounds, with first in even ones), each by a fresh
// Autotuner with nothing persisted; one warm-up tuning first fills the binary cache, so every
// tuning compiles alike (binary-cache hits). Printed: each round's breakdown, the ratio of the
// medians (the target's figure), the median of the rounds' own ratios, and verification's share
// (on lavapipe the tuning's own time varies by tens of percent between tunings, so the share
// says what verification costs where the ratio is mostly that noise). Blocks; prints to stdout.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "stats.hpp"
#include "tune/tune.hpp"

namespace tune::bench {

inline KernelSource verify_cost_source(Language lang) {
  KernelSource s;
  s.language = lang;
  if (lang == Language::glsl) {
    s.entry = "main";
    s.text = R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer I0 { float x0[]; };
layout(std430, binding = 1) readonly buffer I1 { float x1[]; };
layout(std430, binding = 2) writeonly buffer O0 { float y0[]; };
layout(std430, binding = 3) writeonly buffer O1 { float y1[]; };
layout(push_constant) uniform P { uint half_n; };
void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + gl_LocalInvocationID.x;
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < half_n) {
      y0[i] = 2.0 * x0[i] + 1.0 + float(PAD) * 0.0;
    } else if (i - half_n < half_n) {
      y1[i - half_n] = 2.0 * x1[i - half_n] + 1.0 + float(PAD) * 0.0;
    }
  }
}
)";
  } else {
    s.entry = "affine";
    s.text = R"(
extern "C" __global__ void affine(const float* x0, const float* x1, float* y0, float* y1,
                                  unsigned half_n) {
  const unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
  const unsigned base = group * (TUNE_BLOCK_X * EPT) + threadIdx.x;
#pragma unroll
  for (unsigned j = 0; j < EPT; ++j) {
    const unsigned i = base + j * TUNE_BLOCK_X;
    if (i < half_n) {
      y0[i] = 2.0f * x0[i] + 1.0f + (float)PAD * 0.0f;
    } else if (i - half_n < half_n) {
      y1[i - half_n] = 2.0f * x1[i - half_n] + 1.0f + (float)PAD * 0.0f;
    }
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
  def.signature.buffer("x0", ElemType::f32)
      .buffer("x1", ElemType::f32)
      .buffer("y0", ElemType::f32)
      .buffer("y1", ElemType::f32)
      .scalar("half_n", ElemType::u32);
  def.space.param(std::string(kBlockX), {64, 128, 256, 512})
      .param("EPT", {1, 2, 4, 8, 16})
      .param("PAD", {0, 1});
  def.key = {KeySpec::exact("half_n")};
  def.dims = [](const Config& c, ArgList args) {
    const std::uint64_t per = std::uint64_t{c.launch().block.x} * c.get_int("EPT");
    const std::uint64_t groups = (2 * std::uint64_t(args[4].as_int()) + per - 1) / per;
    const auto x = static_cast<std::uint32_t>(std::min<std::uint64_t>(groups, 32768));
    const auto y = static_cast<std::uint32_t>((groups + x - 1) / x);
    return LaunchDims{{x, y, 1}, c.launch().block, 0};
  };
  return def;
}

// The input's element `at` over the whole index range (x0 then x1): a multiple of 1/4 below
// 250, so y = 2 x + 1 is exact in float.
inline float verify_cost_input(std::uint64_t at) { return static_cast<float>(at % 1000) * 0.25f; }

// The outputs the last tuning left (every configuration writes all of them) against the CPU:
// y = 2 x + 1 with x = verify_cost_input, exact in float. Returns 0,
// or 1 with the count and the first bad index (the reference configuration shares the
// kernel, so the device comparison alone cannot catch a bug in the kernel's indexing).
inline int check_verify_cost_output(Device& dev, const DeviceBuffer& y0, const DeviceBuffer& y1,
                                    std::uint64_t half_n) {
  std::vector<float> got(half_n);
  std::uint64_t bad = 0, first_bad = 0;
  for (int part = 0; part < 2; ++part) {
    const Status st = dev.download(part == 0 ? y0 : y1, got.data(), half_n * sizeof(float));
    if (!st.ok()) {
      std::fprintf(stderr, "verify-cost: download: %s\n", st.to_string().c_str());
      return 1;
    }
    for (std::uint64_t i = 0; i < half_n; ++i) {
      const std::uint64_t at = i + part * half_n;
      if (got[i] != 2.0f * verify_cost_input(at) + 1.0f && bad++ == 0) {
        first_bad = at;
      }
    }
  }
  if (bad != 0) {
    std::fprintf(stderr, "verify-cost: output wrong at %llu of %llu elements (first at %llu)\n",
                 static_cast<unsigned long long>(bad), static_cast<unsigned long long>(2 * half_n),
                 static_cast<unsigned long long>(first_bad));
    return 1;
  }
  std::printf("output checked against the CPU: %llu elements, 0 wrong\n",
              static_cast<unsigned long long>(2 * half_n));
  return 0;
}

// One side's tuning in a round: its wall time (< 0: it failed, with a message) and its report's
// breakdown.
struct VerifyCostSample {
  double wall_ms = -1;
  TuningTimes times;
  std::uint64_t samples = 0;  // timed launches kept, over every configuration
  int raced_out = 0;
  int retimed = 0;  // showdown attempts thrown away because their samples shifted
  int turns = 0;    // sustained turns
  std::string describe() const {
    return "samples " + std::to_string(samples) + ", raced out " + std::to_string(raced_out) +
           ", showdown re-timed " + std::to_string(retimed) + ", turns " + std::to_string(turns);
  }
};

// Runs the comparison on `dev` over `mb` MiB of output; returns 0, or 1 with a message.
inline int run_verify_cost(Device& dev, std::uint64_t mb, int rounds) {
  const std::uint64_t half_n = mb * 1024 * 1024 / sizeof(float) / 2;
  const std::uint64_t half_bytes = half_n * sizeof(float);
  std::vector<Buffer> bufs;  // x0 x1 y0 y1, owned here for the whole run
  for (const char* name : {"x0", "x1", "y0", "y1"}) {
    auto b = dev.alloc(half_bytes);
    if (!b.ok()) {
      std::fprintf(stderr, "verify-cost: cannot allocate %s (%llu MiB): %s\n", name,
                   static_cast<unsigned long long>(half_bytes >> 20),
                   b.status().to_string().c_str());
      return 1;
    }
    bufs.push_back(std::move(*b));
  }
  std::vector<float> host(half_n);
  for (int part = 0; part < 2; ++part) {
    for (std::uint64_t i = 0; i < half_n; ++i) host[i] = verify_cost_input(i + part * half_n);
    if (const Status st = dev.upload(*bufs[part], host.data(), half_bytes); !st.ok()) {
      std::fprintf(stderr, "verify-cost: upload: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  std::vector<ArgValue> args;
  for (const auto& b : bufs) args.push_back(ArgValue::buf(*b, ElemType::f32, half_n));
  args.emplace_back(static_cast<std::uint32_t>(half_n));
  // One tuning from scratch; wall ms and the report's times, or wall < 0 after a message.
  const auto tune_once = [&](bool verify) -> VerifyCostSample {
    KernelDef def = verify_cost_kernel(dev.language());
    if (verify) {
      ReferenceOutput y0;
      y0.arg = "y0";
      ReferenceOutput y1;
      y1.arg = "y1";
      def.reference.outputs = {y0, y1};
      def.reference.config = Config().set("EPT", 1).set("PAD", 0).set(std::string(kBlockX), 256);
    }
    AutotunerOptions opts;
    opts.persistent = false;
    opts.print = false;
    auto tuner = Autotuner::make(std::move(def), opts);
    if (!tuner.ok()) {
      std::fprintf(stderr, "verify-cost: %s\n", tuner.status().to_string().c_str());
      return {};
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto tuned = (*tuner)->tune(dev, args);
    VerifyCostSample out;
    out.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!tuned.ok()) {
      std::fprintf(stderr, "verify-cost: %s\n", tuned.status().to_string().c_str());
      return {};
    }
    const auto report = (*tuner)->last_report(dev, args);
    out.times = report->times;
    for (const ConfigResult& r : report->results) {
      out.samples += r.stats.count;
      out.raced_out += r.raced_out ? 1 : 0;
    }
    out.retimed = report->showdown.retimed;
    out.turns = report->showdown.sustained_turns;
    return out;
  };
  if (tune_once(true).wall_ms < 0) return 1;  // warm-up: fills the binary cache
  std::vector<double> without, with, verify_parts, ratios;
  for (int r = 0; r < rounds; ++r) {
    // Odd rounds tune without verification first, even rounds with it first, so a drift in
    // the machine's speed over a round favours neither side.
    const bool with_first = r % 2 == 1;
    const VerifyCostSample first = tune_once(with_first);
    const VerifyCostSample second = tune_once(!with_first);
    const VerifyCostSample& a = with_first ? second : first;
    const VerifyCostSample& b = with_first ? first : second;
    if (a.wall_ms < 0 || b.wall_ms < 0) return 1;
    without.push_back(a.wall_ms);
    with.push_back(b.wall_ms);
    verify_parts.push_back(b.times.verify);
    ratios.push_back(b.wall_ms / a.wall_ms);
    std::printf(
        "round %d (%s first): without %.1f ms (compile %.1f, timing %.1f; %s), with %.1f ms "
        "(compile %.1f, timing %.1f, verification %.1f; %s), ratio %.3f\n",
        r + 1, with_first ? "with" : "without", a.wall_ms, a.times.compile, a.times.benchmark,
        a.describe().c_str(), b.wall_ms, b.times.compile, b.times.benchmark, b.times.verify,
        b.describe().c_str(), ratios.back());
    std::fflush(stdout);
  }
  if (check_verify_cost_output(dev, *bufs[2], *bufs[3], half_n) != 0) return 1;
  const auto median = [](const std::vector<double>& v) { return quantile(v, 0.5); };
  std::printf("verify-cost on %s: %llu MiB output, 40 configurations, %d rounds each\n",
              dev.info().name.c_str(), static_cast<unsigned long long>(mb), rounds);
  std::printf("| tuning | median wall | of which verification |\n|---|---|---|\n");
  std::printf("| without verification | %.1f ms | - |\n", median(without));
  std::printf("| with reference (config, compared on the device) | %.1f ms | %.1f ms |\n",
              median(with), median(verify_parts));
  std::printf(
      "ratio with/without: %.3fx (target <= 1.15x); median of the rounds' ratios %.3fx; "
      "verification %.1f%% of the median tuning with it\n",
      median(with) / median(without), median(ratios), 100 * median(verify_parts) / median(with));
  return 0;
}

// `--verify-rounds=N` among the arguments: N (at least 1), else `fallback`.
inline int verify_rounds_flag(int argc, char** argv, int fallback) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--verify-rounds=", 16) == 0)
      return std::max(1, std::atoi(argv[i] + 16));
  }
  return fallback;
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
