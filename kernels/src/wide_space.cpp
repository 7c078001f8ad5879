// wide_matmul_f32_space (tune/kernels/bundled.hpp): the wide fp32 matmul space that
// studies/tuning_study records and bench/mpi_tuning shares over GPUs.
#include <string>

#include "tune/kernels/bundled.hpp"

namespace tune::kernels {

// matmul_f32 over wider domains of its own parameters. The GLSL source takes any BM, BN, BK,
// TM, TN with TM | BM and TN | BN (its loads stride by the workgroup size, every bound is
// checked), a (BN/TN) x (BM/TM) workgroup and double buffering on or off; the CUDA source has
// its static_asserts, mirrored by the bundled space's own constraints, which are reused here.
Result<ConfigSpace> wide_matmul_f32_space(const BundledKernel& k, Language lang) {
  if (k.name != "matmul_f32") {
    return Status(StatusCode::invalid_argument,
                  "the wide space is defined for matmul_f32 only, not " + k.name);
  }
  const ConfigSpace bundled = k.def.space;
  ConfigSpace s;
  if (lang == Language::glsl) {
    s.param("BM", {16, 32, 64, 128, 256})
        .param("BN", {16, 32, 64, 128, 256})
        .param("BK", {4, 8, 16, 32})
        .param("TM", {1, 2, 4, 8})
        .param("TN", {1, 2, 4, 8})
        .param("DB", std::vector<Value>{Value{false}, Value{true}})
        .derive([](Config& c) {
          c.launch().block = {static_cast<std::uint32_t>(c.get_int("BN") / c.get_int("TN")),
                              static_cast<std::uint32_t>(c.get_int("BM") / c.get_int("TM")), 1};
        })
        .constrain("TM | BM and TN | BN",
                   [](const Config& c, const DeviceInfo&) {
                     return c.get_int("BM") % c.get_int("TM") == 0 &&
                            c.get_int("BN") % c.get_int("TN") == 0;
                   })
        .constrain("at least 32 invocations",
                   [](const Config& c, const DeviceInfo&) {
                     return c.launch().block.x * c.launch().block.y >= 32;
                   })
        .constrain(
            "bundled constraints (workgroup and shared memory fit)",
            [bundled](const Config& c, const DeviceInfo& d) { return bundled.accepts(c, d); });
    return s;
  }
  if (lang == Language::cuda_hip) {
    // The kernel's own parameters over wider domains; the block size is not a dimension but
    // follows from them (a thread computes a TM x TN tile: BM * BN / (TM * TN) threads, for
    // any warp size), so every point of the product has its one consistent launch. Then as
    // matmul_f32_derive (cuda_hip_kernels.cpp): a 1-D block and NUM_STAGES * BK * ((BM + 4) +
    // (BN + 4)) floats of dynamic shared memory. 3456 points; 1329 accepted on sm_90.
    s.param("BM", {32, 64, 128, 256})
        .param("BN", {32, 64, 128, 256})
        .param("BK", {8, 16, 32})
        .param("TM", {4, 8})
        .param("TN", {4, 8})
        .param("WTN", {1, 2, 4, 8, 16, 32})
        .param(std::string(kNumStages), {2, 3, 4})
        .derive([](Config& c) {
          const std::int64_t threads =
              c.get_int("BM") * c.get_int("BN") / (c.get_int("TM") * c.get_int("TN"));
          c.launch().block = {static_cast<std::uint32_t>(threads), 1, 1};
          const std::int64_t bytes = c.launch().num_stages * c.get_int("BK") *
                                     ((c.get_int("BM") + 4) + (c.get_int("BN") + 4)) * 4;
          c.launch().shared_bytes = static_cast<std::uint32_t>(bytes);
        })
        .constrain(
            "bundled constraints (shapes, threads, shared memory)",
            [bundled](const Config& c, const DeviceInfo& d) { return bundled.accepts(c, d); });
    return s;
  }
  return Status(StatusCode::invalid_argument,
                "no wide matmul_f32 space for " + std::string(to_string(lang)));
}

}  // namespace tune::kernels
