#pragma once
#include <string_view>
namespace tune {
// libtune's version; part of the toolchain fingerprint of every stored tuning result.
inline constexpr std::string_view kVersion = "0.1.0";
}  // namespace tune
