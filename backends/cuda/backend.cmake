# Probe of the CUDA backend, included by cmake/TuneBackends.cmake at configure time. Finds the
# toolchain quietly and says whether the backend can build:
#   tune_backend_found     TRUE or FALSE
#   tune_backend_why       what is missing, when not found
#   tune_backend_labels    CTest labels of its conformance suite (gpu: needs a real device)
#   tune_backend_unsupported  conformance features it does not support: feature|status code|why
find_package(CUDAToolkit QUIET)
set(tune_backend_found FALSE)
if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc)
  set(tune_backend_found TRUE)
endif()
set(tune_backend_why "CUDA toolkit with NVRTC not found (set CUDAToolkit_ROOT)")
set(tune_backend_labels cuda gpu)
set(tune_backend_unsupported "")
