# The Python module `libtune` (python/): TUNE_PYTHON=AUTO builds it when pybind11 and Python's
# development files are found, ON requires them, OFF never looks. Sets TUNE_HAVE_PYTHON and,
# when on, Python3_EXECUTABLE (the interpreter the module is built for and tested with).
set(TUNE_PYTHON AUTO CACHE STRING "Build the Python module libtune (pybind11): AUTO, ON or OFF")
set_property(CACHE TUNE_PYTHON PROPERTY STRINGS AUTO ON OFF)

set(TUNE_HAVE_PYTHON OFF)
if(NOT TUNE_PYTHON STREQUAL "OFF")
  # With no interpreter named, take the first python3 on PATH that imports numpy: a version
  # manager's shim (pyenv) may come first with no NumPy, while the system's interpreter has
  # Debian's python3-numpy. The module is built for the interpreter chosen here, so the tests
  # run with that same one (the extension's ABI is that interpreter's).
  if(NOT Python3_EXECUTABLE AND NOT DEFINED ENV{VIRTUAL_ENV} AND NOT SKBUILD)
    string(REPLACE ":" ";" _tune_path "$ENV{PATH}")
    foreach(_dir IN LISTS _tune_path)
      if(EXISTS "${_dir}/python3" AND NOT Python3_EXECUTABLE)
        execute_process(COMMAND "${_dir}/python3" -c "import numpy" RESULT_VARIABLE _rc
                        OUTPUT_QUIET ERROR_QUIET)
        if(_rc EQUAL 0)
          set(Python3_EXECUTABLE "${_dir}/python3" CACHE FILEPATH "Python for libtune's module")
        endif()
      endif()
    endforeach()
  endif()
  # pybind11 installed by pip has its CMake files inside the package: ask it where.
  macro(tune_hint_pybind11)
    if(Python3_FOUND AND NOT pybind11_DIR)
      execute_process(COMMAND ${Python3_EXECUTABLE} -m pybind11 --cmakedir
                      OUTPUT_VARIABLE _pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_pybind11_dir)
        list(APPEND CMAKE_PREFIX_PATH "${_pybind11_dir}")
      endif()
    endif()
  endmacro()
  if(TUNE_PYTHON STREQUAL "ON")
    find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
    tune_hint_pybind11()
    find_package(pybind11 2.10 CONFIG REQUIRED)
  else()
    find_package(Python3 COMPONENTS Interpreter Development.Module)
    tune_hint_pybind11()
    if(Python3_FOUND)
      find_package(pybind11 2.10 CONFIG QUIET)
    endif()
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(TUNE_HAVE_PYTHON ON)
  endif()
endif()
