// Internal to the HIP backend; no HIP headers (in-tree tests include it).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rtc.hpp"

namespace tune::hip::detail {

// The process-wide hiprtc compiler, shared by every HIP device.
std::shared_ptr<gpu::RtcCompiler> hiprtc_compiler();

// Where libamdhip64 is looked for, in order (hip_library.hpp): its soname, then its
// unversioned name, each through the loader's search (LD_LIBRARY_PATH, ldconfig's cache).
std::vector<std::string> hip_library_candidates();

// Loads the HIP library from `candidates` as the process-wide one is loaded, and says whether
// that worked: ok, or the unavailable status hip_library() would give (a file that loads stays
// in the process). For tests of the failure paths (a name that does not exist, a library that
// lacks the entry points); libtune itself uses hip_library().
Status check_hip_library(std::span<const std::string> candidates);

}  // namespace tune::hip::detail
