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
