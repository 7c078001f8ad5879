#include "tune/device.hpp"

#include "tune/backend/hash.hpp"
#include "tune/version.hpp"

namespace tune {

std::string_view to_string(Language l) noexcept {
  switch (l) {
    case Language::glsl:
      return "glsl";
    case Language::cuda_hip:
      return "cuda_hip";
    case Language::simulated:
      return "simulated";
  }
  return "unknown";
}

std::uint64_t KernelSource::hash() const {
  return stable_hash(text, stable_hash(entry, static_cast<std::uint64_t>(language)));
}

std::string KernelResources::to_string() const {
  std::string s;
  auto add = [&](const char* name, std::uint32_t v) {
    if (v == 0) return;
    if (!s.empty()) s += ' ';
    s += name;
    s += '=';
    s += std::to_string(v);
  };
  add("regs", registers);
  add("spill", spill_bytes);
  add("local", local_bytes);
  add("smem", shared_bytes);
  add("max_threads", max_threads);
  return s;
}

std::string DeviceInfo::fingerprint() const {
  return backend + "|" + name + "|" + arch + "|" + driver_version;
}

std::uint64_t DeviceInfo::fingerprint_hash() const { return stable_hash(fingerprint()); }

std::string DeviceInfo::toolchain_fingerprint() const {
  return compiler_version + "|libtune " + std::string(kVersion);
}

}  // namespace tune
