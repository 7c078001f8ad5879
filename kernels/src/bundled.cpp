#include "tune/kernels/bundled.hpp"

#include <utility>

namespace tune::kernels {

std::vector<BundledKernel> bundled_kernels(Language lang) {
  switch (lang) {
    case Language::glsl:
#if defined(TUNE_KERNELS_GLSL)
      return glsl_kernels();
#else
      return {};
#endif
    case Language::cuda_hip:
#if defined(TUNE_KERNELS_CUDA_HIP)
      return cuda_hip_kernels();
#else
      return {};
#endif
    case Language::simulated:
      return {};
  }
  return {};
}

bool offered_on(const BundledKernel& k, const DeviceInfo& dev) {
  auto configs = k.def.space.enumerate(dev);
  return !configs.ok() || !configs->empty();  // a space that cannot say is tried, and fails
}

std::optional<BundledKernel> bundled_kernel(Language lang, std::string_view name) {
  for (auto& k : bundled_kernels(lang))
    if (k.name == name) return std::move(k);
  return std::nullopt;
}

}  // namespace tune::kernels
