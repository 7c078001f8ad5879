# Install rules and the CMake package, one export set per component:
#   find_package(libtune [COMPONENTS cuda hip vulkan testing mpi postgresql]) then link tune::tune
# (the core, the registry and the backends asked for), and tune::testing for the simulated
# device. Asking for no component loads every component this build installed. A component
# loads only its own dependencies (find_dependency): a Vulkan-only consumer needs no CUDA or
# HIP toolchain. See cmake/libtuneConfig.cmake.in.
include(CMakePackageConfigHelpers)
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/libtune)
set(_archive ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The core: tune::core, tune::tune (registry), tune::kernels (the bundled kernels).
install(TARGETS tune_core tune_tune tune_kernels EXPORT libtuneTargets ${_archive})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ ${PROJECT_SOURCE_DIR}/kernels/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT libtuneTargets NAMESPACE tune:: DESTINATION ${_cmake_dir})
# The isolated tuning worker, where the core looks for it by default (TUNE_WORKER_INSTALLED).
install(TARGETS tune-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR})

# Components: each backend (its headers are installed by its own folder), and testing.
set(TUNE_COMPONENTS ${TUNE_BACKENDS} testing)
foreach(b IN LISTS TUNE_BACKENDS)
  install(TARGETS tune_backend_${b} EXPORT libtune-${b}Targets ${_archive})
  install(EXPORT libtune-${b}Targets NAMESPACE tune:: DESTINATION ${_cmake_dir})
  # What a consumer needs found before the component's targets load.
  install(FILES ${PROJECT_SOURCE_DIR}/backends/${b}/package.cmake DESTINATION ${_cmake_dir}
          RENAME libtune-${b}-deps.cmake)
endforeach()
if(TARGET tune_cuda_hip)
  install(EXPORT libtune-cuda_hipTargets NAMESPACE tune:: DESTINATION ${_cmake_dir})
endif()
install(TARGETS tune_testing EXPORT libtune-testingTargets ${_archive})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/testing/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT libtune-testingTargets NAMESPACE tune:: DESTINATION ${_cmake_dir})

# tune::mpi, when built: the `mpi` component (its consumer needs MPI, found for C++).
if(TARGET tune_mpi)
  list(APPEND TUNE_COMPONENTS mpi)
  install(TARGETS tune_mpi EXPORT libtune-mpiTargets ${_archive})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/mpi/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT libtune-mpiTargets NAMESPACE tune:: DESTINATION ${_cmake_dir})
  install(FILES ${PROJECT_SOURCE_DIR}/mpi/package.cmake DESTINATION ${_cmake_dir}
          RENAME libtune-mpi-deps.cmake)
endif()

# tune::postgresql, when built: the `postgresql` component (its consumer needs libpq). Loading
# it adds it to tune::tune, as in the build tree, so default_store() honours TUNE_STORE.
if(TARGET tune_postgresql)
  list(APPEND TUNE_COMPONENTS postgresql)
  install(TARGETS tune_postgresql EXPORT libtune-postgresqlTargets ${_archive})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/stores/postgresql/include/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT libtune-postgresqlTargets NAMESPACE tune:: DESTINATION ${_cmake_dir})
  install(FILES ${PROJECT_SOURCE_DIR}/stores/postgresql/package.cmake DESTINATION ${_cmake_dir}
          RENAME libtune-postgresql-deps.cmake)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/libtuneConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/libtuneConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/libtuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/libtuneConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/libtuneConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindShaderc.cmake
        DESTINATION ${_cmake_dir})
