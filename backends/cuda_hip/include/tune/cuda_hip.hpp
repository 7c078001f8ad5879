// What the CUDA and HIP backends' public headers (tune/cuda.hpp, tune/hip.hpp) share: the
// result of compiling a kernel without a device (tune::cuda::compile, tune::hip::compile).
#pragma once

#include <string>

namespace tune {

// A compiled code object (CUBIN / HSACO) and the compiler's log.
struct RtcOutput {
  std::string binary;
  std::string log;
  bool from_cache = false;  // read from the BinaryCache, not compiled in this call
  // The lowered / mangled name of the entry point in `binary` (e.g. what NVRTC reports for a
  // name expression); empty when the binary's symbol is the source's entry name itself.
  // Stored in and restored from the binary cache with the binary.
  std::string entry_name;
};

}  // namespace tune
