// distill_sweep: fills the tuning cache with decisions of the bundled matmul_f32 at many sizes,
// the input `tune distill matmul_f32` reads (bench/RESULTS.md, "One table for all sizes").
//
//   distill_sweep [--device SPEC] [--sizes N]
//
// Tunes matmul_f32 (the GLSL one on Vulkan, the CUDA/HIP one elsewhere) at N shapes (default
// 36): M, N, K each in {32, 64, 128, 256}, the first N of those 64 triples in an order that
// spreads them (i * 23 mod 64). The key buckets M, N, K to powers of two, so each shape is its
// own key. Quick effort and short timing budgets (2 ms warm-up, 10 ms of repetitions), since
// lavapipe is slow. The rows go to the default cache (TUNE_CACHE_DIR), and
// every winner is checked against the CPU reference. Progress on stderr.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;

[[noreturn]] void die(const std::string& what, const Status& st) {
  std::fprintf(stderr, "distill_sweep: %s: %s\n", what.c_str(), st.to_string().c_str());
  std::exit(1);
}

// The i-th shape of the sweep: 23 is coprime with 64, so the first N cover the cube evenly.
std::vector<std::int64_t> sweep_shape(int i) {
  const int j = (i * 23) % 64;
  const std::int64_t side[] = {32, 64, 128, 256};
  return {side[j % 4], side[(j / 4) % 4], side[j / 16]};
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec;
  int count = 36;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      spec = argv[++i];
    } else if (a == "--sizes" && i + 1 < argc) {
      count = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: distill_sweep [--device SPEC] [--sizes N (1-64)]\n");
      return 2;
    }
  }
  if (count < 1 || count > 64) die("--sizes", Status(StatusCode::invalid_argument, "not in 1-64"));
  auto opened = open_device(spec);
  if (!opened.ok()) die("open_device", opened.status());
  std::unique_ptr<Device> dev = std::move(*opened);
  auto k = kernels::bundled_kernel(dev->language(), "matmul_f32");
  if (!k) die("matmul_f32", Status(StatusCode::not_found, "not bundled for this language"));
  AutotunerOptions opts;
  opts.effort = Effort::quick;
  opts.bench.warmup_ms = 2;
  opts.bench.rep_ms = 10;
  auto tuner = Autotuner::make(k->def, opts);
  if (!tuner.ok()) die("Autotuner::make", tuner.status());
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    const std::vector<std::int64_t> shape = sweep_shape(i);
    auto w = k->workload(shape);
    if (Status s = w->setup(*dev, 42 + static_cast<std::uint64_t>(i)); !s.ok()) die("setup", s);
    auto best = (*tuner)->tune(*dev, w->args());
    Status v = best.ok() ? w->poison_outputs(*dev) : best.status();
    if (v.ok()) v = (*tuner)->run(*dev, w->args());
    if (v.ok()) v = w->check(*dev);
    std::fprintf(stderr, "[%d/%d] %s: %s\n", i + 1, count, w->size_text().c_str(),
                 v.ok() ? best->to_string().c_str() : v.to_string().c_str());
    if (!v.ok()) ++failures;
  }
  tuner->reset();  // the Autotuner before the device
  return failures == 0 ? 0 : 1;
}
