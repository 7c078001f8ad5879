// Links tune::tune through add_subdirectory and exercises a pure-core path.
#include <cstdio>

#include <tune/tune.hpp>

int main() {
  tune::ConfigSpace space;
  space.param("BM", {32, 64}).param("BN", {32, 64});
  auto configs = space.enumerate(tune::DeviceInfo{});
  if (!configs.ok() || configs->size() != 4) return 1;
  std::printf("%zu configs; first {%s}; backends compiled: %zu\n", configs->size(),
              configs->front().to_string().c_str(), tune::compiled_backends().size());
  return 0;
}
