// See time_text.hpp.
#include "time_text.hpp"

#include <cmath>
#include <cstdio>

namespace tune::cli {

std::string time_text(double ns) {
  if (!std::isfinite(ns)) return "inf";
  char buf[32];
  if (ns < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e6)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (ns < 1e9)
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  return buf;
}

}  // namespace tune::cli
