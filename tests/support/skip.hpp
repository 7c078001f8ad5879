// Skipping a test case that needs something absent (a GPU, a driver).
//
// CTest runs each doctest case as its own process and maps exit code 77 to "Skipped", so a
// skip is reported as a skip with its printed reason, never counted as a pass.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tune::testing {

[[noreturn]] inline void skip_test(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::fflush(stdout);
  std::_Exit(77);
}

// Skips when `st` (a tune::Status) says the thing is absent (unavailable: no driver, no
// device); any other failure (device_lost, say) is left to the caller to fail on, never hidden
// as a skip. A template so that this header needs no libtune include (the CLI tests use it
// without linking libtune).
template <class StatusT>
void skip_if_unavailable(const StatusT& st, const std::string& what) {
  using Code = decltype(st.code());
  if (!st.ok() && st.code() == Code::unavailable) skip_test(what + ": " + st.to_string());
}

// Whether this run is CI (CI=true): there, a missing lavapipe is a failure, not a skip.
inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace tune::testing

#define TUNE_SKIP(reason) ::tune::testing::skip_test(reason)
