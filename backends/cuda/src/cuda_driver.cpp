#include "cuda_driver.hpp"

#include <mutex>
#include <string>

namespace tune::cuda::detail {
namespace {

#define TUNE_CUDA_STR2(x) #x
#define TUNE_CUDA_STR(x) TUNE_CUDA_STR2(x)  // expands cuda.h's versioning macros first

struct Loaded {
  Driver driver;
  Status status;
};

Loaded load() {
  Loaded out;
  Driver& d = out.driver;
  const std::string candidates[] = {"libcuda.so.1"};
  auto lib = gpu::load_first(candidates, "no CUDA driver: cannot load libcuda.so.1.");
  if (!lib.ok()) {
    out.status = lib.status();
    return out;
  }
  d.library = std::move(*lib);
#define TUNE_CUDA_RESOLVE_ENTRY(name)                                                              \
  out.status = gpu::resolve_entry(d.library, TUNE_CUDA_STR(name), &d.name, "CUDA driver too old"); \
  if (!out.status.ok()) return out;
  TUNE_CUDA_DRIVER_ENTRY_POINTS(TUNE_CUDA_RESOLVE_ENTRY)
#undef TUNE_CUDA_RESOLVE_ENTRY
#define TUNE_CUDA_RESOLVE_OPTIONAL(name) \
  d.name = reinterpret_cast<decltype(d.name)>(gpu::find_symbol(d.library, TUNE_CUDA_STR(name)));
  TUNE_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(TUNE_CUDA_RESOLVE_OPTIONAL)
#undef TUNE_CUDA_RESOLVE_OPTIONAL
  CUresult rc = d.cuInit(0);
  if (rc == CUDA_ERROR_STUB_LIBRARY) {
    out.status = Status(StatusCode::unavailable,
                        "no CUDA driver: libcuda.so.1 is the toolkit's stub library "
                        "(cuInit: CUDA_ERROR_STUB_LIBRARY)");
  } else if (rc == CUDA_ERROR_NO_DEVICE) {
    out.status = Status(StatusCode::unavailable, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
  } else if (rc != CUDA_SUCCESS) {
    out.status = Status(StatusCode::unavailable,
                        "CUDA driver unusable: cuInit failed: " + error_text(d, rc));
  }
  return out;
}

}  // namespace

const Driver* driver(Status* why) {
  static const Loaded loaded = load();  // thread-safe one-time initialisation
  if (!loaded.status.ok()) {
    if (why != nullptr) *why = loaded.status;
    return nullptr;
  }
  return &loaded.driver;
}

std::string error_text(const Driver& d, CUresult rc) {
  const char* name = nullptr;
  const char* desc = nullptr;
  if (d.cuGetErrorName == nullptr || d.cuGetErrorName(rc, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.cuGetErrorString == nullptr || d.cuGetErrorString(rc, &desc) != CUDA_SUCCESS)
    desc = nullptr;
  std::string s = name != nullptr ? name : "CUresult " + std::to_string(static_cast<int>(rc));
  if (desc != nullptr) s += std::string(" (") + desc + ")";
  return s;
}

}  // namespace tune::cuda::detail
