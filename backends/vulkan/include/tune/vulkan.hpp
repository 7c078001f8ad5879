// The Vulkan backend's public extras: opening with options, and backend diagnostics.
//
// Most programs open devices through tune::open_device("vulkan[:selector]") (tune/registry.hpp)
// and never include this header. It exists for code that wants the Vulkan backend explicitly
// (tests, tools) or needs its diagnostics (validation-layer messages). No Vulkan type appears
// here. The same verbs as tune/cuda.hpp and tune/hip.hpp, in namespace tune::vulkan:
// open_device, list_devices, diagnostics.
//
// Kernels for this backend are GLSL compute shaders (Language::glsl) with entry point "main":
//   - buffer arguments, in call order, are storage buffers at set 0, binding 0, 1, 2, ...;
//   - scalar arguments, in call order, are the members of one push-constant block, packed with
//     4-byte alignment for 32-bit types and 8-byte alignment for 64-bit types (std430 rules
//     for scalars), 8- and 16-bit integers widened to 32 bits;
//   - a variant may leave a buffer or every scalar unused (its uses inside `#if`): the compiler
//     drops that binding or the whole push-constant block, and the launch binds the rest;
//   - the workgroup size comes from config.launch().block through specialization constants
//     0, 1, 2: declare `layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2)
//     in;` (the macros TUNE_BLOCK_X/Y/Z hold the same values for sizing shared arrays);
//   - the variant's definitions are macros, the same list as on every backend: every config
//     parameter, then TUNE_BLOCK_X/Y/Z, TUNE_NUM_WARPS, TUNE_NUM_STAGES, ... that are set
//     (tune::definitions, tune/definitions.hpp). A config with shared_bytes is refused: Vulkan
//     has no dynamic shared memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/device.hpp"
#include "tune/registry.hpp"
#include "tune/status.hpp"

namespace tune::vulkan {

// Float atomics in one place (buffers or shared memory), each a device feature of
// VK_EXT_shader_atomic_float (the 32- and 64-bit "Atomics" and "AtomicAdd") or of
// VK_EXT_shader_atomic_float2 (the 16-bit ones and every "AtomicMinMax"): floatN is
// shader{Buffer,Shared}FloatNAtomics (atomic load, store and exchange), floatN_add
// ...FloatNAtomicAdd, floatN_min_max ...FloatNAtomicMinMax. What an application reports of its
// own VkDevice (EnabledFeatures, tune/vulkan_interop.hpp).
struct ShaderFloatAtomics {
  bool float16 = false, float16_add = false, float16_min_max = false;
  bool float32 = false, float32_add = false, float32_min_max = false;
  bool float64 = false, float64_add = false, float64_min_max = false;
};

struct OpenOptions {
  // Enables VK_LAYER_KHRONOS_validation and a debug-utils messenger that records every
  // validation message. Unset: TUNE_VULKAN_VALIDATION (a boolean, see tune/environment.hpp).
  std::optional<bool> validation;
};

// Opens a Vulkan device. `selector` is a device index (as listed by list_devices) or a
// case-insensitive substring of the device name; when empty, TUNE_VULKAN_DEVICE (same form)
// decides, else the first discrete GPU, then integrated GPU, then virtual GPU, then CPU device
// that has a compute queue with timestamps. Errors: unavailable (no loader/driver, no usable
// device, validation asked but layer missing), not_found (selector matches nothing).
// Blocking; thread-safe.
Result<std::unique_ptr<Device>> open_device(std::string_view selector = {},
                                            const OpenOptions& options = {});

// Every physical device the loader reports, in the loader's order (the index a selector uses).
Result<std::vector<DeviceListing>> list_devices();

// Backend diagnostics of a device opened by this backend.
struct Diagnostics {
  bool validation_enabled = false;
  std::uint64_t validation_errors = 0;    // messages of severity ERROR
  std::uint64_t validation_warnings = 0;  // messages of severity WARNING
  std::vector<std::string> messages;      // the first 64 messages, in order
  std::uint32_t timestamp_valid_bits = 0;
  std::uint32_t api_version = 0;  // VK_MAKE_API_VERSION encoding
  std::uint32_t vendor_id = 0, device_id = 0;
  std::string device_type;             // "discrete", "integrated", "virtual", "cpu", "other"
  std::uint64_t flush_bytes = 0;       // size of the L2-flush scratch fill
  std::uint64_t max_buffer_bytes = 0;  // largest buffer alloc() accepts
  std::uint32_t max_push_constant_bytes = 0;
  bool storage_buffer_16bit = false;      // f16 storage buffers (matmul_f16)
  bool subgroup_arithmetic = false;       // subgroupAdd & co. in compute shaders
  std::uint64_t spirv_cache_entries = 0;  // variants whose SPIR-V is kept in memory
  std::uint64_t shaderc_compiles = 0;     // shaderc invocations so far (cache misses)
  // Variants whose SPIR-V was read from the disk cache (shaderc skipped); their
  // CompiledKernel::from_binary_cache() is true.
  std::uint64_t spirv_disk_hits = 0;
  // The disk caches (see README "Environment"); empty when TUNE_CACHE=off.
  std::string spirv_cache_dir;       // one file per variant
  std::string pipeline_cache_file;   // this physical device's VkPipelineCache data
  bool disk_cache_writable = false;  // false under TUNE_CACHE=readonly (and off)
  // Bytes of stored driver data the VkPipelineCache was created with at open; 0 when there was
  // none or it was ignored (another device or driver, or a damaged file).
  std::uint64_t pipeline_cache_loaded_bytes = 0;
};
// nullopt when `dev` was not opened by the Vulkan backend. Thread-safe.
std::optional<Diagnostics> diagnostics(const Device& dev);

}  // namespace tune::vulkan
