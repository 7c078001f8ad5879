#include "vk_instance.hpp"

#include <algorithm>
#include <cstring>

#include "tune/log.hpp"
#include "vk_status.hpp"

namespace tune::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT /*types*/,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  const bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  std::string text = std::string(error ? "validation error: " : "validation warning: ") +
                     (data != nullptr && data->pMessage != nullptr ? data->pMessage : "");
  {
    std::lock_guard<std::mutex> lock(log->mu);
    (error ? log->errors : log->warnings) += 1;
    if (log->messages.size() < 64) log->messages.push_back(text);
  }
  tune::log(error ? LogLevel::error : LogLevel::warning, "vulkan: " + text);
  return VK_FALSE;
}

// The loader unloads the drivers (dlclose) when a process's last VkInstance is destroyed and
// loads them again for the next one. NVIDIA's driver (580.159 on the H200) does not survive
// many such cycles: after a few dozen devices opened and closed in turn, the loader reports
// "Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr' for ICD
// libGLX_nvidia.so.0" and no instance can be created any more. One plain instance is
// therefore created on first use and kept for the life of the process (never destroyed, on
// purpose), so the drivers stay loaded. If it cannot be created, nothing is kept and the
// caller's own vkCreateInstance reports why.
void keep_drivers_loaded(std::uint32_t api_version) {
  static std::mutex mu;
  static VkInstance anchor = VK_NULL_HANDLE;
  std::lock_guard<std::mutex> lock(mu);
  if (anchor != VK_NULL_HANDLE) return;
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "libtune (keeps the Vulkan drivers loaded)";
  app.pEngineName = "libtune";
  app.apiVersion = api_version;
  auto ici = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ici.pApplicationInfo = &app;
  if (vkCreateInstance(&ici, nullptr, &anchor) != VK_SUCCESS) anchor = VK_NULL_HANDLE;
}

Status check_validation_layer() {
  std::uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> props(n);
  vkEnumerateInstanceLayerProperties(&n, props.data());
  const bool found = std::any_of(props.begin(), props.end(), [](const VkLayerProperties& p) {
    return std::strcmp(p.layerName, kValidationLayer) == 0;
  });
  if (found) return Status::ok_status();
  return Status(StatusCode::unavailable,
                std::string("validation was requested but ") + kValidationLayer +
                    " is not installed (apt-get install vulkan-validationlayers)");
}

Result<std::uint32_t> loader_api_version() {
  std::uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS)
    loader_version = VK_API_VERSION_1_0;
  if (loader_version < VK_API_VERSION_1_1) {
    return Status(StatusCode::unavailable,
                  "the Vulkan loader supports only Vulkan 1.0; libtune needs 1.1 or newer");
  }
  return std::min<std::uint32_t>(loader_version, VK_API_VERSION_1_3);
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(ValidationLog* log) {
  auto mci = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mci.pfnUserCallback = on_validation_message;
  mci.pUserData = log;
  return mci;
}

}  // namespace

Result<std::shared_ptr<Instance>> Instance::create(bool validation) {
  auto api = loader_api_version();
  if (!api.ok()) return api.status();
  std::vector<const char*> layers, extensions;
  if (validation) {
    TUNE_RETURN_IF_ERROR(check_validation_layer());
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  std::shared_ptr<Instance> inst(new Instance());
  inst->validation_ = validation;
  inst->api_version_ = *api;
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "libtune";
  app.pEngineName = "libtune";
  app.apiVersion = *api;
  auto ici = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  auto mci = messenger_info(&inst->log_);
  if (validation) ici.pNext = &mci;  // also reports instance creation/destruction problems

  keep_drivers_loaded(app.apiVersion);
  VkResult r = vkCreateInstance(&ici, nullptr, &inst->instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return Status(StatusCode::unavailable,
                  "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER); on "
                  "a machine without a GPU install mesa-vulkan-drivers for lavapipe");
  }
  if (r != VK_SUCCESS) return make_error("vkCreateInstance", r, StatusCode::unavailable);
  if (!validation) return inst;
  auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(inst->instance_, "vkCreateDebugUtilsMessengerEXT"));
  if (create == nullptr)
    return Status(StatusCode::unavailable, "vkCreateDebugUtilsMessengerEXT is missing");
  r = create(inst->instance_, &mci, nullptr, &inst->messenger_);
  if (r != VK_SUCCESS)
    return make_error("vkCreateDebugUtilsMessengerEXT", r, StatusCode::unavailable);
  return inst;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE && owned_) vkDestroyInstance(instance_, nullptr);
}

std::shared_ptr<Instance> Instance::borrow(VkInstance instance) {
  std::shared_ptr<Instance> inst(new Instance());
  inst->instance_ = instance;
  inst->owned_ = false;
  return inst;
}

Result<std::vector<VkPhysicalDevice>> Instance::physical_devices() const {
  std::uint32_t n = 0;
  TUNE_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance_, &n, nullptr),
                          "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devs(n);
  VkResult r = vkEnumeratePhysicalDevices(instance_, &n, devs.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return make_error("vkEnumeratePhysicalDevices", r);
  devs.resize(n);
  if (devs.empty()) {
    return Status(StatusCode::unavailable,
                  "the Vulkan loader found no physical device (is a driver installed? set "
                  "VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json for lavapipe)");
  }
  return devs;
}

}  // namespace tune::vk
