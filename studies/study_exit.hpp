// The research programs' way out on a failed libtune call: the program's name, what failed and
// the Status on stderr, exit status 1 (they measure; a failure ends the measurement).
#pragma once

#include <errno.h>  // program_invocation_short_name (glibc)

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "tune/status.hpp"

namespace tune::study {

[[noreturn]] inline void die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what.c_str(),
               st.to_string().c_str());
  std::exit(1);
}

// The value of `r`, or die(what, its status).
template <class T>
T must(Result<T> r, const std::string& what) {
  if (!r.ok()) die(what, r.status());
  return std::move(*r);
}

}  // namespace tune::study
