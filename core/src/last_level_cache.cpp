#include "tune/backend/last_level_cache.hpp"

#include <cctype>
#include <cstdio>
#include <mutex>
#include <string>

#include "tune/environment.hpp"
#include "tune/log.hpp"

namespace tune {
namespace {

struct InfinityCache {
  std::string_view target;
  std::uint64_t mib;
};

// AMD's GPU specification table (https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html,
// column "L3 Cache (MiB)", one row per LLVM target; where a target covers several parts the
// largest is listed, e.g. gfx1100 is the RX 7900 XTX's 96 MiB and the 7900 XT's 80 MiB). CDNA2
// and older Instinct parts (gfx90a, gfx908, gfx906) have no Infinity Cache: absent, so their
// reported L2 stays the last level.
constexpr InfinityCache kInfinityCaches[] = {
    {"gfx942", 256},   // MI300X, MI300A, MI325X (CDNA3)
    {"gfx950", 256},   // MI350X, MI355X (CDNA4)
    {"gfx1030", 128},  // RX 6800 / 6900 XT, PRO W6800 (RDNA2)
    {"gfx1031", 96},   // RX 6700 XT
    {"gfx1032", 32},   // RX 6600 (XT), PRO W6600
    {"gfx1034", 16},   // RX 6500 XT
    {"gfx1100", 96},   // RX 7900 XTX, PRO W7900 (RDNA3)
    {"gfx1101", 64},   // RX 7800 XT, PRO W7800
    {"gfx1102", 32},   // RX 7600
    {"gfx1200", 32},   // RX 9060 XT (RDNA4)
    {"gfx1201", 64},   // RX 9070 (XT), AI PRO R9700
};

}  // namespace

std::string_view to_string(CacheSizeSource s) noexcept {
  switch (s) {
    case CacheSizeSource::reported:
      return "reported";
    case CacheSizeSource::table:
      return "table";
    case CacheSizeSource::default_size:
      return "default";
    case CacheSizeSource::user:
      return "user";
  }
  return "?";
}

std::uint64_t amd_infinity_cache_bytes(std::string_view gfx_target) noexcept {
  for (const auto& row : kInfinityCaches)
    if (row.target == gfx_target) return row.mib << 20;
  return 0;
}

Result<std::uint64_t> parse_byte_size(std::string_view text) {
  auto bad = [&] {
    return Status(StatusCode::invalid_argument,
                  "'" + std::string(text) +
                      "' is not a byte size (a positive whole number with an optional K, M or G "
                      "suffix, e.g. 256M)");
  };
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    if (value > (~std::uint64_t{0} - 9) / 10) return bad();
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0) return bad();
  std::string unit;
  for (; i < text.size(); ++i)
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (!unit.empty()) {
    const char c = unit[0];
    shift = c == 'k' ? 10 : c == 'm' ? 20 : c == 'g' ? 30 : -1;
    const std::string rest = unit.substr(1);
    if (shift < 0 || !(rest.empty() || rest == "b" || rest == "ib")) return bad();
  }
  if (value == 0 || value > (~std::uint64_t{0} >> shift)) return bad();
  return value << shift;
}

std::string byte_size_text(std::uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1ull << 30));
  else if (bytes >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1ull << 20));
  else if (bytes >= (1ull << 10))
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1ull << 10));
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

void set_last_level_cache(DeviceInfo& info, std::uint64_t bytes, CacheSizeSource source,
                          std::uint64_t fallback) {
  info.llc_bytes = bytes > 0 ? bytes : fallback;
  info.llc_source = bytes > 0 ? source : CacheSizeSource::default_size;
  const std::string text = env_text("TUNE_LLC_BYTES");
  if (text.empty()) return;
  auto user = parse_byte_size(text);
  if (user.ok()) {
    info.llc_bytes = *user;
    info.llc_source = CacheSizeSource::user;
    return;
  }
  static std::once_flag warned;
  std::call_once(warned,
                 [&] { log_warning("TUNE_LLC_BYTES: " + user.status().message() + "; ignored"); });
}

std::uint64_t flush_bytes_for(const DeviceInfo& info) noexcept {
  const std::uint64_t mib = 1ull << 20;
  const std::uint64_t llc = info.llc_bytes != 0 ? info.llc_bytes : kDefaultLlcBytes;
  return (llc * kFlushCacheMultiple + mib - 1) / mib * mib;
}

}  // namespace tune
