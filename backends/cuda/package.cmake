# What a consumer of the installed package needs for the cuda component (installed as
# libtune-cuda-deps.cmake, included by libtuneConfig.cmake before the component's targets).
find_dependency(CUDAToolkit)
if(NOT TARGET tune::cuda_hip)
  include(${CMAKE_CURRENT_LIST_DIR}/libtune-cuda_hipTargets.cmake)
endif()
