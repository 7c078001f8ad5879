#include "hip_library.hpp"

namespace tune::hip::detail {
namespace {

Result<HipLibrary> load(std::span<const std::string> candidates) {
  HipLibrary h;
  TUNE_ASSIGN_OR_RETURN(h.library,
                        gpu::load_first(candidates,
                                        "no HIP runtime: cannot load libamdhip64 (ROCm's HIP "
                                        "runtime); install it or add its folder to "
                                        "LD_LIBRARY_PATH to use the hip backend."));
#define TUNE_HIP_RESOLVE_ENTRY(name) \
  TUNE_RETURN_IF_ERROR(gpu::resolve_entry(h.library, #name, &h.name, "not a usable HIP runtime"));
#define TUNE_HIP_RESOLVE_TYPED_ENTRY(name, type) TUNE_HIP_RESOLVE_ENTRY(name)
  TUNE_HIP_RUNTIME_ENTRY_POINTS(TUNE_HIP_RESOLVE_ENTRY)
  TUNE_HIP_OVERLOADED_ENTRY_POINTS(TUNE_HIP_RESOLVE_TYPED_ENTRY)
  TUNE_HIPRTC_ENTRY_POINTS(TUNE_HIP_RESOLVE_ENTRY)
#undef TUNE_HIP_RESOLVE_TYPED_ENTRY
#undef TUNE_HIP_RESOLVE_ENTRY
  return h;
}

}  // namespace

std::vector<std::string> hip_library_candidates() {
  // The soname of the ROCm release built against first; the unversioned development link
  // (ROCm installs that name only one) second.
  return {"libamdhip64.so." + std::to_string(HIP_VERSION_MAJOR), "libamdhip64.so"};
}

Status check_hip_library(std::span<const std::string> candidates) {
  auto loaded = load(candidates);
  return loaded.ok() ? Status{} : loaded.status();
}

const HipLibrary* hip_library(Status* why) {
  static const Result<HipLibrary> loaded = load(hip_library_candidates());  // thread-safe once
  if (!loaded.ok()) {
    if (why != nullptr) *why = loaded.status();
    return nullptr;
  }
  return &*loaded;
}

std::string error_text(const HipLibrary& h, hipError_t rc) {
  return std::string(h.hipGetErrorName(rc)) + " (" + h.hipGetErrorString(rc) + ")";
}

}  // namespace tune::hip::detail
