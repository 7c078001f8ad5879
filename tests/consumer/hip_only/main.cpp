// Links tune::tune from a package found with COMPONENTS hip, HIP itself hidden from CMake: the
// registry holds HIP alone, the program links and starts without libamdhip64 (not in its
// NEEDED entries), and opening hip answers with a status: "no HIP device" on a machine with
// ROCm but no GPU, "no HIP runtime" naming the files tried without ROCm, or a device.
#include <cstdio>
#include <fstream>
#include <string>

#include <tune/hip.hpp>
#include <tune/tune.hpp>

#ifndef TUNE_HAVE_HIP
#error "tune::hip defines TUNE_HAVE_HIP"
#endif

namespace {
bool amdhip_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libamdhip64") != std::string::npos) return true;
  return false;
}
}  // namespace

int main() {
  const auto backends = tune::compiled_backends();
  if (backends.size() != 1 || backends.front() != "hip") {
    std::printf("expected the hip backend alone, got %zu backends\n", backends.size());
    return 1;
  }
  if (amdhip_mapped()) {
    std::printf("libamdhip64 is in the process before any HIP call\n");
    return 1;
  }
  const tune::Status s = tune::hip::driver_status();
  if (!s.ok() && s.code() != tune::StatusCode::unavailable) {
    std::printf("hip: expected ok or unavailable, got %s\n", s.to_string().c_str());
    return 1;
  }
  std::printf("hip backend linked without ROCm at link time; %s\n",
              s.ok() ? "a device is present" : s.to_string().c_str());
  return 0;
}
