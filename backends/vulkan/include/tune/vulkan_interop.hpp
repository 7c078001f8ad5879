// Using libtune inside a Vulkan application: a Device on the application's VkDevice and queue,
// the application's VkBuffers as tune::Buffers, and tuned dispatches recorded into the
// application's own command buffers. This header includes <vulkan/vulkan.h> (tune/vulkan.hpp
// does not).
//
//   tune::vulkan::ExternalDevice ext;
//   ext.instance = instance; ext.physical_device = gpu; ext.device = device;
//   ext.queue_family = family; ext.queue = queue;
//   ext.lock_queue = [&] { queue_mutex.lock(); };  ext.unlock_queue = [&] { queue_mutex.unlock();
//   }; auto dev = tune::vulkan::open_device(ext).value(); auto x = tune::vulkan::wrap_buffer(*dev,
//   x_buffer, 0, bytes).value(); tuner->run(*dev, {tune::ArgValue::buf(*x, tune::ElemType::f32, n),
//   ...},
//              tune::LaunchTarget::command_buffer(cmd));   // recorded into `cmd`
//   ... the application ends and submits `cmd` as usual.
//
// What libtune needs of the device (open_device checks each and names what is missing):
//   - Vulkan 1.1 or newer (the instance's apiVersion and the device's);
//   - `queue_family` has VK_QUEUE_COMPUTE_BIT and timestampValidBits > 0 (tuning times with
//     timestamp queries on that queue);
//   - optional shader features (int64, float64, int16, float16, int8, 8/16-bit storage, atomics,
//     integer dot products...) only as far as ExternalDevice::features says the application
//     enabled them: a kernel that needs another is refused when it is compiled (unavailable,
//     naming the capability or feature), as is one declaring a capability libtune does not
//     check (buffer device addresses, variable pointers...), even where the application enabled
//     its feature;
//   - buffers wrapped with wrap_buffer were created with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
//     VK_BUFFER_USAGE_TRANSFER_SRC_BIT and VK_BUFFER_USAGE_TRANSFER_DST_BIT (tuning restores
//     and zeroes buffers with copies and fills), in device memory the application bound.
// No extension is needed.
//
// What libtune creates on the device, and destroys with the tune::Device: its own command
// pool, fences, descriptor pools and sets, query pools, pipelines, pipeline layouts and
// descriptor set layouts, a pipeline cache, an L2-flush scratch buffer and staging buffers
// (its own memory allocations). It never destroys, resets or waits idle on the application's
// instance, device or queue (no vkDeviceWaitIdle, no vkQueueWaitIdle): it waits only on its
// own fences.
//
// The queue rule: libtune submits to `queue` (vkQueueSubmit) only while holding
// ExternalDevice::lock_queue .. unlock_queue, so the application serialises its own
// submissions (and vkQueueWaitIdle, vkQueuePresentKHR...) on that queue with the same lock, as
// Vulkan requires of a queue used from several threads. Every libtune command buffer begins
// with a global memory barrier, so it runs after (and sees the writes of) everything the
// application submitted to that queue before it; work on other queues is the application's to
// order (semaphores). libtune submits only while tuning and in upload/download/fill/copy/
// synchronize and run() on LaunchTarget::queue(); a call on a known key recorded into a command
// buffer submits nothing.
//
// Recording (LaunchTarget::command_buffer): run(dev, args, LaunchTarget::command_buffer(cmd))
// records into `cmd` (a primary or secondary command buffer of the application in the
// recording state, from a pool of `queue_family`): a global memory barrier (the dispatch sees
// what `cmd` recorded before it), vkCmdBindPipeline, vkCmdBindDescriptorSets (set 0),
// vkCmdPushConstants (when the kernel has scalars), vkCmdDispatch, and another global barrier
// (what `cmd` records after sees the dispatch's writes). It changes `cmd`'s bound compute
// pipeline, descriptor set 0 and push constants: rebind your own afterwards. The descriptor set
// is libtune's, one per (kernel variant, bound buffer ranges), created the first time that
// combination is recorded and kept until the tune::Device is destroyed (or the wrapped buffer's
// tune::Buffer is, for sets naming it); recording the same combination again creates nothing
// on the device. The application keeps the Autotuner, the tune::Device and the wrapped buffers
// alive until every submission of `cmd` has completed, and does not record into `cmd` from
// another thread meanwhile (Vulkan's external synchronisation of command buffers).
// A new key met while recording is tuned first on libtune's own submissions to the shared
// queue, on the buffers' contents at the time of the call (commands recorded into `cmd` before
// have not run yet): the recorded dispatch is the winner's.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "tune/device.hpp"
#include "tune/status.hpp"
#include "tune/vulkan.hpp"

namespace tune::vulkan {

// Optional shader features the application enabled when it created the VkDevice (libtune
// cannot read them back). Kernels needing one that is off are refused at compile.
struct EnabledFeatures {
  bool shader_int64 = false, shader_float64 = false, shader_int16 = false;
  bool shader_float16 = false, shader_int8 = false;  // VkPhysicalDeviceShaderFloat16Int8Features
  bool storage_buffer_16bit = false;                 // storageBuffer16BitAccess
  bool storage_buffer_8bit = false;                  // storageBuffer8BitAccess
  // vulkanMemoryModel and vulkanMemoryModelDeviceScope (Vulkan 1.2), both enabled.
  bool vulkan_memory_model = false;
  // VkPhysicalDeviceShaderAtomicInt64Features (Vulkan 1.2): shaderBufferInt64Atomics and
  // shaderSharedInt64Atomics, what a kernel's 64-bit integer atomics on buffers / on shared
  // memory need.
  bool shader_buffer_int64_atomics = false, shader_shared_int64_atomics = false;
  // VK_EXT_shader_atomic_float's and _float2's features the application enabled on buffers
  // (shaderBuffer...) and on shared memory (shaderShared...), with their extensions
  // (ShaderFloatAtomics, tune/vulkan.hpp, names the fields).
  ShaderFloatAtomics shader_buffer_float_atomics, shader_shared_float_atomics;
  // shaderIntegerDotProduct (Vulkan 1.3, or VK_KHR_shader_integer_dot_product enabled): the
  // DotProduct* capabilities (integer dot products of vectors, of four 8-bit integers, or of
  // four 8-bit integers packed in a 32-bit word).
  bool shader_integer_dot_product = false;
  // VK_NV_cooperative_matrix enabled with its cooperativeMatrix feature (the bundled
  // matmul_f16_coopmat needs it and vulkan_memory_model).
  bool cooperative_matrix_nv = false;
  // subgroupSizeControl (Vulkan 1.3): lets LaunchOptions::subgroup_size be honoured.
  bool subgroup_size_control = false;
  // maintenance4 (Vulkan 1.3): precompiled SPIR-V 1.6 modules may state their workgroup size
  // with LocalSizeId (KernelSource::spirv; the bundled matmul_f16_coopmat2 needs it).
  bool maintenance4 = false;
  // VK_KHR_cooperative_matrix enabled with its cooperativeMatrix feature.
  bool cooperative_matrix_khr = false;
  // VK_NV_cooperative_matrix2's features the application enabled (any of them: the extension
  // is enabled too, with cooperative_matrix_khr). The bundled matmul_f16_coopmat2 needs
  // workgroup_scope, flexible_dimensions and tensor_addressing, plus maintenance4,
  // vulkan_memory_model, shader_float16 and storage_buffer_16bit.
  struct CooperativeMatrix2 {
    bool workgroup_scope = false, flexible_dimensions = false, reductions = false;
    bool conversions = false, per_element_operations = false, tensor_addressing = false;
    bool block_loads = false;
    bool any() const noexcept {
      return workgroup_scope || flexible_dimensions || reductions || conversions ||
             per_element_operations || tensor_addressing || block_loads;
    }
  } cooperative_matrix2_nv;
  // VK_KHR_shader_bfloat16's features the application enabled (any of them: the extension is
  // enabled too). The bundled matmul_bf16_coopmat2 needs type and cooperative_matrix, plus what
  // matmul_f16_coopmat2 needs.
  struct ShaderBfloat16 {
    bool type = false, dot_product = false, cooperative_matrix = false;
    bool any() const noexcept { return type || dot_product || cooperative_matrix; }
  } shader_bfloat16_khr;
};

// An application's Vulkan objects, borrowed: the application creates them before open_device
// and destroys them after the tune::Device (and every Buffer and Autotuner using it).
struct ExternalDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;  // a queue of queue_family on `device`
  // The apiVersion the application created its instance with (VkApplicationInfo). libtune
  // uses the lower of it and the device's: queries, features and the SPIR-V target. 0: the
  // device's (then the instance must be at least as new, or the validation layer objects).
  std::uint32_t api_version = 0;
  EnabledFeatures features;
  // Held around every vkQueueSubmit libtune makes on `queue` (see "The queue rule" above).
  // Both set or both empty (empty: the application never uses `queue` from another thread
  // while libtune runs). Must not throw.
  std::function<void()> lock_queue, unlock_queue;
};

// A tune::Device on the application's device and queue. Errors: invalid_argument (a null
// handle, a queue family out of range, only one of lock_queue/unlock_queue), unavailable (a
// requirement above not met, naming it). Blocking (creates pools and the pipeline cache);
// thread-safe.
Result<std::unique_ptr<Device>> open_device(const ExternalDevice& external);

// The range [offset, offset + range) of an application VkBuffer of `dev`'s VkDevice as a
// tune::Buffer of `range` bytes: libtune binds, fills and copies it but never frees it.
// `offset` must be a multiple of minStorageBufferOffsetAlignment and of 4, `range` non-zero
// and at most maxStorageBufferRange. invalid_argument otherwise, or when `dev` was not opened
// by the Vulkan backend. The tune::Buffer is destroyed before the VkBuffer.
Result<Buffer> wrap_buffer(Device& dev, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize range);

// The VkDevice and VkQueue a Vulkan tune::Device uses (its own or the application's); null
// handles for another backend's device.
VkDevice native_device(const Device& dev) noexcept;
VkQueue native_queue(const Device& dev) noexcept;

}  // namespace tune::vulkan
