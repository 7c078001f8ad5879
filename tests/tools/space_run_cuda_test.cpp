// An imported Kernel Tuner T1 problem tuned on a CUDA GPU (labels cuda, gpu; each case skips
// with the reason without a driver or device): t1_stencil.json's CUDA kernel, its arguments
// filled from the T1 Arguments, the winner's output checked against a CPU loop, and
// `tune run-space --device cuda` from the command line.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "skip.hpp"
#include "space_files.hpp"
#include "space_run.hpp"
#include "tune/cuda.hpp"
#include "tune_process.hpp"

namespace {

using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;

std::unique_ptr<tune::Device> open_cuda_or_skip() {
  auto dev = tune::open_device("cuda");
  tune::testing::skip_if_unavailable(dev.status(), "no CUDA device");
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  return std::move(*dev);
}

}  // namespace

// NVRTC alone (no driver needed): the kernel file compiles with the definitions of points that
// cover every parameter's extremes, so a GPU run of this suite fails on tuning, not on source.
TEST_CASE("the T1 stencil compiles with NVRTC at the corners of its space") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const tune::cli::SpaceFile space = tune::testing::load_example(cli, scratch, "t1_stencil.json");
  auto def = tune::cli::kernel_def_from_space(space);
  REQUIRE_MESSAGE(def.ok(), def.status().to_string());
  for (const auto& [bx, by, tile, shared] :
       std::vector<std::array<int, 4>>{{16, 1, 1, 0}, {32, 8, 4, 1}, {128, 2, 4, 1}}) {
    tune::Config c{
        {"block_size_x", bx}, {"block_size_y", by}, {"tile_size_x", tile}, {"use_shared", shared}};
    c.launch().block = {static_cast<std::uint32_t>(bx), static_cast<std::uint32_t>(by), 1};
    auto out = tune::cuda::compile("sm_90", def->sources[0], c);
    CHECK_MESSAGE(out.ok(), c.to_string() << ": " << out.status().to_string());
  }
}

TEST_CASE("the T1 stencil tunes on CUDA and the winner's output matches the CPU stencil") {
  auto dev = open_cuda_or_skip();
  ScratchDir scratch;
  TuneCli cli(scratch);
  const tune::cli::SpaceFile space = tune::testing::load_example(cli, scratch, "t1_stencil.json");
  tune::Config chosen;
  const auto host = tune::testing::tune_and_read(space, *dev, /*poisoned=*/0, &chosen);
  MESSAGE("chosen: " << chosen.to_string());
  REQUIRE(host.size() == 2);
  const auto& out = host[0];
  const auto& in = host[1];
  const int n = 4096, w = n + 2;
  REQUIRE(out.size() == static_cast<std::size_t>(n) * n);
  int wrong = 0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const float ref = 0.2f * (in[y * w + x + 1] + in[(y + 2) * w + x + 1] + in[(y + 1) * w + x] +
                                in[(y + 1) * w + x + 2] + in[(y + 1) * w + x + 1]);
      const float got = out[static_cast<std::size_t>(y) * n + x];
      if (!(std::fabs(got - ref) <= 1e-6f) && wrong++ < 5)
        MESSAGE("out[" << y << "][" << x << "] = " << got << ", CPU " << ref);
    }
  CHECK_MESSAGE(wrong == 0, wrong << " wrong outputs with " << chosen.to_string());
}

TEST_CASE("tune run-space --device cuda tunes the T1 stencil") {
  (void)open_cuda_or_skip();
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string space = tune::testing::import_example(cli, scratch, "t1_stencil.json");
  const ProcessResult r =
      cli.run({"run-space", space, "--device", "cuda", "--quick", "--no-cache"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("chosen: block_size_x="), r.describe());
}
