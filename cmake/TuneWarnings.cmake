# tune_set_warnings(<target>): the project's warning set (and sanitizers) on one target.
# Applied to libtune's own targets only, never to consumers.
function(tune_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                             -Wnon-virtual-dtor -Wimplicit-fallthrough)
    if(TUNE_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
    # GCC 12 reports false -Wrestrict overlaps in std::string concatenation at -O3 (GCC bug
    # 105651), in libstdc++'s headers rather than our code.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
  endif()
endfunction()

if(TUNE_SANITIZE)
  add_compile_options(-fsanitize=${TUNE_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TUNE_SANITIZE})
endif()
