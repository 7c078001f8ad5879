// The sm_90 wgmma matmuls (matmul_wgmma_f16, matmul_wgmma_bf16) without a GPU: every
// configuration of their space compiles through NVRTC for sm_90a exactly as an H100/H200 would
// compile it, with no spills and within the register file (both load paths: TMA and the copy
// path for shapes TMA cannot address are chosen at run time, so every variant holds both); the
// PTX holds the Hopper instructions the kernel is about (wgmma, TMA, mbarrier, and the copy
// path's proxy fence and vector shared stores; with clusters the multicast TMA, the remote
// mbarrier arrivals and the cluster barriers; at BK = 32 the 64-byte swizzle; with ping-pong
// whole-tile consumers and their turn barriers), and the toolkit's ptxas, when installed,
// assembles it for sm_90a. The space has every tile K, cluster shape and ping-pong, and
// launches clusters as whole clusters. Whether the kernels compute the
// right numbers needs the GPU: wgmma_gpu_test.cpp.
#include <doctest/doctest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "nvrtc_compiler.hpp"
#include "rtc.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"
#include "tune/cuda.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/testing/device_snapshots.hpp"
#include "uncached_compiles.hpp"

namespace {

using tune::kernels::BundledKernel;

const char* const kWgmmaKernels[] = {"matmul_wgmma_f16", "matmul_wgmma_bf16"};

BundledKernel wgmma_kernel(const char* name) {
  auto k = tune::kernels::bundled_kernel(tune::Language::cuda_hip, name);
  REQUIRE_MESSAGE(k.has_value(), std::string(name) << " is not bundled");
  return std::move(*k);
}

// One variant compiled by NVRTC with exactly the options a device would use (which may fail:
// `rc`), the program kept for its PTX or log.
struct NvrtcRun {
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = NVRTC_SUCCESS;
  NvrtcRun() = default;
  NvrtcRun(const NvrtcRun&) = delete;
  NvrtcRun& operator=(const NvrtcRun&) = delete;
  ~NvrtcRun() { (void)nvrtcDestroyProgram(&prog); }
};

void compile_variant(const tune::KernelSource& src, const tune::Config& c, NvrtcRun& run) {
  auto opts = tune::gpu::compile_options(*tune::cuda::detail::nvrtc_compiler(), "sm_90", c, src);
  REQUIRE_MESSAGE(opts.ok(), opts.status().to_string());
  REQUIRE(nvrtcCreateProgram(&run.prog, src.text.c_str(), "matmul_wgmma.cu", 0, nullptr, nullptr) ==
          NVRTC_SUCCESS);
  std::vector<const char*> argv;
  for (const std::string& o : *opts) argv.push_back(o.c_str());
  run.rc = nvrtcCompileProgram(run.prog, static_cast<int>(argv.size()), argv.data());
}

// The PTX NVRTC makes of one variant.
std::string ptx_of(const tune::KernelSource& src, const tune::Config& c) {
  NvrtcRun run;
  compile_variant(src, c, run);
  REQUIRE_MESSAGE(run.rc == NVRTC_SUCCESS, nvrtcGetErrorString(run.rc));
  std::size_t size = 0;
  REQUIRE(nvrtcGetPTXSize(run.prog, &size) == NVRTC_SUCCESS);
  std::string ptx(size, '\0');
  REQUIRE(nvrtcGetPTX(run.prog, ptx.data()) == NVRTC_SUCCESS);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // the size counts the terminator
  return ptx;
}

// NVRTC's result and log for one variant (which may not compile).
std::pair<nvrtcResult, std::string> compile_log(const tune::KernelSource& src,
                                                const tune::Config& c) {
  NvrtcRun run;
  compile_variant(src, c, run);
  std::size_t size = 0;
  REQUIRE(nvrtcGetProgramLogSize(run.prog, &size) == NVRTC_SUCCESS);
  std::string log(size, '\0');
  REQUIRE(nvrtcGetProgramLog(run.prog, log.data()) == NVRTC_SUCCESS);
  return {run.rc, log};
}

// The first configuration of `configs` with BK = `bk` and CLUSTER_M = `cluster` (their
// defaults 64 and 1 when absent).
const tune::Config& find_config(const std::vector<tune::Config>& configs, std::int64_t bk,
                                std::int64_t cluster) {
  for (const tune::Config& c : configs)
    if (c.get_int("BK", 64) == bk && c.get_int("CLUSTER_M", 1) == cluster) return c;
  FAIL("no configuration with BK=" << bk << " CLUSTER_M=" << cluster);
  return configs.front();
}

}  // namespace

TEST_CASE("the wgmma kernel refuses ping-pong with clusters, naming why") {
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  const tune::KernelSource& src = *k.def.source_for(tune::Language::cuda_hip);
  tune::Config c = k.default_config;
  c.set("CLUSTER_M", 2).set("WG_PINGPONG", 1);
  const auto [rc, log] = compile_log(src, c);
  CHECK(rc != NVRTC_SUCCESS);
  CHECK(log.find("WG_PINGPONG needs two or more consumer warpgroups and no clusters") !=
        std::string::npos);
}

TEST_CASE(
    "the wgmma kernel refuses split K beside clusters, ping-pong or the TMA store, naming why") {
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  const tune::KernelSource& src = *k.def.source_for(tune::Language::cuda_hip);
  for (const char* other : {"CLUSTER_M", "WG_PINGPONG", "WG_TMA_STORE"}) {
    CAPTURE(other);
    tune::Config c = k.default_config;
    c.set("SPLIT_K", 2).set(other, std::string(other) == "CLUSTER_M" ? 2 : 1);
    const auto [rc, log] = compile_log(src, c);
    CHECK(rc != NVRTC_SUCCESS);
    CHECK(log.find("SPLIT_K takes no CLUSTER_M, WG_PINGPONG or WG_TMA_STORE") != std::string::npos);
  }
  tune::Config three = k.default_config;
  three.set("SPLIT_K", 3);
  const auto [rc, log] = compile_log(src, three);
  CHECK(rc != NVRTC_SUCCESS);
  CHECK(log.find("SPLIT_K must be 1, 2 or 4") != std::string::npos);
}

namespace {

// Every configuration of bundled kernel `name` compiles for sm_90a with no spills, within the
// register file. One test case per kernel: CTest runs the two (40-50 s each) side by side.
void check_every_configuration(const char* name) {
  const tune::testing::UncachedCompiles uncached;  // the logs must carry ptxas's lines
  const tune::DeviceInfo h100 = tune::testing::nvidia_snapshot("sm_90");
  const BundledKernel k = wgmma_kernel(name);
  const tune::KernelSource* src = k.def.source_for(tune::Language::cuda_hip);
  REQUIRE(src != nullptr);
  CHECK(src->arch_specific);
  auto configs = k.def.space.enumerate(h100);
  REQUIRE_MESSAGE(configs.ok(), configs.status().to_string());
  CHECK(configs->size() >= 24);
  std::printf("%s: %zu configurations on %s\n", name, configs->size(), h100.name.c_str());
  for (const tune::Config& c : *configs) {
    CAPTURE(c.to_string());
    auto out = tune::cuda::compile("sm_90", *src, c);
    REQUIRE_MESSAGE(out.ok(), out.status().to_string());
    // A CUBIN (an ELF object) that names the entry point: the checks every other bundled
    // kernel gets in rtc_compile_test's sweep, which leaves the wgmma kernels to this case.
    CHECK(out->binary.starts_with("\177ELF"));
    CHECK(out->binary.find(src->entry) != std::string::npos);
    const tune::KernelResources r = tune::gpu::parse_resource_log(out->log);
    std::printf("  %-70s regs=%u spill=%u\n", c.to_string().c_str(), r.registers, r.spill_bytes);
    CHECK(r.registers > 0);
    CHECK(r.spill_bytes == 0);
    // One block per SM: its threads' registers fit the register file.
    CHECK(std::uint64_t{r.registers} * c.launch().block.x <= h100.registers_per_block);
  }
}

}  // namespace

TEST_CASE("every matmul_wgmma_f16 configuration compiles for sm_90a with no spills") {
  check_every_configuration("matmul_wgmma_f16");
}

TEST_CASE("every matmul_wgmma_bf16 configuration compiles for sm_90a with no spills") {
  check_every_configuration("matmul_wgmma_bf16");
}

TEST_CASE("the wgmma PTX has wgmma, TMA, mbarriers and the copy path; ptxas assembles it") {
  const std::filesystem::path ptxas = "/usr/local/cuda/bin/ptxas";
  for (const std::string name : kWgmmaKernels) {
    const BundledKernel k = wgmma_kernel(name.c_str());
    const tune::KernelSource& src = *k.def.source_for(tune::Language::cuda_hip);
    const std::string ptx = ptx_of(src, k.default_config);
    CAPTURE(name);
    CHECK(ptx.find(".target sm_90a") != std::string::npos);
    const bool bf16 = name.ends_with("bf16");
    CHECK(ptx.find(bf16 ? "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
                        : "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") !=
          std::string::npos);
    CHECK(ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
    CHECK(ptx.find("mbarrier.try_wait.parity") != std::string::npos);
    CHECK(ptx.find("mbarrier.arrive.expect_tx") != std::string::npos);
    CHECK(ptx.find("wgmma.wait_group") != std::string::npos);
    // The copy path: predicated aligned 16-byte loads only (wg_chunk.h; no element-wise
    // 2-byte loads, no local memory), swizzled 16-byte shared stores, and the fence that shows
    // them to wgmma's async proxy before the plain arrival.
    CHECK(ptx.find("@p ld.global.nc.v4.b32") != std::string::npos);
    CHECK(ptx.find("ld.global.u16") == std::string::npos);
    CHECK(ptx.find("ld.global.nc.u16") == std::string::npos);
    CHECK(ptx.find(".local") == std::string::npos);
    CHECK(ptx.find("st.shared.v4.b32") != std::string::npos);
    CHECK(ptx.find("fence.proxy.async.shared::cta") != std::string::npos);
    CHECK(ptx.find("mbarrier.arrive.shared::cta.b64") != std::string::npos);
    if (!std::filesystem::exists(ptxas)) {
      MESSAGE("no " << ptxas << ": the PTX is not assembled separately");
      continue;
    }
    tune::testing::TempDir dir;
    const std::filesystem::path file = dir.path / "matmul_wgmma.ptx";
    std::ofstream(file) << ptx;
    const std::string cmd = ptxas.string() + " -arch=sm_90a -v " + file.string() + " -o " +
                            (dir.path / "out.cubin").string() + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
    REQUIRE(pipe != nullptr);
    std::string log;
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe.get()) != nullptr) log += buf;
    const int status = ::pclose(pipe.release());
    CHECK_MESSAGE(status == 0, log);
    const tune::KernelResources r = tune::gpu::parse_resource_log(log);
    MESSAGE(name << " default (ptxas): " << r.to_string());
    CHECK(r.registers > 0);
    CHECK(r.spill_bytes == 0);
  }
}

TEST_CASE("an architecture-specific source for a target before sm_90 is invalid_argument") {
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  auto out =
      tune::cuda::compile("sm_80", *k.def.source_for(tune::Language::cuda_hip), k.default_config);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == tune::StatusCode::invalid_argument);
  CHECK(out.status().message().find("sm_80") != std::string::npos);
  CHECK(out.status().message().find("arch_specific") != std::string::npos);
  // And no wgmma configuration is offered on an sm_80 device.
  auto configs = k.def.space.enumerate(tune::testing::nvidia_snapshot("sm_80"));
  REQUIRE(configs.ok());
  CHECK(configs->empty());
}

TEST_CASE(
    "the wgmma space has tile K 32/64/128, clusters of two launched as whole clusters, "
    "ping-pong and the TMA-store epilogue") {
  const tune::DeviceInfo h100 = tune::testing::nvidia_snapshot("sm_90");
  for (const char* name : kWgmmaKernels) {
    CAPTURE(name);
    const BundledKernel k = wgmma_kernel(name);
    auto configs = k.def.space.enumerate(h100);
    REQUIRE(configs.ok());
    CHECK(configs->size() <= 60);  // each costs a compile while tuning
    int by_bk[3] = {}, clustered = 0, pingpong = 0, tma_stores = 0, clustered_stores = 0;
    std::set<std::int64_t> splits;
    std::set<std::int64_t> bns;
    for (const tune::Config& c : *configs) {
      CAPTURE(c.to_string());
      const std::int64_t bk = c.get_int("BK", 64), cluster = c.get_int("CLUSTER_M", 1);
      REQUIRE((bk == 32 || bk == 64 || bk == 128));
      ++by_bk[bk == 32 ? 0 : bk == 64 ? 1 : 2];
      REQUIRE((cluster == 1 || cluster == 2));
      clustered += cluster == 2 ? 1 : 0;
      // Split K: clusters of 2 or 4 blocks per tile, without CLUSTER_M, ping-pong or the TMA
      // store (the kernel refuses them).
      const std::int64_t split = c.get_int("SPLIT_K", 1);
      REQUIRE((split == 1 || split == 2 || split == 4));
      splits.insert(split);
      if (split > 1) {
        CHECK(cluster == 1);
        CHECK(c.get_int("WG_PINGPONG", 0) == 0);
        CHECK(c.get_int("WG_TMA_STORE", 0) == 0);
      }
      // Ping-pong: two consumers, no clusters (the kernel refuses anything else).
      const std::int64_t pp = c.get_int("WG_PINGPONG", 0);
      REQUIRE((pp == 0 || pp == 1));
      if (pp == 1) {
        ++pingpong;
        CHECK(cluster == 1);
        CHECK(c.get_int("WG_CONSUMERS") == 2);
      }
      // The TMA-store epilogue: with ping-pong, with clusters or alone, two consumers.
      const std::int64_t store = c.get_int("WG_TMA_STORE", 0);
      REQUIRE((store == 0 || store == 1));
      if (store == 1) {
        ++tma_stores;
        clustered_stores += cluster == 2 ? 1 : 0;
        CHECK(c.get_int("WG_CONSUMERS") == 2);
      }
      // Shared memory follows BK: the stages' A and B tiles, barriers and alignment slack, with
      // ping-pong a turn barrier per consumer, with the TMA store a buffer per consumer of the
      // rows it stores (all of the tile's with ping-pong) x BN.
      const std::int64_t bm = c.get_int("BM"), bn = c.get_int("BN");
      bns.insert(bn);
      const std::int64_t consumers = c.get_int("WG_CONSUMERS");
      const std::int64_t rows = pp == 1 ? bm : bm / consumers;
      const std::int64_t stages = c.launch().num_stages;
      CHECK(c.launch().shared_bytes == 1024 + stages * ((bm * bk + bk * bn) * 2 + 16) +
                                           store * consumers * rows * bn * 2 + pp * 8 * consumers);
      CHECK(c.launch().shared_bytes <= h100.shared_bytes_per_block_optin);
      // The tensor maps' boxes: A in BM x min(BK, 64) (64-byte swizzle at BK = 32), B in
      // BK x 64, C (argument 2, M x N) in a consumer's rows x 64, 128-byte swizzled.
      const auto maps = k.def.source_for(tune::Language::cuda_hip)->tensor_maps(c);
      REQUIRE(maps.size() == 3);
      CHECK(maps[2].buffer_arg == 2);
      CHECK(maps[2].rows_arg == 3);
      CHECK(maps[2].cols_arg == 4);
      CHECK(maps[2].box_rows == rows);
      CHECK(maps[2].box_cols == 64);
      CHECK(maps[2].swizzle == tune::TensorMapSpec::Swizzle::bytes128);
      CHECK(maps[2].zeros_when_unaligned);
      CHECK(maps[0].box_rows == bm);
      CHECK(maps[0].box_cols == std::min<std::int64_t>(bk, 64));
      CHECK(maps[0].swizzle == (bk == 32 ? tune::TensorMapSpec::Swizzle::bytes64
                                         : tune::TensorMapSpec::Swizzle::bytes128));
      CHECK(maps[1].box_rows == bk);
      CHECK(maps[1].box_cols == 64);
      // Persistent grids of whole clusters, never more blocks than the SMs, at a shape with an
      // odd number of tile rows (the last pair's second tile is past M) and a large one.
      for (const std::vector<std::int64_t>& size :
           {std::vector<std::int64_t>{3 * bm - 5, 1032, 520}, {8192, 8192, 8192}, {1, 8, 8}}) {
        // dims reads M and N alone (arguments 3 and 4): no buffers needed.
        const std::vector<tune::ArgValue> args = {
            tune::ArgValue(0),
            tune::ArgValue(0),
            tune::ArgValue(0),
            tune::ArgValue(static_cast<std::int32_t>(size[0])),
            tune::ArgValue(static_cast<std::int32_t>(size[1])),
            tune::ArgValue(static_cast<std::int32_t>(size[2]))};
        const tune::LaunchDims dims = k.def.dims(c, args);
        const std::int64_t blocks = cluster * split;  // per cluster
        CHECK(dims.cluster == tune::Dim3{static_cast<std::uint32_t>(blocks), 1, 1});
        CHECK(dims.grid.x % blocks == 0);
        CHECK(dims.grid.x >= blocks);
        CHECK(dims.grid.x <= 132);
        const std::int64_t tiles_m = (size[0] + bm - 1) / bm, tiles_n = (size[1] + bn - 1) / bn;
        const std::int64_t units = (tiles_m + cluster - 1) / cluster * tiles_n;
        // As many clusters as fit at once on an H100: 66 of two, 30 of four.
        CHECK(dims.grid.x ==
              blocks * std::min<std::int64_t>(units, blocks == 4 ? 30 : 132 / blocks));
      }
    }
    CHECK(bns == std::set<std::int64_t>{128, 192, 256});
    CHECK(splits == std::set<std::int64_t>{1, 2, 4});
    CHECK(by_bk[0] >= 1);
    CHECK(by_bk[1] >= 24);
    CHECK(by_bk[2] >= 2);
    CHECK(clustered >= 4);
    CHECK(pingpong >= 4);
    CHECK(tma_stores >= 8);
    CHECK(clustered_stores >= 2);
    // The default is the configuration of before tile K, clusters, ping-pong and the TMA store,
    // named as it was.
    CHECK(k.default_config.find("BK") == nullptr);
    CHECK(k.default_config.find("CLUSTER_M") == nullptr);
    CHECK(k.default_config.find("WG_PINGPONG") == nullptr);
    CHECK(k.default_config.find("WG_TMA_STORE") == nullptr);
  }
}

TEST_CASE(
    "the wgmma PTX of tile K 32 and 128, of clusters, of ping-pong and of the TMA store has what "
    "they are about") {
  const tune::DeviceInfo h100 = tune::testing::nvidia_snapshot("sm_90");
  const BundledKernel k = wgmma_kernel("matmul_wgmma_f16");
  const tune::KernelSource& src = *k.def.source_for(tune::Language::cuda_hip);
  auto configs = k.def.space.enumerate(h100);
  REQUIRE(configs.ok());
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  // Without clusters: none of the cluster instructions.
  const std::string plain = ptx_of(src, k.default_config);
  CHECK(count(plain, "multicast::cluster") == 0);
  CHECK(count(plain, "barrier.cluster") == 0);
  CHECK(count(plain, "mapa") == 0);
  // BK = 32: A's descriptors carry the 64-byte swizzle (layout type 2 in bits 62-63), B's the
  // 128-byte one (1); BK = 64 only the 128-byte one. The descriptors' constant parts are
  // or.b64 immediates (start address | offsets | layout type).
  const auto layouts = [](const std::string& ptx) {
    std::set<int> types;
    const std::regex imm(R"(or\.b64\s+%rd\d+,\s*%rd\d+,\s*(-?\d+);)");
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), imm); it != std::sregex_iterator();
         ++it) {
      const auto v = static_cast<std::uint64_t>(std::stoll((*it)[1].str()));
      if ((v >> 62) != 0) types.insert(static_cast<int>(v >> 62));
    }
    return types;
  };
  const std::string bk32 = ptx_of(src, find_config(*configs, 32, 1));
  CHECK(layouts(bk32) == std::set<int>{1, 2});
  CHECK(layouts(plain) == std::set<int>{1});
  // Per stage: 2 k16 steps at BK = 32, 4 at 64, 8 at 128 (one wgmma each per m64 block of a
  // consumer: one for the 128x128 two-consumer tiles).
  const std::string bk128 = ptx_of(src, find_config(*configs, 128, 1));
  CHECK(count(plain, "wgmma.mma_async") == 4);
  CHECK(count(bk32, "wgmma.mma_async") == 2);
  CHECK(count(bk128, "wgmma.mma_async") == 8);
  // Clusters: B multicast to both blocks, arrivals on both blocks' empty barriers through
  // mapa, cluster barriers after the barriers' initialisation and before exit, and the
  // cluster special registers of the pair scheduler.
  const std::string pair = ptx_of(src, find_config(*configs, 64, 2));
  CHECK(count(pair,
              "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
              ".multicast::cluster") > 0);
  CHECK(count(pair, "mapa.shared::cluster.u32") > 0);
  CHECK(count(pair, "mbarrier.arrive.shared::cluster.b64") > 0);
  // Split K: k slices per cluster rank, the partials reduced through the cluster's shared
  // memory (remote float4 reads), cluster barriers, and no multicast (each block loads its own
  // slice of A and B); the copy path is there too.
  for (const std::int64_t split : {2, 4}) {
    CAPTURE(split);
    auto it = std::find_if(configs->begin(), configs->end(),
                           [&](const tune::Config& c) { return c.get_int("SPLIT_K", 1) == split; });
    REQUIRE(it != configs->end());
    const std::string ptx = ptx_of(src, *it);
    CHECK(count(ptx, "ld.shared::cluster.v4.f32") > 0);
    CHECK(count(ptx, "st.shared.v4.f32") > 0);
    CHECK(count(ptx, "mapa.shared::cluster.u32") > 0);
    CHECK(count(ptx, "barrier.cluster.arrive.release") >= 4);
    CHECK(count(ptx, "%cluster_ctarank") > 0);
    CHECK(count(ptx, "multicast::cluster") == 0);
    CHECK(count(ptx, "st.shared.v4.b32") > 0);
  }
  // 128x192 tiles in clusters: one m64n192 wgmma per k16 step, B's three chunks multicast
  // (rank 0 two, rank 1 one).
  for (const tune::Config& c : *configs) {
    if (c.get_int("BN") != 192 || c.get_int("CLUSTER_M", 1) != 2) continue;
    CAPTURE(c.to_string());
    const std::string ptx = ptx_of(src, c);
    CHECK(count(ptx, "m64n192k16") == 4);
    CHECK(count(ptx, ".multicast::cluster") > 0);
    break;
  }
  // Not at cluster scope: ptxas puts MEMBAR.ALL.GPU before each such arrival, which halved
  // the clustered configurations' speed (see wg_mbar_arrive_cluster).
  CHECK(count(pair, "mbarrier.arrive.release.cluster") == 0);
  CHECK(count(pair, "barrier.cluster.arrive.release") >= 2);
  CHECK(count(pair, "barrier.cluster.wait.acquire") >= 2);
  CHECK(count(pair, "%cluster_ctarank") > 0);
  CHECK(count(pair, "%clusterid.x") > 0);
  CHECK(count(pair, "%nclusterid.x") > 0);
  // The copy path is still there (unaligned shapes with clusters copy without multicast).
  CHECK(count(pair, "st.shared.v4.b32") > 0);
  CHECK(count(pair, "fence.proxy.async.shared::cta") > 0);
  // Ping-pong: whole-tile consumers and their turn barriers.
  std::set<std::int64_t> bms;
  for (const tune::Config& c : *configs) {
    if (c.get_int("WG_PINGPONG", 0) != 1) continue;
    CAPTURE(c.to_string());
    const std::int64_t bm = c.get_int("BM"), bn = c.get_int("BN");
    bms.insert(bm);
    const std::string ptx = ptx_of(src, c);
    // A consumer computes all BM rows of its tile: BM / 64 m64 wgmmas per k16 step (4 steps
    // at BK = 64), where the default's two consumers share a 128-row tile (one each).
    CHECK(count(ptx, "wgmma.mma_async") == static_cast<std::size_t>(4 * bm / 64));
    CHECK(count(ptx, bn == 256 ? "m64n256k16" : "m64n128k16") > 0);
    // One more kind of mbarrier (the turns, 128 arrivals each, one per consumer) besides the
    // stages' full and empty ones, and no clusters.
    CHECK(count(ptx, "mbarrier.init.shared::cta.b64") ==
          static_cast<std::size_t>(2 * c.launch().num_stages + 2));
    CHECK(count(ptx, "barrier.cluster") == 0);
    CHECK(count(ptx, "multicast::cluster") == 0);
    // The copy path is still there.
    CHECK(count(ptx, "st.shared.v4.b32") > 0);
    CHECK(count(ptx, "fence.proxy.async.shared::cta") > 0);
  }
  CHECK(bms == std::set<std::int64_t>{64, 128});
  CHECK(count(plain, "mbarrier.init.shared::cta.b64") == 2 * 4);
  // The TMA store: the tile's boxes stored from shared memory in bulk groups, the buffer's
  // reuse waiting for the previous stores' reads, the consumer's named barriers, and the plain
  // stores still there for a C that TMA cannot address (N not a multiple of 8). The others have
  // none of it.
  int stores = 0, clustered_stores = 0;
  for (const tune::Config& c : *configs) {
    if (c.get_int("WG_TMA_STORE", 0) != 1) continue;
    CAPTURE(c.to_string());
    ++stores;
    const std::string ptx = ptx_of(src, c);
    CHECK(count(ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") ==
          static_cast<std::size_t>(c.get_int("BN") / 64));
    CHECK(count(ptx, "cp.async.bulk.commit_group") == 1);
    CHECK(count(ptx, "cp.async.bulk.wait_group.read 0") == 1);
    CHECK(count(ptx, "cp.async.bulk.wait_group 0") == 1);
    CHECK(count(ptx, "bar.sync") >= 2);
    CHECK(count(ptx, "st.global") > 0);
    // With clusters: B still multicast, and the pair's cluster barriers.
    if (c.get_int("CLUSTER_M", 1) == 2) {
      ++clustered_stores;
      CHECK(count(ptx, "multicast::cluster") > 0);
      CHECK(count(ptx, "barrier.cluster.wait.acquire") >= 2);
    }
  }
  CHECK(stores >= 8);
  CHECK(clustered_stores >= 2);
  CHECK(count(plain, "cp.async.bulk.tensor.2d.global.shared::cta") == 0);
  CHECK(count(plain, "cp.async.bulk.wait_group") == 0);
}
