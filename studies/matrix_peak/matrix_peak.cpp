// matrix_peak: the matrix units' throughput a kernel language can reach on a device, with no
// memory traffic: every subgroup (warp) multiplies register-resident f16 matrices into ACC
// independent f32 accumulators, `iters` times, and writes one sum per invocation. It bounds
// what any matmul written in that language can reach there (issue 40: whether a Vulkan fp16
// matmul can reach 0.80x cuBLAS on Hopper, where Vulkan's cooperative matrices are the warp-level
// mma.sync class and cuBLAS uses wgmma).
//
//   matrix_peak [--device SPEC] [--iters N] [--waves W] [--reps R] [--coopmat2 MODULE.spv]
//
// Vulkan: VK_NV_cooperative_matrix at subgroup scope, every f16 x f16 -> f32 shape the device
// lists (DeviceInfo::matrix_shapes_f16). CUDA: mma.sync.m16n8k16 (f16 x f16 -> f32).
// Each row: shape, accumulators, workgroup size, workgroups (W per compute unit), TFLOP/s
// (median of R timed launches, device timestamps, no L2 flush: nothing is read). The output
// is checked: every invocation's sum must be finite and the same for every workgroup.
// --coopmat2: then Vulkan's workgroup-scope matrices (VK_NV_cooperative_matrix2) through the
// module built from coopmat2_peak.comp beside this file (one BM x BN accumulator per
// workgroup, several tile shapes and workgroup sizes; every stored element checked against its
// exact value). Build the module with Debian trixie's glslang 15 (scripts/build-coopmat2-spirv.sh
// fetches it): glslang -V --target-env vulkan1.3 -o coopmat2_peak.spv coopmat2_peak.comp.
// Prints markdown tables; a device with no matrix units prints why and exits 0.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../study_exit.hpp"
#include "stats.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;

using study::die;
using study::must;

// LM x LN x LK from the definitions; A and B from the workgroup's id (not foldable), the
// accumulators chained so nothing is dead. One float per invocation: the sum of its elements.
constexpr const char* kGlsl = R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) writeonly buffer Out { float O[]; };
layout(push_constant) uniform Params { int iters; };
void main() {
  const float16_t s = float16_t(1.0 / 1024.0) * float16_t(gl_WorkGroupID.x % 7u + 1u);
  fcoopmatNV<16, gl_ScopeSubgroup, LM, LK> a = fcoopmatNV<16, gl_ScopeSubgroup, LM, LK>(s);
  fcoopmatNV<16, gl_ScopeSubgroup, LK, LN> b = fcoopmatNV<16, gl_ScopeSubgroup, LK, LN>(s);
  fcoopmatNV<32, gl_ScopeSubgroup, LM, LN> acc[ACC];
  [[unroll]] for (int i = 0; i < ACC; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>(float(i));
  for (int it = 0; it < iters; ++it) {
    [[unroll]] for (int i = 0; i < ACC; ++i) acc[i] = coopMatMulAddNV(a, b, acc[i]);
  }
  float sum = 0.0;
  [[unroll]] for (int i = 0; i < ACC; ++i)
    for (int j = 0; j < acc[i].length(); ++j) sum += acc[i][j];
  O[gl_GlobalInvocationID.x] = sum;
}
)";

// One m16n8k16 per accumulator and iteration; A and B as f16 pairs from the block's id.
constexpr const char* kCuda = R"(#include <cuda_fp16.h>
extern "C" __global__ void matrix_peak(float* out, int iters) {
  const __half s = __float2half((blockIdx.x % 7u + 1u) / 1024.0f);
  const __half2 s2 = __halves2half2(s, s);
  const unsigned w = *reinterpret_cast<const unsigned*>(&s2);
  unsigned a0 = w, a1 = w, a2 = w, a3 = w, b0 = w, b1 = w;
  float acc[ACC][4];
#pragma unroll
  for (int i = 0; i < ACC; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = float(i);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < ACC; ++i)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};"
          : "+f"(acc[i][0]), "+f"(acc[i][1]), "+f"(acc[i][2]), "+f"(acc[i][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < ACC; ++i) sum += acc[i][0] + acc[i][1] + acc[i][2] + acc[i][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
)";

struct Variant {
  MatrixShape shape;
  int acc = 0;
  int block = 0;
};

// Every invocation of a workgroup holds the same sum, and workgroups with the same id mod 7
// hold the same sums: check finiteness and that agreement (a dropped or partial subgroup
// would break it).
Status check_sums(const std::vector<float>& out, int block) {
  const std::size_t groups = out.size() / static_cast<std::size_t>(block);
  for (std::size_t g = 0; g < groups; ++g) {
    const float ref = out[(g % 7) * static_cast<std::size_t>(block)];
    for (int t = 0; t < block; ++t) {
      const float v = out[g * static_cast<std::size_t>(block) + static_cast<std::size_t>(t)];
      if (!std::isfinite(v) || v != ref)
        return Status(StatusCode::internal, "workgroup " + std::to_string(g) + " invocation " +
                                                std::to_string(t) + ": " + std::to_string(v) +
                                                ", expected " + std::to_string(ref));
    }
  }
  return {};
}

struct Row {
  Variant v;
  std::uint32_t groups = 0;
  double tflops = 0;
};

Row measure(Device& dev, const Variant& v, int iters, int waves, int reps) {
  const bool vk = dev.language() == Language::glsl;
  KernelSource src;
  src.language = dev.language();
  src.entry = vk ? "main" : "matrix_peak";
  src.text = vk ? kGlsl : kCuda;
  Config config = must(
      Config::parse("ACC=" + std::to_string(v.acc) +
                    (vk ? ",LM=" + std::to_string(v.shape.m) + ",LN=" + std::to_string(v.shape.n) +
                              ",LK=" + std::to_string(v.shape.k)
                        : std::string()) +
                    ";block=" + std::to_string(v.block) + "x1x1"),
      "config");
  auto kernel = must(dev.compile(src, config), "compile " + config.to_string());
  // Vulkan does not report its compute units: 256 stands in (more than any GPU's count).
  const std::uint32_t units = dev.info().compute_units > 0 ? dev.info().compute_units : 256u;
  const std::uint32_t groups = units * static_cast<std::uint32_t>(waves);
  const std::uint64_t n = std::uint64_t{groups} * static_cast<std::uint64_t>(v.block);
  auto out = must(dev.alloc(n * sizeof(float)), "alloc");
  const ArgValue args[] = {ArgValue::buf(*out, ElemType::f32, n), ArgValue(iters)};
  const LaunchDims dims({groups, 1, 1}, {static_cast<std::uint32_t>(v.block), 1, 1});
  if (Status s = dev.launch(*kernel, dims, args); !s.ok()) die("launch", s);
  std::vector<float> host(n);
  if (Status s = dev.download(*out, host.data(), n * sizeof(float)); !s.ok()) die("download", s);
  if (Status s = check_sums(host, v.block); !s.ok()) die("output of " + config.to_string(), s);
  TimingPlan plan;
  plan.reps = reps;
  plan.flush_l2 = false;
  const auto t = must(dev.time(*kernel, dims, args, plan), "time");
  const double ns = summarize(t).median;
  const double flops = 2.0 * v.shape.m * v.shape.n * v.shape.k * v.acc * iters *
                       (static_cast<double>(n) / 32.0);  // per subgroup of 32
  return {v, groups, flops / ns / 1e3};
}

// One workgroup-scope tile shape: BM x BN x BK with `block` invocations.
struct Tile {
  std::uint32_t bm, bn, bk, block;
};

// The workgroup-scope loop of `module` (coopmat2_peak.comp) at `tile`: TFLOP/s, or the reason
// the device refused it. Every element of workgroup g's tile must equal iters x BK x q^2 / 1024,
// q = g % 4 + 1 (exact in fp32).
std::string measure_workgroup_scope(Device& dev, const std::vector<std::uint32_t>& module,
                                    const Tile& tile, int iters, std::uint32_t groups, int reps) {
  KernelSource src;
  src.language = Language::glsl;
  src.spirv = module;
  const std::string text = "BM=" + std::to_string(tile.bm) + ",BN=" + std::to_string(tile.bn) +
                           ",BK=" + std::to_string(tile.bk) +
                           ";block=" + std::to_string(tile.block) + "x1x1";
  const Config config = must(Config::parse(text), "config");
  auto kernel = dev.compile(src, config);
  if (!kernel.ok()) return "refused: " + kernel.status().to_string();
  const std::uint64_t per_group = std::uint64_t{tile.bm} * tile.bn;
  const std::uint64_t n = per_group * groups;
  auto out = must(dev.alloc(n * sizeof(float)), "alloc");
  const ArgValue args[] = {ArgValue::buf(*out, ElemType::f32, n), ArgValue(iters)};
  const LaunchDims dims({groups, 1, 1}, {tile.block, 1, 1});
  if (Status s = dev.launch(**kernel, dims, args); !s.ok()) return "refused: " + s.to_string();
  std::vector<float> host(n);
  if (Status s = dev.download(*out, host.data(), n * sizeof(float)); !s.ok()) die("download", s);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double q = static_cast<double>(i / per_group % 4 + 1);
    const double want = static_cast<double>(iters) * tile.bk * q * q / 1024.0;
    if (host[i] != static_cast<float>(want))
      die("output of " + text,
          Status(StatusCode::internal, "element " + std::to_string(i) + ": " +
                                           std::to_string(host[i]) + ", expected " +
                                           std::to_string(want)));
  }
  TimingPlan plan;
  plan.reps = reps;
  plan.flush_l2 = false;
  const auto t = must(dev.time(**kernel, dims, args, plan), "time");
  const double flops = 2.0 * tile.bm * tile.bn * tile.bk * static_cast<double>(iters) * groups;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", flops / summarize(t).median / 1e3);
  return buf;
}

// The workgroup-scope table (Vulkan with VK_NV_cooperative_matrix2 only).
void print_workgroup_scope(Device& dev, const std::string& path, int iters, int waves, int reps) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("--coopmat2", Status(StatusCode::not_found, "cannot read " + path));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::uint32_t> module(bytes.size() / 4);
  std::memcpy(module.data(), bytes.data(), module.size() * 4);
  const std::uint32_t groups = 256u * static_cast<std::uint32_t>(waves);
  std::printf("\nWorkgroup scope (VK_NV_cooperative_matrix2, %s), %u workgroups:\n\n", path.c_str(),
              groups);
  std::printf("| tile BMxBNxBK | workgroup | TFLOP/s |\n|---|---|---|\n");
  for (const Tile& tile :
       {Tile{128, 128, 32, 128}, Tile{128, 128, 32, 256}, Tile{128, 128, 16, 128},
        Tile{128, 256, 32, 256}, Tile{256, 128, 32, 256}, Tile{64, 64, 32, 128}}) {
    std::printf("| %ux%ux%u | %u | %s |\n", tile.bm, tile.bn, tile.bk, tile.block,
                measure_workgroup_scope(dev, module, tile, iters, groups, reps).c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec, coopmat2;
  int iters = 4096, waves = 8, reps = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "matrix_peak: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--device") {
      spec = value();
    } else if (a == "--iters") {
      iters = std::atoi(value().c_str());
    } else if (a == "--waves") {
      waves = std::atoi(value().c_str());
    } else if (a == "--reps") {
      reps = std::atoi(value().c_str());
    } else if (a == "--coopmat2") {
      coopmat2 = value();
    } else {
      std::fprintf(stderr,
                   "usage: matrix_peak [--device SPEC] [--iters N] [--waves W] [--reps R] "
                   "[--coopmat2 MODULE.spv]\n");
      return 2;
    }
  }
  auto dev = must(open_device(spec), "open_device");
  const DeviceInfo& info = dev->info();
  std::vector<MatrixShape> shapes;
  if (dev->language() == Language::glsl) {
    shapes = info.matrix_shapes_f16;
  } else if (dev->language() == Language::cuda_hip && info.backend == "cuda") {
    shapes = {{16, 8, 16}};
  }
  const std::string units = info.compute_units > 0 ? std::to_string(info.compute_units)
                                                   : std::string("unreported (256 assumed)");
  std::printf("# matrix_peak: %s (%s), compute units %s, %d iterations, %d workgroups per unit\n\n",
              info.name.c_str(), info.backend.c_str(), units.c_str(), iters, waves);
  if (shapes.empty()) {
    std::printf(
        "No f16 matrix units this program can drive on this device (Vulkan: no "
        "VK_NV_cooperative_matrix f16 x f16 -> f32 shape; HIP: not written).\n");
    return 0;
  }
  std::printf(
      "| shape MxNxK | accumulators | workgroup | workgroups | TFLOP/s |\n|---|---|---|---|---|\n");
  for (const MatrixShape& s : shapes)
    for (int acc : {4, 8})
      for (int block : {128, 256}) {
        const Row r = measure(*dev, {s, acc, block}, iters, waves, reps);
        std::printf("| %ux%ux%u | %d | %d | %u | %.1f |\n", s.m, s.n, s.k, acc, block, r.groups,
                    r.tflops);
        std::fflush(stdout);
      }
  if (!coopmat2.empty() && dev->language() == Language::glsl)
    print_workgroup_scope(*dev, coopmat2, iters, waves, reps);
  return 0;
}
