# What a consumer of the installed package needs for the vulkan component (installed as
# libtune-vulkan-deps.cmake, included by libtuneConfig.cmake before the component's targets).
find_dependency(Vulkan)
find_dependency(Shaderc)  # cmake/FindShaderc.cmake, installed beside this file
