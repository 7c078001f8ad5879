# Probe of the Vulkan backend (the variables are described in backends/README.md).
find_package(Vulkan QUIET)
find_package(Shaderc QUIET)
set(tune_backend_found FALSE)
if(Vulkan_FOUND AND Shaderc_FOUND)
  set(tune_backend_found TRUE)
endif()
set(tune_backend_why "Vulkan loader/headers or shaderc not found (libvulkan-dev, libshaderc-dev, glslang-dev, spirv-tools)")
set(tune_backend_labels vulkan)
set(tune_backend_unsupported
    "dynamic_shared_memory|invalid_argument|Vulkan has no dynamic shared memory: a shader declares its shared arrays")
