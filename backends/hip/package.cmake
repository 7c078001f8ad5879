# What a consumer of the installed package needs for the hip component (installed as
# libtune-hip-deps.cmake, included by libtuneConfig.cmake before the component's targets).
find_dependency(hip CONFIG)
if(NOT TARGET tune::cuda_hip)
  include(${CMAKE_CURRENT_LIST_DIR}/libtune-cuda_hipTargets.cmake)
endif()
