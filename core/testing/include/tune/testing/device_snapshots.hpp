// Hand-built DeviceInfo snapshots of real GPU classes, for compiling and enumerating the
// bundled kernels' spaces where no such device exists (NVRTC/hiprtc compile tests and
// studies/nvrtc_time). Only the fields that constraints, pruning and the compilers read are
// filled; they are what those parts report, not measurements.
#pragma once

#include <cstdint>
#include <string>

#include "tune/device_info.hpp"

namespace tune::testing {

// An H100/H200-class device for "sm_90" (227 KiB of opt-in shared memory per block), else an
// A100-class one (163 KiB).
inline DeviceInfo nvidia_snapshot(const std::string& arch) {
  DeviceInfo d;
  d.backend = "cuda";
  d.vendor = "NVIDIA";
  d.name = "hand-built " + arch;
  d.arch = arch;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647u, 65535, 65535};
  d.shared_bytes_per_block = 48 * 1024;
  d.shared_bytes_per_block_optin = arch == "sm_90" ? 227 * 1024 : 163 * 1024;
  d.registers_per_block = 65536;
  d.warp_size = 32;
  return d;
}

// An AMD device of architecture `arch` ("gfx90a", "gfx1030") with wavefronts of `warp` lanes.
inline DeviceInfo amd_snapshot(const std::string& arch, std::uint32_t warp) {
  DeviceInfo d;
  d.backend = "hip";
  d.vendor = "AMD";
  d.name = "hand-built " + arch;
  d.arch = arch;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 1024};
  d.max_grid = {2147483647u, 65536, 65536};
  d.shared_bytes_per_block = 64 * 1024;
  d.shared_bytes_per_block_optin = 64 * 1024;
  d.warp_size = warp;
  return d;
}

}  // namespace tune::testing
