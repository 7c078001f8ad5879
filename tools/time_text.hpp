// A duration for people: "850 ns", "12.34 us", "1.50 ms", "2.00 s"; "inf" when not finite.
// Used by `tune cache` tables and the live progress line. Pure; safe from any thread.
#pragma once

#include <string>

namespace tune::cli {

std::string time_text(double ns);

}  // namespace tune::cli
