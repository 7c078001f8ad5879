#include "nvrtc_library.hpp"

#include <cuda.h>

#include "tune/log.hpp"

namespace tune::cuda::detail {
namespace {

constexpr int kBuiltMajor = CUDA_VERSION / 1000;
constexpr int kBuiltMinor = (CUDA_VERSION % 1000) / 10;

// Where NVRTC is looked for, in order: its soname through the loader's search (LD_LIBRARY_PATH,
// the cache of ldconfig), then the toolkit libtune was built with.
std::vector<std::string> candidates() {
  const std::string soname = "libnvrtc.so." + std::to_string(kBuiltMajor);
  std::vector<std::string> out{soname};
#ifdef TUNE_NVRTC_LIBRARY_DIR
  out.push_back(std::string(TUNE_NVRTC_LIBRARY_DIR) + "/" + soname);
#endif
  return out;
}

struct Loaded {
  Nvrtc lib;
  Status status;
};

Loaded load() {
  Loaded out;
  Nvrtc& n = out.lib;
  auto lib = gpu::load_first(candidates(),
                             "NVRTC not found: cannot compile CUDA kernels (binaries from the "
                             "cache still run); install the CUDA toolkit's NVRTC or add its "
                             "folder to LD_LIBRARY_PATH.");
  if (!lib.ok()) {
    out.status = lib.status();
    return out;
  }
  n.library = std::move(*lib);
#define TUNE_NVRTC_RESOLVE_ENTRY(name)                                              \
  out.status = gpu::resolve_entry(n.library, #name, &n.name, "not a usable NVRTC"); \
  if (!out.status.ok()) return out;
  TUNE_NVRTC_ENTRY_POINTS(TUNE_NVRTC_RESOLVE_ENTRY)
#undef TUNE_NVRTC_RESOLVE_ENTRY
  if (n.nvrtcVersion(&n.major, &n.minor) != NVRTC_SUCCESS) n.major = n.minor = 0;
  int count = 0;
  if (n.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    n.archs.resize(static_cast<std::size_t>(count));
    if (n.nvrtcGetSupportedArchs(n.archs.data()) != NVRTC_SUCCESS) n.archs.clear();
  }
  if (n.major != kBuiltMajor || n.minor != kBuiltMinor) {
    log(LogLevel::info, n.library.path + " is NVRTC " + std::to_string(n.major) + "." +
                            std::to_string(n.minor) +
                            "; binary-cache keys name the one libtune "
                            "was built with (" +
                            built_nvrtc_version() + ")");
  }
  return out;
}

}  // namespace

const Nvrtc* nvrtc(Status* why) {
  static const Loaded loaded = load();  // thread-safe one-time initialisation
  if (!loaded.status.ok()) {
    if (why != nullptr) *why = loaded.status;
    return nullptr;
  }
  return &loaded.lib;
}

std::string built_nvrtc_version() {
  return "NVRTC " + std::to_string(kBuiltMajor) + "." + std::to_string(kBuiltMinor);
}

}  // namespace tune::cuda::detail
