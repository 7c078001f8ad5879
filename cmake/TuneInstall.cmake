# Install rules and the CMake package: find_package(libtune) then link tune::tune.
include(CMakePackageConfigHelpers)
set(_tune_targets tune_core tune_tune tune_kernels)
foreach(b IN LISTS TUNE_BACKENDS)
  list(APPEND _tune_targets tune_backend_${b})
endforeach()
install(TARGETS ${_tune_targets} EXPORT libtuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ ${PROJECT_SOURCE_DIR}/kernels/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/libtune)
install(EXPORT libtuneTargets NAMESPACE tune:: DESTINATION ${_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/libtuneConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/libtuneConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/libtuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/libtuneConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/libtuneConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindShaderc.cmake
        DESTINATION ${_cmake_dir})
