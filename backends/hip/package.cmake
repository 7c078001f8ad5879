# What a consumer of the installed package needs for the hip component (installed as
# libtune-hip-deps.cmake, included by libtuneConfig.cmake before the component's targets).
# Not HIP itself: the backend links no HIP library (libamdhip64 is dlopen'ed at run time), so a
# consumer builds and links without ROCm installed.
if(NOT TARGET tune::cuda_hip)
  include(${CMAKE_CURRENT_LIST_DIR}/libtune-cuda_hipTargets.cmake)
endif()
