# Build-time step: pastes prelude.h into a kernel source and writes it as a C++ raw string.
#   cmake -DIN=<kernel.cu> -DPRELUDE=<prelude.h> -DOUT=<file.inc> -DVAR=<name> -P embed.cmake
file(READ "${IN}" src)
file(READ "${PRELUDE}" prelude)
string(REPLACE "#include \"prelude.h\"" "${prelude}" src "${src}")
string(FIND "${src}" ")tune_src\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )tune_src\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by embed.cmake: do not edit.\n"
                        "static const char ${VAR}[] = R\"tune_src(${src})tune_src\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
