// A stored row as the CLI tests of this folder write them through the store API: `median` for
// every statistic of 10 samples, a fixed time, and `reason` when the status is not ok.
#pragma once

#include <string>

#include "tune/store.hpp"

namespace tune::testing {

inline StoredResult stored(const std::string& config, double median,
                           StatusCode status = StatusCode::ok,
                           const std::string& reason = "the launch failed") {
  StoredResult r;
  r.config = config;
  r.status = status;
  r.reason = status == StatusCode::ok ? "" : reason;
  r.stats = {10, median, median, median, median, median, median};
  r.unix_time = 1'760'000'000;
  return r;
}

}  // namespace tune::testing
