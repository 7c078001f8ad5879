#include "shared_library.hpp"

#include <dlfcn.h>

namespace tune::gpu {

Result<SharedLibrary> load_first(std::span<const std::string> candidates,
                                 std::string_view missing) {
  std::string tried;
  for (const std::string& path : candidates) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return SharedLibrary{handle, path};
    // dlerror is per thread: this message is the one for the dlopen just above. glibc's
    // usually begins with the file's name already ("libcuda.so.1: cannot open shared ...").
    const char* err = ::dlerror();
    const std::string why = err != nullptr ? err : "unknown dlopen error";
    tried += "\n  " + (why.rfind(path, 0) == 0 ? why : path + ": " + why);
  }
  return Status(StatusCode::unavailable, std::string(missing) + " Tried:" + tried);
}

void* find_symbol(const SharedLibrary& lib, const char* symbol) {
  return ::dlsym(lib.handle, symbol);
}

Status missing_symbol(const SharedLibrary& lib, const char* symbol, std::string_view consequence) {
  return Status(StatusCode::unavailable,
                lib.path + " lacks " + symbol + ": " + std::string(consequence));
}

}  // namespace tune::gpu
