// The sm_90 wgmma matmuls (matmul_wgmma_f16, matmul_wgmma_bf16) without a GPU: every
// configuration of their space compiles through NVRTC for sm_90a exactly as an H100/H200 would
// compile it, with no spills and within the register file (both load paths: TMA and the copy
// path for shapes TMA cannot address are chosen at run time, so every variant holds both); the
// PTX holds the Hopper instructions the kernel is about (wgmma, TMA, mbarrier, and the copy
// path's proxy fence and vector shared stores), and the toolkit's ptxas, when
// installed, assembles it for sm_90a. Whether the kernels compute the right numbers needs the
// GPU: wgmma_gpu_test.cpp.
#include <doctest/doctest.h>
#include <nvrtc.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
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

// The PTX NVRTC makes of one variant, with exactly the options a device would use.
std::string ptx_of(const tune::KernelSource& src, const tune::Config& c) {
  auto opts = tune::gpu::compile_options(*tune::cuda::detail::nvrtc_compiler(), "sm_90", c, src);
  REQUIRE_MESSAGE(opts.ok(), opts.status().to_string());
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, src.text.c_str(), "matmul_wgmma.cu", 0, nullptr, nullptr) ==
          NVRTC_SUCCESS);
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owned(
      &prog, [](nvrtcProgram* p) { (void)nvrtcDestroyProgram(p); });
  std::vector<const char*> argv;
  for (const std::string& o : *opts) argv.push_back(o.c_str());
  const nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  REQUIRE_MESSAGE(rc == NVRTC_SUCCESS, nvrtcGetErrorString(rc));
  std::size_t size = 0;
  REQUIRE(nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS);
  std::string ptx(size, '\0');
  REQUIRE(nvrtcGetPTX(prog, ptx.data()) == NVRTC_SUCCESS);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // the size counts the terminator
  return ptx;
}

}  // namespace

TEST_CASE("every wgmma matmul configuration compiles for sm_90a with no spills") {
  const tune::testing::UncachedCompiles uncached;  // the logs must carry ptxas's lines
  const tune::DeviceInfo h100 = tune::testing::nvidia_snapshot("sm_90");
  for (const char* name : kWgmmaKernels) {
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
      const tune::KernelResources r = tune::gpu::parse_resource_log(out->log);
      std::printf("  %-70s regs=%u spill=%u\n", c.to_string().c_str(), r.registers, r.spill_bytes);
      CHECK(r.registers > 0);
      CHECK(r.spill_bytes == 0);
      // One block per SM: its threads' registers fit the register file.
      CHECK(std::uint64_t{r.registers} * c.launch().block.x <= h100.registers_per_block);
    }
  }
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
    // The copy path: 16-byte loads where aligned, swizzled 16-byte shared stores, and the
    // fence that shows them to wgmma's async proxy before the plain arrival.
    CHECK(ptx.find("ld.global.nc.v4.b32") != std::string::npos);
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
