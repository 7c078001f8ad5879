# Build-time step: pastes prelude.h, and any other header of prelude.h's folder the kernel
# includes (`#include "name.h"` lines), into a kernel source and writes it as a C++ raw string,
# so the source a device compiles is self-contained.
#   cmake -DIN=<kernel.cu> -DPRELUDE=<prelude.h> -DOUT=<file.inc> -DVAR=<name> -P embed.cmake
file(READ "${IN}" src)
get_filename_component(dir "${PRELUDE}" DIRECTORY)
string(REGEX MATCHALL "#include \"[A-Za-z0-9_]+\\.h\"" includes "${src}")
list(REMOVE_DUPLICATES includes)
foreach(line IN LISTS includes)
  string(REGEX REPLACE "#include \"(.*)\"" "\\1" name "${line}")
  if(NOT EXISTS "${dir}/${name}")
    message(FATAL_ERROR "${IN} includes ${name}, which is not in ${dir}")
  endif()
  file(READ "${dir}/${name}" header)
  string(REPLACE "${line}" "${header}" src "${src}")
endforeach()
string(FIND "${src}" ")tune_src\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )tune_src\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by embed.cmake: do not edit.\n"
                        "static const char ${VAR}[] = R\"tune_src(${src})tune_src\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
