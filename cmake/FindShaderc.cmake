# FindShaderc: shaderc with the glslang and SPIRV-Tools static libraries it needs.
#
# Debian 12 ships no shared libshaderc that works alone and a libshaderc_combined.a that is
# not really combined; this module links it with its dependencies in the right order.
# Defines Shaderc_FOUND and the imported target Shaderc::shaderc.
find_path(Shaderc_INCLUDE_DIR shaderc/shaderc.hpp)
find_library(Shaderc_COMBINED_LIBRARY NAMES shaderc_combined)
set(_shaderc_deps glslang MachineIndependent OSDependent GenericCodeGen OGLCompiler SPIRV
    SPIRV-Tools-opt SPIRV-Tools)
set(_shaderc_dep_paths "")
set(_shaderc_missing "")
foreach(dep IN LISTS _shaderc_deps)
  find_library(Shaderc_${dep}_LIBRARY NAMES ${dep})
  if(Shaderc_${dep}_LIBRARY)
    list(APPEND _shaderc_dep_paths ${Shaderc_${dep}_LIBRARY})
  else()
    list(APPEND _shaderc_missing ${dep})
  endif()
  mark_as_advanced(Shaderc_${dep}_LIBRARY)
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Shaderc REQUIRED_VARS Shaderc_COMBINED_LIBRARY
                                  Shaderc_INCLUDE_DIR _shaderc_dep_paths)
if(Shaderc_FOUND AND NOT TARGET Shaderc::shaderc)
  find_package(Threads REQUIRED)
  add_library(Shaderc::shaderc INTERFACE IMPORTED)
  set_target_properties(Shaderc::shaderc PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${Shaderc_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${Shaderc_COMBINED_LIBRARY};${_shaderc_dep_paths};Threads::Threads")
endif()
mark_as_advanced(Shaderc_INCLUDE_DIR Shaderc_COMBINED_LIBRARY)
