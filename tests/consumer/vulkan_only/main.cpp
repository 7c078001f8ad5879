// Links tune::tune from a package found with COMPONENTS vulkan: the registry holds Vulkan alone,
// and the backend's own header is there.
#include <cstdio>

#include <tune/tune.hpp>
#include <tune/vulkan.hpp>

#ifndef TUNE_HAVE_VULKAN
#error "tune::vulkan defines TUNE_HAVE_VULKAN"
#endif

int main() {
  const auto backends = tune::compiled_backends();
  if (backends.size() != 1 || backends.front() != "vulkan") {
    std::printf("expected the vulkan backend alone, got %zu backends\n", backends.size());
    return 1;
  }
  auto devices = tune::vulkan::list_devices();
  std::printf("vulkan backend linked; %s\n",
              devices.ok() ? "devices listed" : devices.status().to_string().c_str());
  return 0;
}
