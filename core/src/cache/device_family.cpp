// Reading a device fingerprint back. See device_family.hpp.
#include "cache/device_family.hpp"

namespace tune::cache {
namespace {

std::string vendor_of(const std::string& backend, const std::string& arch) {
  if (backend == "cuda") return "NVIDIA";
  if (backend == "hip") return "AMD";
  if (backend == "vulkan" && arch.rfind("vk:", 0) == 0) {
    const std::size_t end = arch.find(':', 3);
    return arch.substr(0, end);
  }
  return backend;
}

}  // namespace

std::optional<DeviceFamily> parse_fingerprint(std::string_view fp) {
  const std::size_t first = fp.find('|');
  const std::size_t last = fp.rfind('|');
  if (first == std::string_view::npos || last == first) return std::nullopt;
  const std::size_t before_last = fp.rfind('|', last - 1);
  if (before_last == first) return std::nullopt;
  DeviceFamily d;
  d.backend = std::string(fp.substr(0, first));
  d.name = std::string(fp.substr(first + 1, before_last - first - 1));
  d.arch = std::string(fp.substr(before_last + 1, last - before_last - 1));
  d.driver = std::string(fp.substr(last + 1));
  if (d.backend.empty() || d.arch.empty()) return std::nullopt;
  d.vendor = vendor_of(d.backend, d.arch);
  return d;
}

std::string_view to_string(FamilyLevel level) noexcept {
  switch (level) {
    case FamilyLevel::exact:
      return "exact device";
    case FamilyLevel::same_architecture:
      return "same architecture";
    case FamilyLevel::same_vendor:
      return "same vendor";
    case FamilyLevel::other:
      return "other";
  }
  return "other";
}

FamilyLevel family_level(const DeviceFamily& want, const DeviceFamily& have) noexcept {
  if (want.backend != have.backend) return FamilyLevel::other;
  if (want.arch == have.arch)
    return want.name == have.name && want.driver == have.driver ? FamilyLevel::exact
                                                                : FamilyLevel::same_architecture;
  return want.vendor == have.vendor ? FamilyLevel::same_vendor : FamilyLevel::other;
}

}  // namespace tune::cache
