# What an install ships under include/tune: no internal header (the research headers moved to
# core/src), and every public header of the core compiles on its own from the installed tree
# (its includes all installed). Run by CTest after consumer.install:
#   cmake -DPREFIX=<install prefix> -DSOURCE_DIR=<libtune> -DCXX=<compiler> -DWORK=<scratch dir>
#         -P installed_headers.cmake
foreach(internal stats.hpp sustained_turn.hpp flush_check.hpp showdown.hpp race.hpp)
  file(GLOB_RECURSE _found ${PREFIX}/include/*/${internal})
  if(_found)
    message(FATAL_ERROR "internal header installed: ${_found}")
  endif()
endforeach()
file(GLOB _public RELATIVE ${SOURCE_DIR}/core/include ${SOURCE_DIR}/core/include/tune/*.hpp)
list(LENGTH _public _count)
if(_count EQUAL 0)
  message(FATAL_ERROR "no public header under ${SOURCE_DIR}/core/include/tune")
endif()
foreach(h IN LISTS _public)
  if(NOT EXISTS ${PREFIX}/include/${h})
    message(FATAL_ERROR "${h} is not installed")
  endif()
  string(MAKE_C_IDENTIFIER ${h} _name)
  file(WRITE ${WORK}/${_name}.cpp "#include <${h}>\n")
  execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Werror
                          -I${PREFIX}/include ${WORK}/${_name}.cpp
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${h} does not compile on its own from the install:\n${_err}")
  endif()
endforeach()
message(STATUS "${_count} public headers installed, each compiles alone; no internal header")
