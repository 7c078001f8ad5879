// DeviceInfo: a plain snapshot of what a device is and what it can do.
//
// Filled once by a backend when the device is opened; never changes afterwards. Pure
// functions of DeviceInfo (constraints, pruning, grids, keys) are testable on hand-built
// snapshots without any hardware.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tune/config.hpp"

namespace tune {

// Where DeviceInfo::llc_bytes came from.
enum class CacheSizeSource : std::uint8_t {
  reported,      // the driver reported it (CUDA and HIP L2 size)
  table,         // libtune's table by architecture (AMD Infinity Cache, which HIP does not report)
  default_size,  // unknown to the driver and the table: kDefaultLlcBytes for the device type
  user,          // TUNE_LLC_BYTES
};
std::string_view to_string(CacheSizeSource s) noexcept;  // "reported", "table", "default", "user"

// One matrix multiply-accumulate shape: an M x K times K x N product per subgroup.
struct MatrixShape {
  std::uint32_t m = 0, n = 0, k = 0;
  friend bool operator==(const MatrixShape&, const MatrixShape&) = default;
};

// Matrix units that a whole workgroup drives with matrices of any size that is a multiple of
// `granularity` and at most `max_dimension` on each side (Vulkan: VK_NV_cooperative_matrix2's
// workgroup scope with flexible dimensions), for workgroups of `invocations` invocations.
struct WorkgroupMatrixShape {
  std::uint32_t invocations = 0;
  MatrixShape granularity;
  std::uint32_t max_dimension = 0;
  friend bool operator==(const WorkgroupMatrixShape&, const WorkgroupMatrixShape&) = default;
};

struct DeviceInfo {
  std::string backend;  // "cuda", "hip", "vulkan" (or "simulated" in tests)
  std::string vendor;   // "NVIDIA", "AMD", "Mesa", ...
  std::string name;     // "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string arch;     // "sm_90", "gfx90a", or for Vulkan "vk:<vendorID>:<deviceID>"
  std::string driver_version;
  std::string compiler_version;  // NVRTC / hiprtc / shaderc version used to build variants
  // What tune::open_device() takes to open this same device in another process ("cuda:0",
  // "hip:1"): the isolated tuning worker opens it (AutotunerOptions::isolation). Empty when
  // the backend cannot say (Vulkan, the simulated device).
  std::string reopen_spec;
  // This physical device's identity, the same in every process and across reboots: the
  // driver's device UUID as format_uuid() writes it (CUDA cuDeviceGetUuid, HIP
  // hipDeviceGetUuid, Vulkan VkPhysicalDeviceIDProperties::deviceUUID); for a SimDevice
  // "sim-<pid>-<n>", its own, unless its DeviceInfo names one. Empty when the driver cannot say.
  // Names the per-GPU timing lock (AutotunerOptions::gpu_lock); results are keyed by fingerprint(),
  // never by this.
  std::string uuid;

  std::uint32_t compute_units = 0;                 // SMs, CUs, or 0 when unknown
  std::uint32_t max_threads_per_block = 0;         // maxComputeWorkGroupInvocations for Vulkan
  Dim3 max_block{0, 0, 0};                         // per-dimension block / workgroup limit
  Dim3 max_grid{0, 0, 0};                          // per-dimension grid limit
  std::uint32_t shared_bytes_per_block = 0;        // default static limit
  std::uint32_t shared_bytes_per_block_optin = 0;  // with opt-in (CUDA); else == default
  std::uint32_t registers_per_block = 0;           // 0 when unknown (Vulkan)
  std::uint32_t warp_size = 0;                     // warp / wavefront / subgroup size
  // The subgroup sizes a kernel may require (LaunchOptions::subgroup_size): the powers of two
  // in [min, max]. CUDA and HIP: the warp size alone. Vulkan: the range of
  // VK_EXT_subgroup_size_control (Vulkan 1.3) when the device lets compute shaders choose;
  // both 0 where it does not (then every request is refused).
  std::uint32_t min_subgroup_size = 0;
  std::uint32_t max_subgroup_size = 0;
  // Matrix-unit shapes for f16 inputs with f32 accumulation (Vulkan: the device's
  // cooperative-matrix list, VK_NV_cooperative_matrix, subgroup scope); empty where the device
  // has none or the backend exposes none. Kernels on matrix units pick their shape from it.
  std::vector<MatrixShape> matrix_shapes_f16;
  // Workgroup-scope matrix units for f16 inputs with f32 accumulation, per workgroup size
  // (Vulkan: VK_NV_cooperative_matrix2 with workgroup scope, flexible dimensions and tensor
  // addressing all enabled); empty where the device has none or the backend exposes none.
  std::vector<WorkgroupMatrixShape> workgroup_matrix_f16;
  // The same for bf16 inputs with f32 accumulation (Vulkan: with VK_KHR_shader_bfloat16's type
  // and cooperative-matrix features enabled too).
  std::vector<WorkgroupMatrixShape> workgroup_matrix_bf16;
  std::uint64_t l2_bytes = 0;  // as the driver reports it, 0 when unknown
  // The last-level cache that a timed launch must not find warm: L2 on NVIDIA GPUs and on AMD
  // GPUs without an Infinity Cache, the Infinity Cache (MALL) where there is one (MI300: 256
  // MiB, far above its 4 MiB L2s). Never 0 once a backend opened the device: a size it cannot
  // learn is a default for its type (llc_source says which). Sizes the flush and the rotating
  // input copies (tune/backend/last_level_cache.hpp).
  std::uint64_t llc_bytes = 0;
  CacheSizeSource llc_source = CacheSizeSource::default_size;
  std::uint64_t global_memory_bytes = 0;
  double timer_resolution_ns = 1.0;  // one timestamp tick, in nanoseconds
  // Longest time (ms of device work) this device's driver holds a clock level under
  // sustained load before raising it, after lowering it while idle: timing settles the
  // clock over a window this long (TimingExpert::settle_window_ms). 0 where the clock stays
  // up (CUDA) or where nothing was measured.
  double clock_settle_ms = 0.0;
  // How long (ms of back-to-back work) this device's power management takes to bring its clock
  // to a kernel's own sustained level under a power limit: a configuration that draws more
  // power runs at a lower clock once it has run this long alone (H200: 5-6% between two
  // 8192^3 matmul tile orders after ~100 ms, visible by 25 ms; bench/RESULTS.md, `tune-lab
  // turns`). The showdown's sustained turns last twice this
  // (TimingExpert::showdown_sustain_ms). 0 where nothing draws power (CPU devices, simulated).
  double power_settle_ms = 0.0;

  // "backend|name|arch|driver": what a tuning result is valid for. Two devices with the same
  // fingerprint are expected to pick the same winners.
  std::string fingerprint() const;
  // stable_hash(fingerprint()).
  std::uint64_t fingerprint_hash() const;
  // compiler_version plus libtune's version: a change invalidates stored timings.
  std::string toolchain_fingerprint() const;
};

// 16 UUID bytes as "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lowercase hex); empty when every
// byte is zero (drivers that do not know it report zeros).
std::string format_uuid(const void* bytes16);

}  // namespace tune
