# Backend selection at configure time.
#
# Every folder backends/<name>/ with a backend.cmake is a backend (backends/README.md); its
# probe finds the toolchain quietly.
# TUNE_BACKENDS is a list of backend names, in preference order (open_device's default). When
# not given it defaults to every backend whose toolchain is found, in alphabetical order. Asking for a backend whose toolchain is missing is an error that
# names what is missing. Sets TUNE_HAVE_<NAME>, and for each backend TUNE_BACKEND_LABELS_<name>
# and TUNE_BACKEND_UNSUPPORTED_<name> (tests/conformance reads them).
file(GLOB _tune_probes RELATIVE ${PROJECT_SOURCE_DIR}/backends
     ${PROJECT_SOURCE_DIR}/backends/*/backend.cmake)
list(SORT _tune_probes)
set(_tune_all_backends "")
foreach(probe IN LISTS _tune_probes)
  get_filename_component(b ${probe} DIRECTORY)
  list(APPEND _tune_all_backends ${b})
  unset(tune_backend_found)
  unset(tune_backend_why)
  set(tune_backend_labels ${b})
  set(tune_backend_unsupported "")
  include(${PROJECT_SOURCE_DIR}/backends/${probe})
  set(_tune_found_${b} ${tune_backend_found})
  set(_tune_why_${b} "${tune_backend_why}")
  set(TUNE_BACKEND_LABELS_${b} ${tune_backend_labels})
  set(TUNE_BACKEND_UNSUPPORTED_${b} "${tune_backend_unsupported}")
endforeach()

if(NOT DEFINED TUNE_BACKENDS)
  set(_default "")
  foreach(b IN LISTS _tune_all_backends)
    if(_tune_found_${b})
      list(APPEND _default ${b})
    endif()
  endforeach()
  set(TUNE_BACKENDS "${_default}" CACHE STRING "Backends to build: a list of ${_tune_all_backends}")
endif()

set(TUNE_BACKENDS_SUMMARY "")
foreach(b IN LISTS TUNE_BACKENDS)
  if(NOT b IN_LIST _tune_all_backends)
    message(FATAL_ERROR "TUNE_BACKENDS: unknown backend '${b}' (known: ${_tune_all_backends})")
  endif()
  if(NOT _tune_found_${b})
    message(FATAL_ERROR "TUNE_BACKENDS asks for '${b}' but ${_tune_why_${b}}")
  endif()
endforeach()
foreach(b IN LISTS _tune_all_backends)
  string(TOUPPER ${b} B)
  if(b IN_LIST TUNE_BACKENDS)
    set(TUNE_HAVE_${B} ON)
    string(APPEND TUNE_BACKENDS_SUMMARY "${b}=ON ")
  else()
    set(TUNE_HAVE_${B} OFF)
    if(_tune_found_${b})
      string(APPEND TUNE_BACKENDS_SUMMARY "${b}=off ")
    else()
      string(APPEND TUNE_BACKENDS_SUMMARY "${b}=off(not found) ")
    endif()
  endif()
endforeach()
