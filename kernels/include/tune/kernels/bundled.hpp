// The tunable kernels shipped with libtune, and the host-side workloads that feed and check
// them. Workloads are language-independent (one CPU reference per kernel); each language's
// kernel definitions (source, space, launch dims) live beside its sources.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/kernel.hpp"

namespace tune::kernels {

// One problem instance: random inputs on the host and the device, the CPU reference, and the
// compulsory work of one launch. Owns its device buffers; destroy it before its Device.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string size_text() const = 0;  // "n=1048576", "M=N=K=4096"
  // Floating-point operations and compulsory bytes (inputs read once + outputs written once)
  // of one launch: the floor is max(flops / peak, bytes / bandwidth).
  virtual double flops() const = 0;
  virtual double bytes() const = 0;
  // Allocates device buffers, uploads fresh random inputs drawn from `seed` (uniform in
  // [-1, 1], never zeros) and poisons the outputs with NaN.
  virtual Status setup(Device& dev, std::uint64_t seed) = 0;
  // Arguments in the kernel's signature order. Valid after setup().
  virtual ArgList args() const = 0;
  // Downloads the outputs and compares them with the CPU reference. wrong_output names the
  // first bad element, its value, the expected value and the bound.
  virtual Status check(Device& dev) = 0;
  // Refills the outputs with NaN, so the next check() sees only the next launch's writes.
  virtual Status poison_outputs(Device& dev) = 0;
};

struct BundledKernel {
  std::string name;  // "vector_add", "reduce_sum", "matmul_f32", "matmul_f16", ...
  KernelDef def;     // for one language
  // Makes a workload for problem dimensions: {n} for vector_add and reduce_sum, {M, N, K}
  // for the matmuls.
  std::function<std::unique_ptr<Workload>(std::span<const std::int64_t>)> workload;
  std::vector<std::vector<std::int64_t>> demo_sizes;  // what `tune demo` runs
  std::vector<std::vector<std::int64_t>> test_sizes;  // small, ragged sizes for tests
  Config default_config;  // the untuned baseline benches compare against
};

// Whether `k`'s space offers any configuration on `dev` (the sm_90 wgmma matmuls offer none
// elsewhere): what whole-set runs (`tune demo`, `tune-lab stability`) leave a kernel out by.
bool offered_on(const BundledKernel& k, const DeviceInfo& dev);

// The bundled kernels written in `lang`; empty when that language's kernels are not built.
std::vector<BundledKernel> bundled_kernels(Language lang);
// The bundled kernel called `name` written in `lang`; std::nullopt when there is none.
std::optional<BundledKernel> bundled_kernel(Language lang, std::string_view name);

// Language-independent workloads. Signatures (every language implements exactly these):
//   vector_add : (a f32[n], b f32[n], c f32[n], n i32)            c = a + b
//   reduce_sum : (x f32[n], out f32[1], n i32)                    out[0] += sum(x); out is
//                reset to zero before each launch (KernelDef::reset_to_zero = {"out"})
//   matmul_f32 : (A f32[M*K], B f32[K*N], C f32[M*N], M i32, N i32, K i32)   row-major C = A B
//   matmul_f16 : (A f16[M*K], B f16[K*N], C f16[M*N], M i32, N i32, K i32)   f32 accumulate
//   matmul_f16_coopmat : the same on the matrix units (Vulkan, VK_NV_cooperative_matrix only)
//   matmul_f16_coopmat2 : the same with workgroup-scope matrices (Vulkan,
//                VK_NV_cooperative_matrix2 only; a precompiled SPIR-V 1.6 module)
//   matmul_bf16_coopmat2 : the same with bf16 (A, B, C bf16; Vulkan, VK_NV_cooperative_matrix2
//                and VK_KHR_shader_bfloat16 only)
//   matmul_wgmma_f16, matmul_wgmma_bf16 : the same with f16 / bf16 (CUDA sm_90 only; TMA
//                loads when K % 8 == 0 and N % 8 == 0, a bounds-checked copy otherwise)
std::unique_ptr<Workload> make_vector_add(std::int64_t n);
std::unique_ptr<Workload> make_reduce_sum(std::int64_t n);
std::unique_ptr<Workload> make_matmul(std::int64_t m, std::int64_t n, std::int64_t k,
                                      ElemType type);

// matmul_f32 (`k`, as bundled_kernel gives it for `lang`) over wider domains of its own
// parameters: 3456 points on CUDA/HIP (1329 accepted on sm_90), 3200 in GLSL; the bundled
// space's constraints still apply. invalid_argument for another kernel or language.
Result<ConfigSpace> wide_matmul_f32_space(const BundledKernel& k, Language lang);

// IEEE half <-> float on the host (round to nearest even).
std::uint16_t float_to_half(float f) noexcept;
float half_to_float(std::uint16_t h) noexcept;
// bfloat16 <-> float on the host (round to nearest even; NaN stays NaN).
std::uint16_t float_to_bf16(float f) noexcept;
float bf16_to_float(std::uint16_t h) noexcept;

// Per-language registries, defined beside each language's sources (declared here so that
// bundled_kernels() can dispatch without naming a backend).
std::vector<BundledKernel> glsl_kernels();
std::vector<BundledKernel> cuda_hip_kernels();

}  // namespace tune::kernels
