// libtune inside a Vulkan application (tune/vulkan_interop.hpp), for real on lavapipe: the test
// is the application. It creates its own VkInstance, VkDevice, queue, buffers and command
// buffers with raw Vulkan, opens libtune on them, wraps its buffers (one at an offset), tunes
// and records the tuned dispatch into its own command buffer between commands of its own,
// submits, reads back and compares with a CPU reference; and once more with the Khronos
// validation layer on its instance, counting the layer's errors. A recorded hit (a known key,
// buffers recorded before) allocates nothing: operator new is counted around it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "allocation_counter.hpp"
#include "interop_data.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan_interop.hpp"
#include "vulkan_test_device.hpp"
#include "watchdog.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// The GLSL of y[i] = <update> over the first n elements (x read-only; push constants a, n).
std::string update_shader(const std::string& update) {
  return R"(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; int n; };
void main() {
  uint base = gl_GlobalInvocationID.x * ELEMS;
  for (uint e = 0; e < ELEMS; ++e) {
    uint i = base + e;
    if (i < uint(n)) y[i] = )" +
         update + R"(;
  }
}
)";
}

KernelDef saxpy() {
  return saxpy_def("interop_saxpy", {Language::glsl, "main", update_shader("a * x[i] + y[i]")},
                   "ELEMS", {32, 64});
}

// Another kernel of saxpy's signature and space: y = a x - y. What it records must never be
// saxpy's (nor the reverse), whatever addresses its objects get.
KernelDef axmy() {
  return saxpy_def("interop_axmy", {Language::glsl, "main", update_shader("a * x[i] - y[i]")},
                   "ELEMS", {32, 64});
}

// CPU references of saxpy and axmy over the first n elements of y, in place.
void saxpy_reference(std::vector<float>& y, const std::vector<float>& x, float a, int n) {
  for (std::size_t i = 0; i < y.size() && i < static_cast<std::size_t>(n); ++i)
    y[i] = a * x[i] + y[i];
}
void axmy_reference(std::vector<float>& y, const std::vector<float>& x, float a, int n) {
  for (std::size_t i = 0; i < y.size() && i < static_cast<std::size_t>(n); ++i)
    y[i] = a * x[i] - y[i];
}

// A Vulkan structure with its sType set and everything else zero.
template <class T>
T vk_struct(VkStructureType type) {
  T v{};
  v.sType = type;
  return v;
}

VKAPI_ATTR VkBool32 VKAPI_CALL count_errors(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                            VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data,
                                            void* user) {
  auto* log = static_cast<std::vector<std::string>*>(user);
  if ((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0)
    log->push_back(data != nullptr && data->pMessage != nullptr ? data->pMessage : "?");
  return VK_FALSE;
}

// A host-visible buffer of the application.
struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize bytes = 0;
};

// The application: everything created with raw Vulkan, destroyed in reverse.
struct App {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice gpu = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::vector<VkCommandPool> thread_pools;  // make_pool()'s
  std::deque<AppBuffer> buffers;            // references stay valid as buffers are added
  std::vector<std::string> validation_errors;
  std::mutex queue_mu;
  int locks = 0;    // lock_queue calls by libtune
  std::string why;  // why setup failed

  bool setup(bool validation) {
    (void)kVulkanTestEnv;
    auto ai = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    ai.pApplicationName = "libtune interop test";
    ai.apiVersion = VK_API_VERSION_1_1;
    auto ici = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    ici.pApplicationInfo = &ai;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    auto mci = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    mci.pfnUserCallback = count_errors;
    mci.pUserData = &validation_errors;
    if (validation) {
      ici.enabledLayerCount = 1;
      ici.ppEnabledLayerNames = &layer;
      ici.enabledExtensionCount = 1;
      ici.ppEnabledExtensionNames = &ext;
    }
    if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) {
      why = validation ? "vkCreateInstance with the validation layer failed" : "vkCreateInstance";
      return false;
    }
    if (validation) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
      if (create == nullptr || create(instance, &mci, nullptr, &messenger) != VK_SUCCESS) {
        why = "no debug messenger";
        return false;
      }
    }
    std::uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> gpus(n);
    vkEnumeratePhysicalDevices(instance, &n, gpus.data());
    if (gpus.empty()) {
      why = "no Vulkan physical device";
      return false;
    }
    gpu = gpus.front();
    std::uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(gpu, &nq, qs.data());
    bool found = false;
    for (std::uint32_t i = 0; i < nq && !found; ++i) {
      if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qs[i].timestampValidBits > 0) {
        family = i;
        found = true;
      }
    }
    if (!found) {
      why = "no compute queue with timestamps";
      return false;
    }
    const float prio = 1.0f;
    auto qci = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    auto dci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (vkCreateDevice(gpu, &dci, nullptr, &device) != VK_SUCCESS) {
      why = "vkCreateDevice";
      return false;
    }
    vkGetDeviceQueue(device, family, 0, &queue);
    auto pci = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = family;
    if (vkCreateCommandPool(device, &pci, nullptr, &pool) != VK_SUCCESS) {
      why = "vkCreateCommandPool";
      return false;
    }
    return true;
  }

  // A host-visible, coherent storage buffer usable for transfers.
  AppBuffer& make_buffer(VkDeviceSize bytes) {
    AppBuffer b;
    b.bytes = bytes;
    auto bci = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bci.size = bytes;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    REQUIRE(vkCreateBuffer(device, &bci, nullptr, &b.buffer) == VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(gpu, &mp);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    std::uint32_t type = UINT32_MAX;
    for (std::uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
        type = i;
    REQUIRE(type != UINT32_MAX);
    auto mai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    REQUIRE(vkAllocateMemory(device, &mai, nullptr, &b.memory) == VK_SUCCESS);
    REQUIRE(vkBindBufferMemory(device, b.buffer, b.memory, 0) == VK_SUCCESS);
    REQUIRE(vkMapMemory(device, b.memory, 0, bytes, 0, &b.mapped) == VK_SUCCESS);
    buffers.push_back(b);
    return buffers.back();
  }

  // A buffer of `values.size()` floats holding `values`.
  AppBuffer& make_buffer(const std::vector<float>& values) {
    AppBuffer& b = make_buffer(values.size() * sizeof(float));
    std::memcpy(b.mapped, values.data(), b.bytes);
    return b;
  }

  vulkan::ExternalDevice external() {
    vulkan::ExternalDevice e;
    e.instance = instance;
    e.physical_device = gpu;
    e.device = device;
    e.queue_family = family;
    e.queue = queue;
    e.api_version = VK_API_VERSION_1_1;
    e.lock_queue = [this] {
      queue_mu.lock();
      ++locks;
    };
    e.unlock_queue = [this] { queue_mu.unlock(); };
    return e;
  }

  // Another command pool: a pool (and its command buffers) is recorded by one thread at a
  // time, so each recording thread has its own. Destroyed with the application.
  VkCommandPool make_pool() {
    auto pci = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = family;
    VkCommandPool p = VK_NULL_HANDLE;
    REQUIRE(vkCreateCommandPool(device, &pci, nullptr, &p) == VK_SUCCESS);
    thread_pools.push_back(p);
    return p;
  }

  // A command buffer of `from` (default: the application's pool), begun.
  VkCommandBuffer begin(VkCommandPool from = VK_NULL_HANDLE) {
    auto cai =
        vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    cai.commandPool = from != VK_NULL_HANDLE ? from : pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    REQUIRE(vkAllocateCommandBuffers(device, &cai, &cb) == VK_SUCCESS);
    auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    REQUIRE(vkBeginCommandBuffer(cb, &bi) == VK_SUCCESS);
    return cb;
  }

  // Ends, submits (under the queue lock), waits, frees (back to `from`, as begin()).
  void submit_and_wait(VkCommandBuffer cb, VkCommandPool from = VK_NULL_HANDLE) {
    auto host = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    host.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &host, 0, nullptr, 0, nullptr);
    REQUIRE(vkEndCommandBuffer(cb) == VK_SUCCESS);
    auto fci = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkFence fence = VK_NULL_HANDLE;
    REQUIRE(vkCreateFence(device, &fci, nullptr, &fence) == VK_SUCCESS);
    auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    {
      std::lock_guard lock(queue_mu);
      REQUIRE(vkQueueSubmit(queue, 1, &si, fence) == VK_SUCCESS);
    }
    REQUIRE(vkWaitForFences(device, 1, &fence, VK_TRUE, 60'000'000'000ull) == VK_SUCCESS);
    vkDestroyFence(device, fence, nullptr);
    vkFreeCommandBuffers(device, from != VK_NULL_HANDLE ? from : pool, 1, &cb);
  }

  ~App() {
    if (device != VK_NULL_HANDLE) {
      vkDeviceWaitIdle(device);
      for (auto& b : buffers) {
        vkDestroyBuffer(device, b.buffer, nullptr);
        vkFreeMemory(device, b.memory, nullptr);
      }
      for (VkCommandPool p : thread_pools) vkDestroyCommandPool(device, p, nullptr);
      if (pool != VK_NULL_HANDLE) vkDestroyCommandPool(device, pool, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    if (messenger != VK_NULL_HANDLE) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
      if (destroy != nullptr) destroy(instance, messenger, nullptr);
    }
    if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
  }
};

void check_close(const float* got, const std::vector<float>& want) {
  const std::string bad = mismatches(got, want);
  CHECK_MESSAGE(bad.empty(), bad);
}

// The whole application flow; `validation` puts the Khronos layer on the application's
// instance and checks that it reports no error.
void application_flow(bool validation) {
  App app;
  if (!app.setup(validation)) skip_or_fail_without_vulkan("application setup: " + app.why);
  constexpr int n = 3000;
  constexpr VkDeviceSize bytes = n * sizeof(float);
  constexpr VkDeviceSize y_offset = 256;  // y lives inside a larger buffer
  AppBuffer& x = app.make_buffer(bytes);
  AppBuffer& x_next = app.make_buffer(bytes);  // copied into x by the application's commands
  AppBuffer& y_big = app.make_buffer(y_offset + bytes + 64);
  AppBuffer& z = app.make_buffer(bytes);  // the application copies y here after the dispatch
  const auto x0 = random_floats(n, 1), x1 = random_floats(n, 2), y0 = random_floats(n, 3);
  std::memcpy(x.mapped, x0.data(), bytes);
  std::memcpy(x_next.mapped, x1.data(), bytes);
  auto* y_host = reinterpret_cast<float*>(static_cast<char*>(y_big.mapped) + y_offset);
  std::memcpy(y_host, y0.data(), bytes);
  const float a = 1.5f;

  auto opened = vulkan::open_device(app.external());
  REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
  auto dev = std::move(*opened);
  CHECK(vulkan::native_device(*dev) == app.device);
  CHECK(vulkan::native_queue(*dev) == app.queue);
  {
    auto bx = vulkan::wrap_buffer(*dev, x.buffer, 0, bytes);
    auto by = vulkan::wrap_buffer(*dev, y_big.buffer, y_offset, bytes);
    REQUIRE(bx.ok());
    REQUIRE_MESSAGE(by.ok(), by.status().to_string());
    auto tuner = Autotuner::make(saxpy(), interop_options());
    REQUIRE(tuner.ok());
    std::vector<ArgValue> args = {ArgValue::buf(**bx, ElemType::f32, n),
                                  ArgValue::buf(**by, ElemType::f32, n), a, n};

    // 1. A new key recorded into the application's command buffer: libtune tunes on its own
    // submissions (under the queue lock), then records the winner between a copy x_next -> x
    // and a copy y -> z of the application's.
    VkCommandBuffer cb = app.begin();
    VkBufferCopy cx{0, 0, bytes};
    vkCmdCopyBuffer(cb, x_next.buffer, x.buffer, 1, &cx);
    const int locks_before = app.locks;
    Status st = (*tuner)->run(*dev, args, LaunchTarget::command_buffer(cb));
    REQUIRE_MESSAGE(st.ok(), st.to_string());
    CHECK(app.locks > locks_before);  // tuning submitted, under the application's lock
    REQUIRE((*tuner)->best(*dev, args).has_value());
    // Tuning left y as it found it (restore_value); x is not yet copied.
    REQUIRE(dev->synchronize().ok());  // libtune's last restore has run
    CHECK(std::memcmp(y_host, y0.data(), bytes) == 0);
    VkBufferCopy cy{y_offset, 0, bytes};
    vkCmdCopyBuffer(cb, y_big.buffer, z.buffer, 1, &cy);
    app.submit_and_wait(cb);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = a * x1[i] + y0[i];
    check_close(y_host, want);
    check_close(static_cast<const float*>(z.mapped), want);

    // 2. The key is known: recording submits nothing (no lock taken), twice into one buffer.
    const int locks_hit = app.locks;
    cb = app.begin();
    REQUIRE((*tuner)->run(*dev, args, LaunchTarget::command_buffer(cb)).ok());
    REQUIRE((*tuner)->run(*dev, args, LaunchTarget::command_buffer(cb)).ok());
    CHECK(app.locks == locks_hit);
    app.submit_and_wait(cb);
    for (int i = 0; i < n; ++i) {
      auto& w = want[static_cast<std::size_t>(i)];
      w = a * x1[i] + w;
      w = a * x1[i] + w;
    }
    check_close(y_host, want);

    // 3. run() on libtune's own queue with the wrapped buffers, and a download through the
    // offset: the same answer.
    REQUIRE((*tuner)->run(*dev, args).ok());
    for (int i = 0; i < n; ++i)
      want[static_cast<std::size_t>(i)] = a * x1[i] + want[static_cast<std::size_t>(i)];
    std::vector<float> got(n);
    REQUIRE(dev->download(**by, got.data(), bytes).ok());
    check_close(got.data(), want);
    check_close(y_host, want);

    // A stream is CUDA/HIP's: refused with the reason.
    int dummy = 0;
    Status s2 = (*tuner)->run(*dev, args, LaunchTarget::stream(&dummy));
    CHECK(s2.code() == StatusCode::unavailable);
  }
  dev.reset();
  // The application's device and queue still work after libtune is gone.
  VkCommandBuffer cb = app.begin();
  vkCmdFillBuffer(cb, z.buffer, 0, bytes, 0);
  app.submit_and_wait(cb);
  CHECK(static_cast<const float*>(z.mapped)[0] == 0.0f);
  if (validation) {
    for (const auto& m : app.validation_errors) MESSAGE(m);
    CHECK(app.validation_errors.empty());
  }
}

}  // namespace

TEST_CASE("interop: tune and record into the application's command buffer on its device") {
  application_flow(false);
}

TEST_CASE("interop: the same under the application's validation layer, no error") {
  application_flow(true);
}

TEST_CASE("interop: open_device and wrap_buffer refuse what they cannot use, naming it") {
  App app;
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  auto e = app.external();
  e.device = VK_NULL_HANDLE;
  auto r = vulkan::open_device(e);
  CHECK(r.status().code() == StatusCode::invalid_argument);
  e = app.external();
  e.queue_family = 99;
  r = vulkan::open_device(e);
  CHECK(r.status().code() == StatusCode::invalid_argument);
  CHECK(r.status().message().find("queue family 99") != std::string::npos);
  e = app.external();
  e.unlock_queue = nullptr;
  CHECK(vulkan::open_device(e).status().code() == StatusCode::invalid_argument);
  e = app.external();
  e.api_version = VK_API_VERSION_1_0;
  r = vulkan::open_device(e);
  CHECK(r.status().code() == StatusCode::unavailable);
  CHECK(r.status().message().find("1.1") != std::string::npos);

  auto dev = vulkan::open_device(app.external());
  REQUIRE(dev.ok());
  AppBuffer& b = app.make_buffer(4096);
  CHECK(vulkan::wrap_buffer(**dev, b.buffer, 2, 64).status().code() ==
        StatusCode::invalid_argument);
  CHECK(vulkan::wrap_buffer(**dev, b.buffer, 0, 0).status().code() == StatusCode::invalid_argument);
  CHECK(vulkan::wrap_buffer(**dev, VK_NULL_HANDLE, 0, 64).status().code() ==
        StatusCode::invalid_argument);
  // A wrapped buffer works with the Device verbs and is never freed by libtune.
  {
    auto w = vulkan::wrap_buffer(**dev, b.buffer, 0, 4096);
    REQUIRE(w.ok());
    REQUIRE((*dev)->fill(**w, 0x3f800000u, 4096).ok());  // 1.0f
    REQUIRE((*dev)->synchronize().ok());
  }
  CHECK(static_cast<const float*>(b.mapped)[1023] == 1.0f);
}

TEST_CASE("interop: the application's Vulkan version decides the SPIR-V its device takes") {
  App app;  // a Vulkan 1.1 instance and device, no optional feature
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  auto e = app.external();
  // Claimed but not there (or not allowed at Vulkan 1.1): nothing is taken on trust.
  e.features.maintenance4 = e.features.cooperative_matrix_khr = true;
  e.features.cooperative_matrix2_nv = {true, true, true, true, true, true, true};
  e.features.shader_bfloat16_khr = {true, true, true};
  auto dev = vulkan::open_device(e);
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  CHECK((*dev)->info().workgroup_matrix_f16.empty());
  CHECK((*dev)->info().workgroup_matrix_bf16.empty());
  // The bundled coopmat2 kernels are SPIR-V 1.6; Vulkan 1.1 consumes SPIR-V 1.3 at most.
  for (const char* name : {"matmul_f16_coopmat2", "matmul_bf16_coopmat2"}) {
    CAPTURE(name);
    const auto k = kernels::bundled_kernel(Language::glsl, name);
    REQUIRE(k.has_value());
    auto ck = (*dev)->compile(*k->def.source_for(Language::glsl), k->default_config);
    REQUIRE_FALSE(ck.ok());
    CHECK(ck.status().code() == StatusCode::invalid_argument);
    CHECK_MESSAGE(ck.status().message().find("SPIR-V 1.6; this device takes 1.3 at most") !=
                      std::string::npos,
                  ck.status().to_string());
  }
}

// Float atomics: the application's device enabled none (nor VK_EXT_shader_atomic_float), so a
// kernel using them is refused naming the capability, though the physical device has it
// (lavapipe does); vulkan_feature_mask_test.cpp covers each field of EnabledFeatures.
TEST_CASE("interop: float atomics only as far as the application enabled them") {
  App app;  // a Vulkan 1.1 instance and device, no optional feature
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  auto dev = vulkan::open_device(app.external());
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  KernelSource src;
  src.language = Language::glsl;
  src.entry = "main";
  src.text = R"(#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer T { float total; };
void main() { atomicAdd(total, 1.0); }
)";
  Config c;
  c.launch().block = {64, 1, 1};
  auto k = (*dev)->compile(src, c);
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == StatusCode::unavailable);
  CHECK_MESSAGE(
      k.status().message().find(
          "needs SPIR-V capability AtomicFloat32AddEXT (VK_EXT_shader_atomic_float), which ") !=
          std::string::npos,
      k.status().to_string());
}

#ifndef TUNE_TEST_SANITIZED
TEST_CASE("interop: a recorded hit with buffers recorded before allocates nothing") {
  App app;
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  constexpr int n = 1000;
  constexpr VkDeviceSize bytes = n * sizeof(float);
  constexpr int kHits = 50;
  const auto x0 = random_floats(n, 21), y0 = random_floats(n, 22);
  AppBuffer& x = app.make_buffer(x0);
  AppBuffer& y = app.make_buffer(y0);
  const float a = 0.5f;
  auto dev = vulkan::open_device(app.external());
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  {
    auto bx = vulkan::wrap_buffer(**dev, x.buffer, 0, bytes).value();
    auto by = vulkan::wrap_buffer(**dev, y.buffer, 0, bytes).value();
    auto tuner = Autotuner::make(saxpy(), interop_options()).value();
    const std::vector<ArgValue> args = {ArgValue::buf(*bx, ElemType::f32, n),
                                        ArgValue::buf(*by, ElemType::f32, n), a, n};
    VkCommandBuffer cb = app.begin();
    const LaunchTarget target = LaunchTarget::command_buffer(cb);
    // Tuned, then recorded; a first hit records with these buffers too. Both may allocate.
    REQUIRE(tuner->run(**dev, args, target).ok());
    REQUIRE(tuner->run(**dev, args, target).ok());
    bool all_ok = true;
    const std::size_t allocations = allocations_of([&] {
      for (int i = 0; i < kHits; ++i) all_ok &= tuner->run(**dev, args, target).ok();
    });
    CHECK(all_ok);
    CHECK_MESSAGE(allocations == 0, allocations << " allocations in " << kHits << " recorded hits");
    app.submit_and_wait(cb);
    // Every recorded dispatch ran, in order: y = a x + y, 2 + kHits times.
    std::vector<float> want = y0;
    for (int rep = 0; rep < 2 + kHits; ++rep)
      for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] += a * x0[i];
    check_close(static_cast<const float*>(y.mapped), want);
  }
}
#endif

// The backend remembers each thread's last recorded dispatch (backends/vulkan/src/
// recorded_memo.hpp) and skips binding when a recording repeats it. A changed scalar, and a
// wrapped buffer destroyed and replaced by another (whose wrapper may get the same address),
// must each be recorded as they are: checked on the results.
TEST_CASE("interop: repeated recordings follow changed scalars and replaced buffers") {
  App app;
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  constexpr int n = 1000;
  constexpr VkDeviceSize bytes = n * sizeof(float);
  const auto x0 = random_floats(n, 31), y10 = random_floats(n, 32), y20 = random_floats(n, 33);
  AppBuffer& x = app.make_buffer(x0);
  AppBuffer& y1 = app.make_buffer(y10);
  AppBuffer& y2 = app.make_buffer(y20);
  auto dev = vulkan::open_device(app.external());
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  {
    auto bx = vulkan::wrap_buffer(**dev, x.buffer, 0, bytes).value();
    auto by = vulkan::wrap_buffer(**dev, y1.buffer, 0, bytes).value();
    auto tuner = Autotuner::make(saxpy(), interop_options()).value();
    auto args = [&](Buffer& y, float a) {
      return std::vector<ArgValue>{ArgValue::buf(*bx, ElemType::f32, n),
                                   ArgValue::buf(*y, ElemType::f32, n), a, n};
    };
    // 1. Tuned (a = 0.5), then hits: 0.5 twice more, 2.0 (a changed scalar), 0.5 again.
    VkCommandBuffer cb = app.begin();
    const LaunchTarget target = LaunchTarget::command_buffer(cb);
    for (float a : {0.5f, 0.5f, 0.5f, 2.0f, 0.5f})
      REQUIRE(tuner->run(**dev, args(by, a), target).ok());
    app.submit_and_wait(cb);
    std::vector<float> want1 = y10;
    for (int i = 0; i < n; ++i) want1[static_cast<std::size_t>(i)] += 4.0f * x0[i];
    check_close(static_cast<const float*>(y1.mapped), want1);
    // 2. The same call with y1's wrapper destroyed and y2 wrapped in its place.
    // The allocator usually hands the freed wrapper's block to the next one; wrappers that land
    // elsewhere are kept alive (spares) until one does, so the case the memo must catch occurs.
    const void* old_address = by.get();
    by.reset();
    std::vector<Buffer> spares;
    for (int i = 0; i < 64 && !by; ++i) {
      auto w = vulkan::wrap_buffer(**dev, y2.buffer, 0, bytes).value();
      if (w.get() == old_address)
        by = std::move(w);
      else
        spares.push_back(std::move(w));
    }
    const bool reused = by != nullptr;
    if (!reused) by = std::move(spares.back());
    MESSAGE(
        "a new wrapper got the destroyed one's address: " << std::string(reused ? "yes" : "no"));
    cb = app.begin();
    const LaunchTarget target2 = LaunchTarget::command_buffer(cb);
    REQUIRE(tuner->run(**dev, args(by, 0.5f), target2).ok());
    REQUIRE(tuner->run(**dev, args(by, 0.5f), target2).ok());
    app.submit_and_wait(cb);
    std::vector<float> want2 = y20;
    for (int i = 0; i < n; ++i) want2[static_cast<std::size_t>(i)] += 1.0f * x0[i];
    check_close(static_cast<const float*>(y2.mapped), want2);
    check_close(static_cast<const float*>(y1.mapped), want1);  // untouched since
  }
}

// 8 threads record into their own command buffers at once through one Autotuner and device:
// a key every thread uses and keys a few share, each recorded twice in a row (the second a
// recording the backend's per-thread memo repeats), the scalar changing every round. Each
// thread's y is checked against the CPU reference of every dispatch it recorded.
TEST_CASE("interop: 8 threads recording shared and own keys each get their own dispatches") {
  App app;
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  constexpr int kThreads = 8, kRounds = 6, kLen = 12000;
  constexpr VkDeviceSize bytes = kLen * sizeof(float);
  constexpr int kShared = 1000;  // key 1024 (pow2), every thread's
  const auto x0 = random_floats(kLen, 41);
  AppBuffer& x = app.make_buffer(x0);
  struct Caller {
    AppBuffer* y = nullptr;
    std::vector<float> want;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE;
    Buffer wrapped;
    std::string failure;
  };
  std::vector<Caller> callers(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    Caller& c = callers[static_cast<std::size_t>(t)];
    c.want = random_floats(kLen, 50 + static_cast<std::uint32_t>(t));
    c.y = &app.make_buffer(c.want);
  }
  auto dev = vulkan::open_device(app.external());
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  {
    auto bx = vulkan::wrap_buffer(**dev, x.buffer, 0, bytes).value();
    for (auto& c : callers) {
      c.wrapped = vulkan::wrap_buffer(**dev, c.y->buffer, 0, bytes).value();
      c.pool = app.make_pool();
      c.cb = app.begin(c.pool);  // begun here, recorded by its thread, submitted here
    }
    auto tuner = Autotuner::make(saxpy(), interop_options()).value();
    {
      Watchdog watchdog("8 threads recording through the recorded-dispatch memo", 300);
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          Caller& c = callers[static_cast<std::size_t>(t)];
          // Threads t, t + 3 and t + 6 share their own key: 4096, 8192 or 16384 (pow2).
          const int own = 3000 << (t % 3);
          const LaunchTarget target = LaunchTarget::command_buffer(c.cb);
          for (int r = 0; r < kRounds && c.failure.empty(); ++r) {
            const float a = r % 2 == 0 ? 0.5f : 0.25f;  // exact products: bitwise references
            for (int n : {kShared, kShared, own, own}) {
              const std::vector<ArgValue> args = {ArgValue::buf(*bx, ElemType::f32, kLen),
                                                  ArgValue::buf(*c.wrapped, ElemType::f32, kLen), a,
                                                  n};
              Status st = tuner->run(**dev, args, target);
              if (!st.ok()) {
                c.failure = "round " + std::to_string(r) + ", n " + std::to_string(n) + ": " +
                            st.to_string();
                break;
              }
              saxpy_reference(c.want, x0, a, n);
            }
          }
        });
      }
    }
    for (int t = 0; t < kThreads; ++t) {
      Caller& c = callers[static_cast<std::size_t>(t)];
      CAPTURE(t);
      CHECK_MESSAGE(c.failure.empty(), c.failure);
      app.submit_and_wait(c.cb, c.pool);
      check_close(static_cast<const float*>(c.y->mapped), c.want);
    }
    for (auto& c : callers) c.wrapped.reset();  // before the device
  }
}

// The memo names kernels and devices by address. A kernel destroyed with its Autotuner and
// another kernel of the same signature made after it, and a device closed and opened again on
// the same application device (with new wrappers of the same buffers), may each get the old
// one's address: every recording must still be that of the kernel and device it was made
// with, checked on the results.
TEST_CASE("interop: kernels and a device re-created at reused addresses record their own") {
  App app;
  if (!app.setup(false)) skip_or_fail_without_vulkan("application setup: " + app.why);
  constexpr int n = 1000;
  constexpr VkDeviceSize bytes = n * sizeof(float);
  const auto x0 = random_floats(n, 61);
  std::vector<float> want = random_floats(n, 62);
  AppBuffer& x = app.make_buffer(x0);
  AppBuffer& y = app.make_buffer(want);
  const void* last_device = nullptr;
  bool device_reused = false;
  for (int round = 0; round < 4 && !device_reused; ++round) {
    CAPTURE(round);
    auto dev = vulkan::open_device(app.external());
    REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
    device_reused = dev->get() == last_device;
    last_device = dev->get();
    auto bx = vulkan::wrap_buffer(**dev, x.buffer, 0, bytes).value();
    auto by = vulkan::wrap_buffer(**dev, y.buffer, 0, bytes).value();
    const std::vector<ArgValue> args = {ArgValue::buf(*bx, ElemType::f32, n),
                                        ArgValue::buf(*by, ElemType::f32, n), 0.5f, n};
    // saxpy recorded twice (tuned, then a repeat the memo remembers), its Autotuner and
    // kernels destroyed; then axmy, a new kernel that may land where saxpy's was, the same way.
    for (bool plus : {true, false}) {
      CAPTURE(plus);
      auto tuner = Autotuner::make(plus ? saxpy() : axmy(), interop_options()).value();
      VkCommandBuffer cb = app.begin();
      const LaunchTarget target = LaunchTarget::command_buffer(cb);
      for (int i = 0; i < 2; ++i) {
        REQUIRE(tuner->run(**dev, args, target).ok());
        (plus ? saxpy_reference : axmy_reference)(want, x0, 0.5f, n);
      }
      app.submit_and_wait(cb);
      check_close(static_cast<const float*>(y.mapped), want);
    }
    // Wrappers, then the device, closed: the next round's may get their addresses.
  }
  MESSAGE("a device opened again got the closed one's address: "
          << std::string(device_reused ? "yes" : "no"));
}
