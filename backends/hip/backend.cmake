# Probe of the HIP backend (the variables are described in backends/README.md).
find_package(hip CONFIG QUIET PATHS /opt/rocm /usr/lib/x86_64-linux-gnu/cmake/hip)
set(tune_backend_found ${hip_FOUND})
set(tune_backend_why "HIP not found (install hipcc and libamdhip64-dev)")
set(tune_backend_labels hip gpu)
set(tune_backend_unsupported "")
