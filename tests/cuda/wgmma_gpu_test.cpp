// The sm_90 wgmma matmuls on an H100/H200: every configuration of their space (tile K 32, 64
// and 128; clusters of two blocks multicasting B; ping-pong consumers) against the CPU reference on
// random inputs, fp16 and bf16, at shapes TMA loads (ragged M, odd and skinny shapes with N and K
// multiples of 8) and at shapes it cannot address, which take the kernel's copy path (N odd, K odd,
// N or K alone not a multiple of 8, tiny), both with odd numbers of tile rows (a cluster's last
// pair of tiles reaches past M) and with more tile pairs than clusters (several per cluster); the
// ping-pong configurations also at K = 512, a skinny shape and 3001 x 4104 x 2056; split K
// (clusters of 2 and 4 blocks per tile) at skinny long-K shapes, one k-tile, several tiles per
// cluster and the copy path; clustered configurations launched without their cluster; the
// tensor maps re-encoded when a later call passes other buffers and zeros for a shape TMA cannot
// address, whatever came before; the Autotuner's winner correct at both kinds of shape, and its
// cache hits allocating nothing. Each case skips with the reason without a CUDA device or on
// another architecture; a watchdog turns a pipeline deadlock (an mbarrier never completing) into a
// failure. Never asserts which configuration is faster.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "gpu_tuner.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "watchdog.hpp"

namespace {

using tune::kernels::BundledKernel;

const char* const kWgmmaKernels[] = {"matmul_wgmma_f16", "matmul_wgmma_bf16"};

std::unique_ptr<tune::Device> open_hopper_or_skip() {
  auto dev = tune::testing::open_cuda_or_skip();
  const std::string arch = dev->info().arch;
  if (arch != "sm_90") TUNE_SKIP("the wgmma matmuls need an sm_90 GPU; this one is " + arch);
  return dev;
}

BundledKernel wgmma_kernel(const char* name) {
  auto k = tune::kernels::bundled_kernel(tune::Language::cuda_hip, name);
  REQUIRE_MESSAGE(k.has_value(), std::string(name) << " is not bundled");
  return std::move(*k);
}

std::string size_name(const std::vector<std::int64_t>& s) {
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

// Whether TMA can address an M x N x K problem: 16-byte rows of A (K) and B (N).
bool tma_shape(const std::vector<std::int64_t>& s) { return s[1] % 8 == 0 && s[2] % 8 == 0; }

// The bundled test sizes of one kind (TMA's or the copy path's) and `extra` ones.
std::vector<std::vector<std::int64_t>> sizes_of(const BundledKernel& k, bool tma,
                                                std::vector<std::vector<std::int64_t>> extra) {
  std::vector<std::vector<std::int64_t>> sizes;
  for (const auto& size : k.test_sizes)
    if (tma_shape(size) == tma) sizes.push_back(size);
  for (auto& size : extra) {
    REQUIRE(tma_shape(size) == tma);
    sizes.push_back(std::move(size));
  }
  return sizes;
}

// Every configuration `pick` accepts (at least `at_least` of them) on every size of `sizes`:
// compiled once, launched on poisoned outputs, checked against the CPU reference.
void check_configs(const char* name, const std::function<bool(const tune::Config&)>& pick,
                   std::size_t at_least, const std::vector<std::vector<std::int64_t>>& sizes,
                   std::uint64_t seed) {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel(name);
  const tune::KernelSource& src = *k.def.source_for(tune::Language::cuda_hip);
  auto offered = k.def.space.enumerate(dev->info());
  REQUIRE_MESSAGE(offered.ok(), offered.status().to_string());
  std::vector<tune::Config> configs;
  std::copy_if(offered->begin(), offered->end(), std::back_inserter(configs), pick);
  REQUIRE(configs.size() >= at_least);
  std::vector<std::unique_ptr<tune::CompiledKernel>> compiled;
  for (const tune::Config& c : configs) {
    auto ck = dev->compile(src, c);
    REQUIRE_MESSAGE(ck.ok(), c.to_string() << ": " << ck.status().to_string());
    std::printf("%s %s: %s\n", name, c.to_string().c_str(), (*ck)->resources().to_string().c_str());
    compiled.push_back(std::move(*ck));
  }
  for (const auto& size : sizes) {
    auto w = k.workload(size);
    REQUIRE(w->setup(*dev, seed++).ok());
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const tune::Config& c = configs[i];
      CAPTURE(c.to_string());
      CAPTURE(size_name(size));
      const tune::testing::Watchdog dog(
          std::string(name) + " " + c.to_string() + " at " + size_name(size), 60);
      REQUIRE(w->poison_outputs(*dev).ok());
      const tune::Status ls = dev->launch(*compiled[i], k.def.dims(c, w->args()), w->args());
      REQUIRE_MESSAGE(ls.ok(), ls.to_string());
      const tune::Status cs = w->check(*dev);
      CHECK_MESSAGE(cs.ok(), cs.to_string());
    }
  }
  compiled.clear();  // before the device
}

// Every configuration on every size of its kind (TMA's or the copy path's).
void check_every_config(const char* name, bool tma) {
  const BundledKernel k = wgmma_kernel(name);
  // TMA: the bundled sizes (ragged M; N and K multiples of 8 but not of the tiles), a skinny K,
  // and a square one of several waves of persistent tiles; 5 and 21 tile rows of 128, 3 and 11
  // of 256 (odd: a cluster's last pair has its second tile past M; at 2600 rows the pairs
  // outnumber the clusters for every tile, 88-176 of 128 rows, 96 of 256). Copy path: the
  // bundled ones (N odd, K odd, N % 8 != 0 alone, K % 8 != 0 alone, tiny), and larger ones whose
  // k-tiles outnumber every configuration's stages, so the copy path's stages are reused; 513
  // and 2600 rows are odd numbers of 128- and 256-row tiles.
  const auto sizes =
      tma ? sizes_of(k, true,
                     {{2048, 1024, 512}, {1536, 1536, 1536}, {640, 264, 200}, {2600, 2048, 256}})
          : sizes_of(k, false,
                     {{513, 385, 1001}, {640, 1000, 1028}, {1000, 1030, 520}, {2600, 1030, 136}});
  REQUIRE(sizes.size() >= 5);
  check_configs(
      name, [](const tune::Config&) { return true; }, 24, sizes, tma ? 77 : 177);
}

// The ping-pong configurations (each consumer a whole tile, main loops in turn) at the shapes
// they are for and the ones the issue names: K = 512 (many tiles per block, so both consumers
// and the turn barriers go round many times), skinny M (fewer tiles than blocks: one consumer
// of a block idles), 3001 x 4104 x 2056 (ragged in M, N and K), and the copy path at K = 512
// and an odd shape.
void check_pingpong(const char* name) {
  check_configs(
      name, [](const tune::Config& c) { return c.get_int("WG_PINGPONG", 0) == 1; }, 4,
      {{4096, 4096, 512},
       {2048, 1024, 512},
       {128, 4096, 4096},
       {3001, 4104, 2056},
       {1000, 1030, 512},
       {2900, 1031, 1001}},
      277);
}

// The TMA-store configurations (the tile through shared memory, stored by TMA under the next
// main loop) at K = 512 (many tiles per consumer: the buffer's reuse waits on the previous
// stores), skinny M, ragged M and N (boxes clipped at both edges; 4104 is 8 past a multiple of
// 64), an M below one consumer's rows (the second consumer's tile is wholly past M: it stores
// nothing) and N = 8; K odd (the copy path's loads with TMA's stores) and N % 8 != 0 (plain
// stores: no map for C); with clusters, an odd number of tile rows and more pairs than clusters
// (2600 rows: the last pair's second tile past M stores nothing).
void check_tma_store(const char* name) {
  check_configs(
      name, [](const tune::Config& c) { return c.get_int("WG_TMA_STORE", 0) == 1; }, 8,
      {{4096, 4096, 512},
       {2048, 1024, 512},
       {128, 4096, 4096},
       {3001, 4104, 2056},
       {2600, 4104, 512},
       {65, 136, 72},
       {1, 8, 8},
       {1000, 1032, 519},
       {1000, 1030, 512}},
      377);
}

// The split-K configurations (clusters of 2 and 4 blocks per tile, each a slice of k, the
// partials summed through the cluster's shared memory): skinny shapes of few tiles and long K
// (the shapes they are for; K not a multiple of the slices), K of one k-tile (the other blocks'
// slices are empty: their partials are zeros), more tiles than clusters (each cluster walks
// several, the stages reused between the partials and the next tile's loads), ragged M and N,
// and the copy path (N % 8 != 0, K odd, N odd: the unpaired stores).
void check_split_k(const char* name) {
  check_configs(
      name, [](const tune::Config& c) { return c.get_int("SPLIT_K", 1) > 1; }, 4,
      {{256, 512, 8192},
       {1000, 1032, 5000},
       {129, 264, 40},
       {2600, 2048, 256},
       {1, 8, 8},
       {300, 1030, 4001},
       {513, 385, 1001}},
      477);
}

// matmul_wgmma_f16's default configuration, compiled once, launched on workloads of `sizes`
// (each on buffers of its own) in the order `order` (indices into `sizes`), each output
// checked against the CPU reference.
void check_default_in_order(const std::string& what,
                            const std::vector<std::vector<std::int64_t>>& sizes,
                            std::initializer_list<std::size_t> order) {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto ck = dev->compile(*k.def.source_for(tune::Language::cuda_hip), k.default_config);
  REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
  const tune::testing::Watchdog dog("matmul_wgmma_f16 on " + what, 60);
  std::vector<std::unique_ptr<tune::kernels::Workload>> ws;
  for (const auto& size : sizes) {
    ws.push_back(k.workload(size));
    REQUIRE(ws.back()->setup(*dev, ws.size()).ok());
  }
  for (const std::size_t i : order) {
    tune::kernels::Workload& w = *ws.at(i);
    REQUIRE(w.poison_outputs(*dev).ok());
    const tune::Status ls = dev->launch(**ck, k.def.dims(k.default_config, w.args()), w.args());
    REQUIRE_MESSAGE(ls.ok(), ls.to_string());
    const tune::Status cs = w.check(*dev);
    CHECK_MESSAGE(cs.ok(), w.size_text() << ": " << cs.to_string());
  }
}

// Tunes each wgmma matmul at `size` and checks the winner, under a watchdog.
void check_tuned(const std::vector<std::int64_t>& size) {
  auto dev = open_hopper_or_skip();
  for (const std::string name : kWgmmaKernels) {
    CAPTURE(name);
    const tune::testing::Watchdog dog("tuning " + name + " at " + size_name(size), 300);
    tune::testing::check_tuned_winner(*dev, wgmma_kernel(name.c_str()), size);
  }
}

}  // namespace

TEST_CASE("every wgmma configuration is correct at TMA shapes: fp16") {
  check_every_config(kWgmmaKernels[0], true);
}
TEST_CASE("every wgmma configuration is correct at TMA shapes: bf16") {
  check_every_config(kWgmmaKernels[1], true);
}
TEST_CASE("every wgmma configuration is correct at shapes TMA cannot address: fp16") {
  check_every_config(kWgmmaKernels[0], false);
}
TEST_CASE("every wgmma configuration is correct at shapes TMA cannot address: bf16") {
  check_every_config(kWgmmaKernels[1], false);
}

TEST_CASE("the ping-pong wgmma configurations are correct at K = 512, skinny and ragged: fp16") {
  check_pingpong(kWgmmaKernels[0]);
}
TEST_CASE("the ping-pong wgmma configurations are correct at K = 512, skinny and ragged: bf16") {
  check_pingpong(kWgmmaKernels[1]);
}

TEST_CASE("the TMA-store wgmma configurations are correct at K = 512, skinny and ragged: fp16") {
  check_tma_store(kWgmmaKernels[0]);
}
TEST_CASE("the TMA-store wgmma configurations are correct at K = 512, skinny and ragged: bf16") {
  check_tma_store(kWgmmaKernels[1]);
}

TEST_CASE(
    "the split-K wgmma configurations are correct at skinny, long-K and ragged shapes: fp16") {
  check_split_k(kWgmmaKernels[0]);
}
TEST_CASE(
    "the split-K wgmma configurations are correct at skinny, long-K and ragged shapes: bf16") {
  check_split_k(kWgmmaKernels[1]);
}

TEST_CASE("a later call on other buffers and sizes gets tensor maps for them") {
  // Same sizes on new buffers, then other sizes, then the first buffers again.
  check_default_in_order("changing buffers", {{512, 256, 128}, {512, 256, 128}, {300, 520, 264}},
                         {0, 1, 2, 0});
}

TEST_CASE("a variant alternating TMA shapes and shapes TMA cannot address is right on each") {
  // The kept tensor maps of an aligned call must not leak into a misaligned one (zeros there)
  // nor the zeros into the next aligned one (the kept map or a new one).
  check_default_in_order("alternating load paths",
                         {{512, 256, 128}, {1000, 1031, 520}, {300, 264, 99}}, {0, 1, 0, 2, 1});
}

TEST_CASE("a clustered wgmma configuration launched without its cluster stores nothing") {
  // The kernel's guard: alone in a cluster of one, a CLUSTER_M = 2 block would multicast to
  // and arrive on a block that does not exist, a SPLIT_K block read partials of blocks that do
  // not exist; it returns instead, so the poisoned output stays wrong, and nothing hangs or
  // faults.
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto configs = k.def.space.enumerate(dev->info());
  REQUIRE(configs.ok());
  for (const auto& [param, blocks] :
       {std::pair<const char*, std::uint32_t>{"CLUSTER_M", 2}, {"SPLIT_K", 2}, {"SPLIT_K", 4}}) {
    const auto it = std::find_if(configs->begin(), configs->end(), [&](const tune::Config& c) {
      return c.get_int(param, 1) == blocks;
    });
    REQUIRE(it != configs->end());
    CAPTURE(it->to_string());
    auto ck = dev->compile(*k.def.source_for(tune::Language::cuda_hip), *it);
    REQUIRE_MESSAGE(ck.ok(), ck.status().to_string());
    auto w = k.workload(std::vector<std::int64_t>{512, 256, 1024});
    REQUIRE(w->setup(*dev, 21).ok());
    const tune::testing::Watchdog dog("matmul_wgmma_f16 " + it->to_string() + " unclustered", 60);
    tune::LaunchDims dims = k.def.dims(*it, w->args());
    CHECK(dims.cluster == tune::Dim3{blocks, 1, 1});
    REQUIRE(w->poison_outputs(*dev).ok());
    dims.cluster = tune::Dim3{};
    REQUIRE(dev->launch(**ck, dims, w->args()).ok());
    REQUIRE(dev->synchronize().ok());
    CHECK_FALSE(w->check(*dev).ok());
    // And with its cluster, the same variant computes the product.
    REQUIRE(w->poison_outputs(*dev).ok());
    REQUIRE(dev->launch(**ck, k.def.dims(*it, w->args()), w->args()).ok());
    const tune::Status cs = w->check(*dev);
    CHECK_MESSAGE(cs.ok(), cs.to_string());
  }
}

TEST_CASE("the Autotuner tunes the wgmma matmuls and the winner is correct") {
  check_tuned({2048, 2048, 2048});
}

TEST_CASE("the Autotuner tunes the wgmma matmuls at a shape TMA cannot address") {
  check_tuned({2000, 1030, 1001});
}

#ifndef TUNE_TEST_SANITIZED
TEST_CASE("a cache hit of the tuned wgmma matmul allocates nothing, tensor maps included") {
  auto dev = open_hopper_or_skip();
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto tuner = tune::testing::gpu_test_tuner(k.def);
  // Two workloads of one key: alternating them misses the thread's hit memo every call (the
  // key is built, the tensor maps re-encoded for the other buffers); repeating one hits it.
  auto first = k.workload(std::vector<std::int64_t>{512, 256, 128});
  auto second = k.workload(std::vector<std::int64_t>{512, 256, 128});
  REQUIRE(first->setup(*dev, 11).ok());
  REQUIRE(second->setup(*dev, 12).ok());
  const std::vector<tune::ArgValue> a(first->args().begin(), first->args().end());
  const std::vector<tune::ArgValue> b(second->args().begin(), second->args().end());
  const tune::testing::Watchdog dog("matmul_wgmma_f16 cache hits", 300);
  REQUIRE(tuner->run(*dev, a).ok());  // tunes: allocates freely
  REQUIRE(tuner->run(*dev, b).ok());  // the same key: a hit, tensor maps encoded for b
  REQUIRE(dev->synchronize().ok());
  bool all_ok = true;
  const std::size_t repeated = tune::testing::allocations_of([&] {
    for (int i = 0; i < 100; ++i) all_ok &= tuner->run(*dev, a).ok();
  });
  const std::size_t alternating = tune::testing::allocations_of([&] {
    for (int i = 0; i < 50; ++i) {
      all_ok &= tuner->run(*dev, a).ok();
      all_ok &= tuner->run(*dev, b).ok();
    }
  });
  REQUIRE(dev->synchronize().ok());
  CHECK(all_ok);
  CHECK_MESSAGE(repeated == 0, repeated << " allocations in 100 repeated cache hits");
  CHECK_MESSAGE(alternating == 0, alternating << " allocations in 100 alternating cache hits");
  // And the hits computed the product.
  REQUIRE(second->poison_outputs(*dev).ok());
  REQUIRE(tuner->run(*dev, b).ok());
  const tune::Status v = second->check(*dev);
  CHECK_MESSAGE(v.ok(), v.to_string());
}
#endif
