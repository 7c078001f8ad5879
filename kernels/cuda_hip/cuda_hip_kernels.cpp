// The bundled CUDA/HIP kernels: sources (embedded at build time with prelude.h pasted in),
// signatures, tuning spaces with their device constraints, launch grids, keys and workloads.
// Constraints are pure functions of Config + DeviceInfo, so the accepted set for a device can
// be enumerated on a hand-built DeviceInfo without hardware.
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "contracts.hpp"
#include "tune/kernels/bundled.hpp"

namespace tune::kernels {
// Named inside the anonymous namespace: a unity build may put this file and its sibling backend's
// (same kernel names) into one translation unit.
namespace {
namespace cuda_hip_sources {

#include "matmul_f16.cu.inc"
#include "matmul_f32.cu.inc"
#include "matmul_wgmma.cu.inc"
#include "reduce_sum.cu.inc"
#include "vector_add.cu.inc"

std::uint32_t ceil_div(std::int64_t a, std::int64_t b) {
  // 0 for an empty problem (a <= 0): a grid that launches nothing (ResultSource::empty).
  return static_cast<std::uint32_t>(std::max<std::int64_t>(0, (a + b - 1) / b));
}

KernelSource cuda_hip_source(const char* entry, const char* text) {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = entry;
  s.text = text;
  return s;
}

// Threads per block within the device limit (0 = unknown: accepted).
bool threads_fit(const Config& c, const DeviceInfo& d) {
  return d.max_threads_per_block == 0 || c.launch().block.product() <= d.max_threads_per_block;
}

// Dynamic shared memory within the opt-in limit (0 = unknown: accepted).
bool shared_fits(const Config& c, const DeviceInfo& d) {
  return d.shared_bytes_per_block_optin == 0 ||
         c.launch().shared_bytes <= d.shared_bytes_per_block_optin;
}

std::int64_t warp_of(const DeviceInfo& d) { return d.warp_size != 0 ? d.warp_size : 32; }

// The n-element kernels (vector_add, reduce_sum): a block covers block.x * EPT elements.
LaunchDims elementwise_dims(const Config& c, std::int64_t n) {
  LaunchDims d;
  d.block = {c.launch().block.x, 1, 1};
  d.grid = {ceil_div(n, std::int64_t{c.launch().block.x} * c.get_int("EPT", 1)), 1, 1};
  return d;
}

BundledKernel vector_add() {
  BundledKernel k = detail::contract("vector_add");
  KernelDef& d = k.def;
  d.sources = {cuda_hip_source("vector_add", k_vector_add_cu)};
  d.space = ConfigSpace{}
                .param(std::string(kBlockX), {128, 256, 512, 1024})
                .param("EPT", {1, 2, 4, 8})
                .param("VEC", std::vector<Value>{false, true})
                .constrain("VEC needs EPT % 4 == 0",
                           [](const Config& c, const DeviceInfo&) {
                             return !c.get_bool("VEC") || c.get_int("EPT") % 4 == 0;
                           })
                .constrain("block.x <= max threads per block", threads_fit);
  d.dims = [](const Config& c, ArgList args) { return elementwise_dims(c, args[3].as_int()); };
  k.demo_sizes = {{std::int64_t{1} << 26}};
  k.test_sizes = {{1}, {1000}, {4099}, {100003}};
  k.default_config = Config{{"EPT", 1}, {"VEC", false}}.set(kBlockX, 256);
  return k;
}

BundledKernel reduce_sum() {
  BundledKernel k = detail::contract("reduce_sum");
  KernelDef& d = k.def;
  d.sources = {cuda_hip_source("reduce_sum", k_reduce_sum_cu)};
  d.space = ConfigSpace{}
                .param(std::string(kBlockX), {128, 256, 512, 1024})
                .param("EPT", {1, 2, 4, 8, 16})
                .constrain("block.x is a multiple of the warp, at most warp^2 threads",
                           [](const Config& c, const DeviceInfo& dev) {
                             const std::int64_t w = warp_of(dev), b = c.launch().block.x;
                             return b % w == 0 && b / w <= w;
                           })
                .constrain("block.x <= max threads per block", threads_fit);
  d.dims = [](const Config& c, ArgList args) { return elementwise_dims(c, args[2].as_int()); };
  k.demo_sizes = {{std::int64_t{1} << 26}};
  k.test_sizes = {{1}, {1000}, {4099}, {100003}};
  k.default_config = Config{{"EPT", 1}}.set(kBlockX, 256);
  return k;
}

// fp32 SIMT matmul: dynamic shared memory of its pipeline (see matmul_f32.cu).
void matmul_f32_derive(Config& c) {
  const std::int64_t bytes =
      c.launch().num_stages * c.get_int("BK") * ((c.get_int("BM") + 4) + (c.get_int("BN") + 4)) * 4;
  c.launch().shared_bytes = static_cast<std::uint32_t>(bytes);
}

// The static_asserts of matmul_f32.cu, for this device's warp size.
bool matmul_f32_shape_ok(const Config& c, const DeviceInfo& dev) {
  const std::int64_t w = warp_of(dev), wtn = c.get_int("WTN"), threads = c.launch().block.x;
  const std::int64_t bm = c.get_int("BM"), bn = c.get_int("BN"), bk = c.get_int("BK");
  if (w % wtn != 0) return false;
  const std::int64_t wm = (w / wtn) * c.get_int("TM"), wn = wtn * c.get_int("TN");
  if (bm % wm != 0 || bn % wn != 0) return false;
  if ((bm / wm) * (bn / wn) * w != threads) return false;
  return (bm * bk) % threads == 0 && (bk * bn / 4) % threads == 0;
}

BundledKernel matmul_f32() {
  BundledKernel k = detail::contract("matmul_f32");
  KernelDef& d = k.def;
  d.sources = {cuda_hip_source("matmul_f32", k_matmul_f32_cu)};
  d.space = ConfigSpace{}
                // A focused space (24 configurations on NVIDIA): the wide 128-column tiles with
                // 8-row thread tiles that SIMT sgemm kernels win with; BK, thread-tile width,
                // warp shape, threads and pipeline depth are tuned.
                .param("BM", {64, 128})
                .param("BN", {128})
                .param("BK", {8, 16})
                .param("TM", {8})
                .param("TN", {4, 8})
                .param("WTN", {4, 8})
                .param(std::string(kBlockX), {128, 256})
                .param(std::string(kNumStages), {2, 3})
                .derive(matmul_f32_derive)
                .constrain("warp, thread and block tiles fit together", matmul_f32_shape_ok)
                .constrain("block.x <= max threads per block", threads_fit)
                .constrain("shared memory <= opt-in limit", shared_fits);
  d.dims = [](const Config& c, ArgList args) {
    LaunchDims l;
    l.block = {c.launch().block.x, 1, 1};
    l.grid = {ceil_div(args[4].as_int(), c.get_int("BN")),
              ceil_div(args[3].as_int(), c.get_int("BM")), 1};
    l.shared_bytes = c.launch().shared_bytes;
    return l;
  };
  k.demo_sizes = {{4096, 4096, 4096}};
  k.test_sizes = {{1, 1, 1}, {17, 33, 9}, {64, 64, 64}, {100, 130, 72}, {129, 257, 40}};
  k.default_config = Config{{"BM", 64}, {"BN", 128}, {"BK", 8}, {"TM", 8}, {"TN", 8}, {"WTN", 8}}
                         .set(kBlockX, 128)
                         .set(kNumStages, 2);
  matmul_f32_derive(k.default_config);
  return k;
}

// One fp16 tensor-core configuration: block tile, K step, warps along M, threads, stages.
Config matmul_f16_config(int bm, int bn, int bk, int warps_m, int threads, int stages) {
  Config c{{"BM", bm}, {"BN", bn}, {"BK", bk}, {"WARPS_M", warps_m}};
  c.set(kBlockX, threads).set(kNumStages, stages);
  // Padded A and B tiles per stage, in halves; the epilogue reuses the same memory for the
  // padded BM x (BN + 8) C tile (see matmul_f16.cu).
  const int pipeline = stages * (bm * (bk + 8) + bk * (bn + 8));
  const int c_tile = bm * (bn + 8);
  c.launch().shared_bytes = static_cast<std::uint32_t>(std::max(pipeline, c_tile) * 2);
  return c;
}

// The static_asserts of matmul_f16.cu: the tensor-core path (warps of 32) and the SIMT
// fallback (16 threads across N) must both accept the configuration.
bool matmul_f16_shape_ok(const Config& c, const DeviceInfo&) {
  const std::int64_t threads = c.launch().block.x, warps = threads / 32;
  const std::int64_t bm = c.get_int("BM"), bn = c.get_int("BN"), bk = c.get_int("BK");
  const std::int64_t wm_count = c.get_int("WARPS_M");
  if (threads % 32 != 0 || warps % wm_count != 0) return false;
  const std::int64_t wm = bm / wm_count, wn = bn / (warps / wm_count);
  return wm % 16 == 0 && wn % 16 == 0 && bk % 32 == 0 && (bm * bk / 8) % threads == 0 &&
         (bk * bn / 8) % threads == 0 && threads % (bk / 8) == 0 && threads % (bn / 8) == 0 &&
         (bm * bn / 8) % threads == 0 && bm % (threads / 16) == 0 && bn % 16 == 0;
}

BundledKernel matmul_f16() {
  BundledKernel k = detail::contract("matmul_f16");
  KernelDef& d = k.def;
  d.sources = {cuda_hip_source("matmul_f16", k_matmul_f16_cu)};
  // 16 configurations (the tuning-time figure). On Hopper the mma.sync kernel is bound
  // by shared-memory bandwidth (ldmatrix + cp.async) and L2 traffic, so the list is centred on
  // 64x64 warp tiles (the most MMAs per ldmatrix that fit the register file) in 128x256 and
  // 256x128 blocks of 8 warps (one block per SM), plus 128x128 blocks that fit two per SM.
  d.space = ConfigSpace::list({
                                  matmul_f16_config(128, 256, 32, 2, 256, 3),
                                  matmul_f16_config(128, 256, 32, 2, 256, 4),
                                  matmul_f16_config(128, 256, 32, 2, 256, 5),
                                  matmul_f16_config(128, 256, 64, 2, 256, 3),
                                  matmul_f16_config(128, 256, 64, 2, 256, 4),
                                  matmul_f16_config(256, 128, 32, 4, 256, 3),
                                  matmul_f16_config(256, 128, 32, 4, 256, 4),
                                  matmul_f16_config(256, 128, 32, 4, 256, 5),
                                  matmul_f16_config(256, 128, 64, 4, 256, 3),
                                  matmul_f16_config(256, 128, 64, 4, 256, 4),
                                  matmul_f16_config(128, 128, 32, 2, 128, 3),
                                  matmul_f16_config(128, 128, 32, 2, 128, 4),
                                  matmul_f16_config(128, 128, 32, 2, 256, 4),
                                  matmul_f16_config(128, 128, 64, 2, 256, 3),
                                  matmul_f16_config(128, 128, 64, 2, 256, 4),
                                  matmul_f16_config(64, 128, 32, 2, 128, 4),
                              })
                .constrain("tensor-core and SIMT tiles fit together", matmul_f16_shape_ok)
                .constrain("block.x <= max threads per block", threads_fit)
                .constrain("shared memory <= opt-in limit", shared_fits);
  d.dims = [](const Config& c, ArgList args) {
    LaunchDims l;
    l.block = {c.launch().block.x, 1, 1};
    l.grid = {
        ceil_div(args[3].as_int(), c.get_int("BM")) * ceil_div(args[4].as_int(), c.get_int("BN")),
        1, 1};
    l.shared_bytes = c.launch().shared_bytes;
    return l;
  };
  k.demo_sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  k.test_sizes = {{1, 1, 1}, {17, 33, 9}, {64, 64, 64}, {100, 130, 72}, {129, 257, 40}};
  k.default_config = matmul_f16_config(128, 128, 32, 2, 128, 3);
  return k;
}

// One wgmma configuration (matmul_wgmma.cu): block tile, consumer warpgroups, stages, tile
// order, k per stage, blocks per cluster along M, ping-pong consumers (each a whole tile, their
// main loops in turn), the TMA-store epilogue (through a shared-memory buffer per consumer),
// split K (a cluster of split_k blocks per tile, each a slice of k, reduced through their
// shared memory).
struct WgmmaShape {
  int bm, bn, consumers, stages, group_m;
  int bk = 64;
  int cluster_m = 1;
  bool pingpong = false;
  bool tma_store = false;
  int split_k = 1;
};

// Rows of a tile one consumer stores: all of them with ping-pong, else its share.
int wgmma_rows_per_consumer(const Config& c) {
  const auto bm = static_cast<int>(c.get_int("BM"));
  return c.get_int("WG_PINGPONG", 0) ? bm : bm / static_cast<int>(c.get_int("WG_CONSUMERS"));
}

// Shared memory: 1024 bytes of alignment slack, the stages (A and B tiles), with the TMA store
// a buffer per consumer (its rows x BN), a full and an empty mbarrier per stage, and with
// ping-pong a turn mbarrier per consumer (split K's partial tiles reuse the stages). BK,
// CLUSTER_M, WG_PINGPONG, WG_TMA_STORE and SPLIT_K are parameters only where they are not the
// kernel's defaults (64, 1, 0, 0, 1), so the configurations that predate them keep their names
// (and their cached results).
Config matmul_wgmma_config(const WgmmaShape& w) {
  Config c{{"BM", w.bm}, {"BN", w.bn}, {"WG_CONSUMERS", w.consumers}, {"GROUP_M", w.group_m}};
  if (w.bk != 64) c.set("BK", w.bk);
  if (w.cluster_m != 1) c.set("CLUSTER_M", w.cluster_m);
  if (w.pingpong) c.set("WG_PINGPONG", 1);
  if (w.tma_store) c.set("WG_TMA_STORE", 1);
  if (w.split_k != 1) c.set("SPLIT_K", w.split_k);
  c.set(kBlockX, 128 * (w.consumers + 1)).set(kNumStages, w.stages);
  const int epilogue = w.tma_store ? w.consumers * wgmma_rows_per_consumer(c) * w.bn * 2 : 0;
  c.launch().shared_bytes =
      static_cast<std::uint32_t>(1024 + w.stages * ((w.bm * w.bk + w.bk * w.bn) * 2 + 16) +
                                 epilogue + (w.pingpong ? 8 * w.consumers : 0));
  return c;
}

// Persistent blocks launched at most: the SM count of the H100 SXM, H200 and H800 (132). A
// device with fewer SMs runs the surplus as a short second wave (correct, a little slower);
// KernelDef::dims sees no DeviceInfo, and a heuristic (which would) costs every call its
// cheap hit path.
constexpr std::int64_t kWgmmaPersistentBlocks = 132;

// Persistent clusters of `blocks` blocks launched at most: as many as fit at once on an H100
// (cudaOccupancyMaxActiveClusters with the space's shared-memory sizes: 132 blocks alone, 66
// clusters of two, but only 30 of four at 132 KB and more (split K's), as a cluster stays within
// one GPC and not every GPC's SM count is a multiple of four;
// studies/data/2026-12-07-h100-wgmma-clusters.tar.xz). A cluster past those would wait for one to
// finish all its tiles: a second wave.
std::int64_t wgmma_persistent_clusters(std::int64_t blocks) {
  return blocks == 4 ? 30 : kWgmmaPersistentBlocks / blocks;
}

// matmul_wgmma_f16 / matmul_wgmma_bf16: sm_90a only (wgmma and TMA), offered by the space on
// sm_90 devices alone; the mma.sync matmul_f16 stays the kernel of other architectures. Every
// configuration takes any M, N, K: shapes TMA cannot address (N or K not a multiple of 8) get
// zero tensor maps and the kernel's copy path (see matmul_wgmma.cu).
BundledKernel matmul_wgmma(const char* name, bool bf16) {
  BundledKernel k = detail::contract(name);
  KernelDef& d = k.def;
  KernelSource src = cuda_hip_source("matmul_wgmma", k_matmul_wgmma_cu);
  if (bf16) src.options = {"-DWG_BF16=1"};
  src.arch_specific = true;  // -arch=sm_90a: wgmma exists on sm_90a only
  // A (M x K) in BM x 64 boxes, 128-byte swizzled (one box per stage at BK = 64, two at
  // BK = 128), or BM x 32 boxes 64-byte swizzled at BK = 32; B (K x N) in BK x 64 boxes,
  // 128-byte swizzled. Passed by value after (A, B, C, M, N, K) and re-encoded only when the
  // call's buffers or sizes change (see TensorMapSpec for why not a __constant__ module
  // global). Zeros, not invalid_argument, where TMA cannot address them: the kernel copies
  // those tiles itself.
  src.tensor_maps = [](const Config& c) {
    using S = TensorMapSpec::Swizzle;
    const auto bm = static_cast<std::uint32_t>(c.get_int("BM"));
    const auto bk = static_cast<std::uint32_t>(c.get_int("BK", 64));
    const std::uint32_t a_cols = std::min<std::uint32_t>(bk, 64);
    // C (M x N) in boxes of one consumer's rows x 64 columns, 128-byte swizzled: the TMA-store
    // epilogue's (passed to every configuration; the others never read it).
    const auto rows = static_cast<std::uint32_t>(wgmma_rows_per_consumer(c));
    return std::vector<TensorMapSpec>{
        {0, 3, 5, bm, a_cols, bk == 32 ? S::bytes64 : S::bytes128, true},
        {1, 5, 4, bk, 64, S::bytes128, true},
        {2, 3, 4, rows, 64, S::bytes128, true}};
  };
  d.sources = {std::move(src)};
  // 60 configurations on an H100 or H200. At BK = 64: four tile shapes (one or two consumer
  // warpgroups, at most 128 fp32 accumulators per consumer thread) x 3-5 stages (128x128 tiles
  // 4-5) x two tile orders, less the 5-stage 48 KiB-per-stage ones that exceed 227 KiB of shared
  // memory (16; two stages, at most 0.55-0.68x of the best at 3001x4104x2056, 4096^3,
  // 8192x8192x512 and 8192^3 on an H100, are gone, and 128x128 at three, at most 0.62-0.67x of
  // the best at the ten (type, shape) pairs of the 2026-12-07 H100 screens, left for split K). At
  // BK = 128 (half the barrier round trips per k): the two-consumer 128x128 tile at 3 stages (2).
  // At BK = 32: 128x256 at 4 stages (1). (BK = 128 at two stages and BK = 32 with 128x128 tiles, at
  // most 0.54-0.70x of the best in the same screens, left for the 128x192 tiles.) In clusters of
  // two blocks along M sharing (multicasting) their B tiles, which halves B's L2 traffic: the
  // two-consumer 128x128, 128x256 and 256x128 tiles at 3 and 4 stages, both tile orders (12), and
  // with the TMA store 128x256 and 256x128 at 3 (4). 128x192 tiles (one m64n192 wgmma per consumer
  // and k-step; at 3001x4104x2056 they make 264 pairs, four full waves of 66 clusters, where
  // 128x256 leaves a fourth wave 9% full): clustered with the TMA store at 3-4 stages, both
  // orders, clustered at 4, the TMA store alone at 4 (6): the fastest at 3001x4104x2056 (A's
  // and B's rows both off 128-byte lines), 8192x8192x512 and 8192^3 on an H100. Split K in
  // clusters of 2 and 4 blocks per tile (for shapes of few tiles and long K, which leave most
  // SMs idle otherwise): 128x128 at 4 stages and 128x256 at 3 (4). Ping-pong
  // (two consumers, each a whole tile of 128 accumulators per thread; the epilogue of one
  // under the other's main loop, for short K): 128x128 at 4-6 stages, 64x256 at 4-5 (5).
  // The TMA-store epilogue (the tile through shared memory, stored asynchronously under the
  // next main loop; for short K and odd shapes) on the two-consumer tiles at the stages its
  // buffers leave room for: 128x256 and 256x128 at 3, both orders; 128x128 at 4-5; ping-pong
  // 128x128 at 4-5 and 64x256 at 3-4 (10).
  std::vector<Config> configs;
  for (auto [bm, bn, consumers, first] : {std::tuple{128, 128, 1, 4}, std::tuple{128, 128, 2, 4},
                                          std::tuple{128, 256, 2, 3}, std::tuple{256, 128, 2, 3}})
    for (int stages = first; stages <= 5; ++stages)
      for (int group_m : {1, 8})
        configs.push_back(matmul_wgmma_config(
            {.bm = bm, .bn = bn, .consumers = consumers, .stages = stages, .group_m = group_m}));
  for (int group_m : {1, 8})
    configs.push_back(matmul_wgmma_config(
        {.bm = 128, .bn = 128, .consumers = 2, .stages = 3, .group_m = group_m, .bk = 128}));
  configs.push_back(matmul_wgmma_config(
      {.bm = 128, .bn = 256, .consumers = 2, .stages = 4, .group_m = 8, .bk = 32}));
  for (auto [bm, bn] : {std::pair{128, 128}, std::pair{128, 256}, std::pair{256, 128}})
    for (int stages : {3, 4})
      for (int group_m : {1, 8})
        configs.push_back(matmul_wgmma_config({.bm = bm,
                                               .bn = bn,
                                               .consumers = 2,
                                               .stages = stages,
                                               .group_m = group_m,
                                               .cluster_m = 2}));
  for (auto [bm, bn] : {std::pair{128, 256}, std::pair{256, 128}})
    for (int group_m : {1, 8})
      configs.push_back(matmul_wgmma_config({.bm = bm,
                                             .bn = bn,
                                             .consumers = 2,
                                             .stages = 3,
                                             .group_m = group_m,
                                             .cluster_m = 2,
                                             .tma_store = true}));
  for (int stages : {3, 4})
    for (int group_m : {1, 8})
      configs.push_back(matmul_wgmma_config({.bm = 128,
                                             .bn = 192,
                                             .consumers = 2,
                                             .stages = stages,
                                             .group_m = group_m,
                                             .cluster_m = 2,
                                             .tma_store = true}));
  configs.push_back(matmul_wgmma_config(
      {.bm = 128, .bn = 192, .consumers = 2, .stages = 4, .group_m = 8, .cluster_m = 2}));
  configs.push_back(matmul_wgmma_config(
      {.bm = 128, .bn = 192, .consumers = 2, .stages = 4, .group_m = 8, .tma_store = true}));
  for (int split_k : {2, 4}) {
    configs.push_back(matmul_wgmma_config(
        {.bm = 128, .bn = 128, .consumers = 2, .stages = 4, .group_m = 8, .split_k = split_k}));
    configs.push_back(matmul_wgmma_config(
        {.bm = 128, .bn = 256, .consumers = 2, .stages = 3, .group_m = 8, .split_k = split_k}));
  }
  for (int stages : {4, 5, 6})
    configs.push_back(matmul_wgmma_config(
        {.bm = 128, .bn = 128, .consumers = 2, .stages = stages, .group_m = 8, .pingpong = true}));
  for (int stages : {4, 5})
    configs.push_back(matmul_wgmma_config(
        {.bm = 64, .bn = 256, .consumers = 2, .stages = stages, .group_m = 8, .pingpong = true}));
  for (int group_m : {1, 8}) {
    configs.push_back(matmul_wgmma_config({.bm = 128,
                                           .bn = 256,
                                           .consumers = 2,
                                           .stages = 3,
                                           .group_m = group_m,
                                           .tma_store = true}));
    configs.push_back(matmul_wgmma_config({.bm = 256,
                                           .bn = 128,
                                           .consumers = 2,
                                           .stages = 3,
                                           .group_m = group_m,
                                           .tma_store = true}));
  }
  for (int stages : {4, 5}) {
    configs.push_back(matmul_wgmma_config(
        {.bm = 128, .bn = 128, .consumers = 2, .stages = stages, .group_m = 8, .tma_store = true}));
    configs.push_back(matmul_wgmma_config({.bm = 128,
                                           .bn = 128,
                                           .consumers = 2,
                                           .stages = stages,
                                           .group_m = 8,
                                           .pingpong = true,
                                           .tma_store = true}));
    configs.push_back(matmul_wgmma_config({.bm = 64,
                                           .bn = 256,
                                           .consumers = 2,
                                           .stages = stages - 1,
                                           .group_m = 8,
                                           .pingpong = true,
                                           .tma_store = true}));
  }
  d.space = ConfigSpace::list(std::move(configs))
                .constrain("sm_90 (wgmma and TMA of sm_90a)",
                           [](const Config&, const DeviceInfo& dev) {
                             return dev.arch.empty() || dev.arch == "sm_90";
                           })
                .constrain("accumulators fit the register file",
                           [](const Config& c, const DeviceInfo& dev) {
                             // 128 accumulators + ~40 others per consumer thread (ptxas: 154).
                             return dev.registers_per_block == 0 ||
                                    std::int64_t{168} * c.launch().block.x <=
                                        std::int64_t{dev.registers_per_block};
                           })
                .constrain("block.x <= max threads per block", threads_fit)
                .constrain("shared memory <= opt-in limit", shared_fits);
  // With clusters the persistent blocks come in whole clusters, each walking units of
  // CLUSTER_M vertically adjacent tiles (the last unit may reach past M: see the kernel), or
  // with split K single tiles, each block of the cluster a slice of k.
  d.dims = [](const Config& c, ArgList args) {
    LaunchDims l;
    l.block = {c.launch().block.x, 1, 1};
    const std::int64_t cluster_m = c.get_int("CLUSTER_M", 1);
    const std::int64_t cluster = cluster_m * c.get_int("SPLIT_K", 1);
    const std::int64_t units_m =
        (ceil_div(args[3].as_int(), c.get_int("BM")) + cluster_m - 1) / cluster_m;
    const std::int64_t units = units_m * ceil_div(args[4].as_int(), c.get_int("BN"));
    l.grid = {
        static_cast<std::uint32_t>(cluster * std::min(units, wgmma_persistent_clusters(cluster))),
        1, 1};
    l.cluster = {static_cast<std::uint32_t>(cluster), 1, 1};
    l.shared_bytes = c.launch().shared_bytes;
    return l;
  };
  k.demo_sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  // TMA shapes (N and K multiples of 8; M anything) and copy-path ones: N or K odd, N or K
  // alone not a multiple of 8, tiny.
  k.test_sizes = {{1, 8, 8},         {64, 64, 64},   {100, 136, 72},  {129, 264, 40},
                  {1000, 1032, 520}, {1, 1, 1},      {3, 5, 7},       {17, 33, 9},
                  {100, 130, 72},    {129, 257, 40}, {200, 136, 100}, {300, 1030, 520}};
  k.default_config =
      matmul_wgmma_config({.bm = 128, .bn = 128, .consumers = 2, .stages = 4, .group_m = 8});
  return k;
}

}  // namespace cuda_hip_sources
}  // namespace

std::vector<BundledKernel> cuda_hip_kernels() {
  std::vector<BundledKernel> out;
  out.push_back(cuda_hip_sources::vector_add());
  out.push_back(cuda_hip_sources::reduce_sum());
  out.push_back(cuda_hip_sources::matmul_f32());
  out.push_back(cuda_hip_sources::matmul_f16());
  out.push_back(cuda_hip_sources::matmul_wgmma("matmul_wgmma_f16", false));
  out.push_back(cuda_hip_sources::matmul_wgmma("matmul_wgmma_bf16", true));
  return out;
}

}  // namespace tune::kernels
