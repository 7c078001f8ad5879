// libtune inside a Vulkan application: the program creates its own instance (with the Khronos
// validation layer when installed), device, queue, buffers and command buffer; libtune is
// opened on them, uses the program's buffers (one at an offset inside a larger buffer), tunes a
// kernel once, then records the tuned dispatch into the program's command buffer between the
// program's own commands. The program submits and checks the result against a CPU reference.
// Exits 77 (CTest: skipped) without a Vulkan device, 1 on a wrong result or any validation
// error or warning. Built by CI as an installed-package consumer and run on lavapipe.
#include <vulkan/vulkan.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tune/tune.hpp>
#include <tune/vulkan_interop.hpp>

// y = a * x + y, ELEMS elements per invocation; the workgroup size and ELEMS are tuned.
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

#define CHECK_VK(call)                                    \
  do {                                                    \
    if (VkResult r_ = (call); r_ != VK_SUCCESS) {         \
      std::printf("%s failed: VkResult %d\n", #call, r_); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)

// Validation errors and warnings, printed as they come; any makes the program fail.
static int g_validation_messages = 0;
static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                    VkDebugUtilsMessageTypeFlagsEXT,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* m,
                                                    void*) {
  ++g_validation_messages;
  std::printf("validation: %s\n", m->pMessage);
  return VK_FALSE;
}

static tune::KernelDef saxpy_kernel() {
  using namespace tune;
  KernelDef k;
  k.name = "vulkan_app_saxpy";
  k.sources = {{Language::glsl, "main", kSaxpy}};
  k.signature.buffer("x", ElemType::f32)
      .buffer("y", ElemType::f32)
      .scalar("a", ElemType::f32)
      .scalar("n", ElemType::i32);
  k.space.param("block.x", {32, 64, 128}).param("ELEMS", {1, 2, 4});
  k.key = {KeySpec::pow2("n")};
  k.restore_value = {"y"};  // tuning runs saxpy many times in place: y is put back each time
  k.dims = [](const Config& c, ArgList args) {
    const auto n = static_cast<std::uint64_t>(args[3].as_int());
    const std::uint64_t per_group =
        c.launch().block.x * static_cast<std::uint64_t>(c.get_int("ELEMS"));
    return LaunchDims{
        {static_cast<std::uint32_t>((n + per_group - 1) / per_group), 1, 1}, c.launch().block, 0};
  };
  return k;
}

// A host-visible VkBuffer usable as a storage buffer and for transfers (what libtune needs of
// a buffer it tunes on: it restores y with copies).
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  float* data = nullptr;
};
static HostBuffer make_buffer(VkPhysicalDevice gpu, VkDevice device, VkDeviceSize bytes) {
  HostBuffer b;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  CHECK_VK(vkCreateBuffer(device, &bci, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(gpu, &mp);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = UINT32_MAX;
  for (std::uint32_t i = 0; i < mp.memoryTypeCount && mai.memoryTypeIndex == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
      mai.memoryTypeIndex = i;
  CHECK_VK(vkAllocateMemory(device, &mai, nullptr, &b.memory));
  CHECK_VK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
  CHECK_VK(vkMapMemory(device, b.memory, 0, bytes, 0, reinterpret_cast<void**>(&b.data)));
  return b;
}

// A barrier on a buffer range between two commands of the command buffer.
static void barrier(VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                    VkPipelineStageFlags src_stage, VkAccessFlags src,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkBufferMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  b.srcAccessMask = src;
  b.dstAccessMask = dst;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.buffer = buffer;
  b.offset = offset;
  b.size = size;
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, nullptr, 1, &b, 0, nullptr);
}

int main() {
  // The instance, with the validation layer and a messenger when the layer is installed.
  std::uint32_t nlayers = 0;
  vkEnumerateInstanceLayerProperties(&nlayers, nullptr);
  std::vector<VkLayerProperties> layers(nlayers);
  vkEnumerateInstanceLayerProperties(&nlayers, layers.data());
  bool validation = false;
  for (const auto& l : layers)
    validation |= std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkApplicationInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  ai.pApplicationName = "libtune vulkan_app";
  ai.apiVersion = VK_API_VERSION_1_1;  // libtune needs 1.1
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &ai;
  ici.enabledLayerCount = validation ? 1 : 0;
  ici.ppEnabledLayerNames = &layer;
  ici.enabledExtensionCount = validation ? 1 : 0;
  ici.ppEnabledExtensionNames = &debug_ext;
  VkInstance instance = VK_NULL_HANDLE;
  if (VkResult r = vkCreateInstance(&ici, nullptr, &instance); r != VK_SUCCESS) {
    std::printf("skipped: no Vulkan driver (vkCreateInstance: VkResult %d)\n", r);
    return 77;
  }
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT mci{};
    mci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    mci.pfnUserCallback = on_validation;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    CHECK_VK(create(instance, &mci, nullptr, &messenger));
  }
  std::printf("validation layer: %s\n", validation ? "on" : "not installed");

  // A physical device with a compute queue family that has timestamps (libtune times with them).
  std::uint32_t ngpus = 0;
  vkEnumeratePhysicalDevices(instance, &ngpus, nullptr);
  std::vector<VkPhysicalDevice> gpus(ngpus);
  vkEnumeratePhysicalDevices(instance, &ngpus, gpus.data());
  VkPhysicalDevice gpu = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  for (VkPhysicalDevice g : gpus) {
    std::uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(g, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(g, &nq, qs.data());
    for (std::uint32_t i = 0; i < nq && gpu == VK_NULL_HANDLE; ++i) {
      if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qs[i].timestampValidBits > 0)
        gpu = g, family = i;
    }
  }
  if (gpu == VK_NULL_HANDLE) {
    std::printf("skipped: no Vulkan device with a compute queue with timestamps\n");
    return 77;
  }

  // The device, its queue and a command pool of the application.
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkDevice device = VK_NULL_HANDLE;
  CHECK_VK(vkCreateDevice(gpu, &dci, nullptr, &device));
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  CHECK_VK(vkCreateCommandPool(device, &pci, nullptr, &pool));

  // The application's buffers: x, y at an offset inside a larger buffer (256 is a multiple of
  // every device's minStorageBufferOffsetAlignment), and `out`, where it copies the result.
  const int n = 100000;
  const float a = 0.75f, fill = 2.0f;
  const VkDeviceSize bytes = n * sizeof(float), y_offset = 256;
  HostBuffer x = make_buffer(gpu, device, bytes);
  HostBuffer y_big = make_buffer(gpu, device, y_offset + bytes);
  HostBuffer out = make_buffer(gpu, device, bytes);
  float* y = y_big.data + y_offset / sizeof(float);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x0(n), y0(n);
  for (int i = 0; i < n; ++i) x0[i] = u(rng), y0[i] = u(rng);
  std::memcpy(x.data, x0.data(), bytes);
  std::memcpy(y, y0.data(), bytes);

  VkCommandBuffer cb = VK_NULL_HANDLE;
  {
    // libtune on the application's objects. The queue is used from this thread only, so no
    // lock is given (see ExternalDevice::lock_queue for a queue shared between threads).
    tune::vulkan::ExternalDevice ext;
    ext.instance = instance;
    ext.physical_device = gpu;
    ext.device = device;
    ext.queue_family = family;
    ext.queue = queue;
    ext.api_version = VK_API_VERSION_1_1;  // what the instance was created with
    auto dev = tune::vulkan::open_device(ext);
    if (!dev.ok()) {
      std::printf("tune::vulkan::open_device: %s\n", dev.status().to_string().c_str());
      return 1;
    }
    auto bx = tune::vulkan::wrap_buffer(**dev, x.buffer, 0, bytes).value();
    auto by = tune::vulkan::wrap_buffer(**dev, y_big.buffer, y_offset, bytes).value();
    tune::AutotunerOptions opts;
    opts.persistent = false;   // keep this example's results in memory only
    opts.bench.warmup_ms = 2;  // short timing budgets: CI runs this on a CPU driver (lavapipe)
    opts.bench.rep_ms = 10;
    auto tuner = tune::Autotuner::make(saxpy_kernel(), opts).value();
    tune::ArgValue args[] = {tune::ArgValue::buf(*bx, tune::ElemType::f32, n),
                             tune::ArgValue::buf(*by, tune::ElemType::f32, n), a, n};

    // Tune once, on libtune's own submissions (y is restored after every trial).
    auto best = tuner->tune(**dev, args);
    if (!best.ok()) {
      std::printf("tune: %s\n", best.status().to_string().c_str());
      return 1;
    }

    // The application's command buffer: its fill of x's first half, libtune's tuned dispatch,
    // its copy of y to `out`.
    VkCommandBufferAllocateInfo cai{};
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    CHECK_VK(vkAllocateCommandBuffers(device, &cai, &cb));
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_VK(vkBeginCommandBuffer(cb, &begin));
    std::uint32_t fill_bits = 0;
    std::memcpy(&fill_bits, &fill, 4);
    vkCmdFillBuffer(cb, x.buffer, 0, bytes / 2, fill_bits);
    barrier(cb, x.buffer, 0, bytes, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    if (auto st = tuner->run(**dev, args, tune::LaunchTarget::command_buffer(cb)); !st.ok()) {
      std::printf("run: %s\n", st.to_string().c_str());
      return 1;
    }
    barrier(cb, y_big.buffer, y_offset, bytes, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy copy{y_offset, 0, bytes};
    vkCmdCopyBuffer(cb, y_big.buffer, out.buffer, 1, &copy);
    barrier(cb, out.buffer, 0, bytes, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    CHECK_VK(vkEndCommandBuffer(cb));

    // Submit and wait. libtune's objects (tuner, device, wrapped buffers) stay alive until the
    // submission has completed.
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence = VK_NULL_HANDLE;
    CHECK_VK(vkCreateFence(device, &fci, nullptr, &fence));
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    CHECK_VK(vkQueueSubmit(queue, 1, &si, fence));
    CHECK_VK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
    vkDestroyFence(device, fence, nullptr);
    std::printf("saxpy on %s, the application's command buffer: best config {%s}\n",
                (*dev)->info().name.c_str(), best->to_string().c_str());
  }  // the tuner, the wrapped buffers and libtune's device go before the application's objects

  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    const float want = a * (i < n / 2 ? fill : x0[i]) + y0[i];
    if (!(std::fabs(out.data[i] - want) <= 1e-5f * (1 + std::fabs(want))) && wrong++ == 0)
      std::printf("wrong result at %d: %g, expected %g\n", i, out.data[i], want);
  }

  vkFreeCommandBuffers(device, pool, 1, &cb);
  for (HostBuffer* b : {&x, &y_big, &out}) {
    vkDestroyBuffer(device, b->buffer, nullptr);
    vkFreeMemory(device, b->memory, nullptr);
  }
  vkDestroyCommandPool(device, pool, nullptr);
  vkDestroyDevice(device, nullptr);
  if (messenger != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance, messenger, nullptr);
  }
  vkDestroyInstance(instance, nullptr);
  if (wrong > 0 || g_validation_messages > 0) {
    std::printf("FAILED: %d wrong results, %d validation messages\n", wrong, g_validation_messages);
    return 1;
  }
  std::printf("output verified, no validation message\n");
  return 0;
}
