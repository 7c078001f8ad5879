// nvrtc_time: NVRTC compile time of every configuration of a bundled CUDA kernel (issue 7: the
// cold tuning time of the fp16 matmul is bounded by its slowest compile). A plain program
// printing a markdown table; needs no GPU.
//
// Per configuration, single-threaded, best of --reps:
//   total     tune::cuda::compile, libtune's own compile path (its exact options);
//   front end, ptxas: one more compile straight through NVRTC with the same options plus
//             --time=<file>, whose report splits source -> PTX (C++ front end and NVVM) from
//             PTX -> CUBIN (ptxas). Its CUBIN is compared with libtune's ("same" column), which
//             checks that the options match.
// Then every configuration at once, one thread each, as the autotuner's compile pool does: the
// wall time of that is what a cold tuning waits for.
//
// NVRTC 12.9+ caches compiles through the driver's compute cache when a driver is present (a
// repeated compile then takes milliseconds); the program sets CUDA_CACHE_DISABLE=1 before its
// first NVRTC call unless --warm is given.
//
// usage: nvrtc_time [--kernel matmul_f16] [--arch sm_90] [--reps 2] [--warm]
#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rtc.hpp"
#include "tune/cuda.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/testing/device_snapshots.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Split {
  double front_end = 0, nvvm = 0, ptxas = 0;  // seconds, from NVRTC's --time report
  std::string cubin;
  bool ok = false;
};

// One compile straight through NVRTC with libtune's options (mirrors NvrtcCompiler's base and
// target options; the CUBIN comparison in the table checks it) and a --time report.
Split compile_split(const std::string& arch, const tune::KernelSource& src, const tune::Config& c) {
  Split s;
  const auto report = std::filesystem::temp_directory_path() /
                      ("nvrtc_time_" + std::to_string(::getpid()) + ".csv");
  std::vector<std::string> opts = {"--std=c++17", "-default-device", "--ptxas-options=-v",
                                   "-arch=" + arch, "-DTUNE_WARP_SIZE=32"};
  if (c.launch().max_registers > 0)
    opts.push_back("--maxrregcount=" + std::to_string(c.launch().max_registers));
  auto defs = tune::definitions(c, src);
  if (!defs.ok()) return s;
  for (const auto& d : *defs) opts.push_back(tune::gpu::define_option(d));
  opts.push_back("--time=" + report.string());
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcProgram prog = nullptr;
  const std::string file = src.entry + ".cu";
  if (nvrtcCreateProgram(&prog, src.text.c_str(), file.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    return s;
  if (nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data()) == NVRTC_SUCCESS) {
    std::size_t n = 0;
    if (nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
      s.cubin.resize(n);
      s.ok = nvrtcGetCUBIN(prog, s.cubin.data()) == NVRTC_SUCCESS;
    }
  }
  nvrtcDestroyProgram(&prog);
  // "file, phase name, metric, unit" rows; times in ms.
  std::ifstream in(report);
  std::string line;
  while (std::getline(in, line)) {
    auto ms = [&](const char* phase, double& out) {
      if (line.find(phase) == std::string::npos) return;
      const auto comma = line.rfind(',', line.rfind(',') - 1);
      out += std::atof(line.c_str() + comma + 1) / 1000.0;
    };
    ms("Frontend", s.front_end);
    ms("NVVM", s.nvvm);
    ms("PTX Translation", s.ptxas);
  }
  in.close();
  std::filesystem::remove(report);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kernel = "matmul_f16", arch = "sm_90";
  int reps = 2;
  bool warm = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kernel" && i + 1 < argc) {
      kernel = argv[++i];
    } else if (a == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--warm") {
      warm = true;
    } else {
      std::fprintf(stderr,
                   "usage: nvrtc_time [--kernel matmul_f16] [--arch sm_90] [--reps 2] [--warm]\n");
      return 2;
    }
  }
  if (!warm) ::setenv("CUDA_CACHE_DISABLE", "1", 1);

  const tune::kernels::BundledKernel* k = nullptr;
  const auto kernels = tune::kernels::bundled_kernels(tune::Language::cuda_hip);
  for (const auto& b : kernels)
    if (b.name == kernel) k = &b;
  if (k == nullptr) {
    std::fprintf(stderr, "no bundled CUDA kernel named %s\n", kernel.c_str());
    return 2;
  }
  const tune::KernelSource* src = k->def.source_for(tune::Language::cuda_hip);
  auto configs = k->def.space.enumerate(tune::testing::nvidia_snapshot(arch));
  if (!configs.ok()) {
    std::fprintf(stderr, "%s\n", configs.status().to_string().c_str());
    return 1;
  }

  std::printf("%s, %s, %s, %zu configurations, NVRTC cache %s, best of %d\n\n", kernel.c_str(),
              arch.c_str(), tune::cuda::compiler_version().c_str(), configs->size(),
              warm ? "allowed" : "off", reps);
  std::printf("| configuration | total s | front end s | NVVM s | ptxas s | registers | same |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  double slowest = 0;
  for (const auto& c : *configs) {
    double total = 1e30;
    std::string cubin, log;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      auto out = tune::cuda::compile(arch, *src, c);
      const double t = seconds_since(t0);
      if (!out.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.to_string().c_str(), out.status().to_string().c_str());
        return 1;
      }
      total = std::min(total, t);
      cubin = std::move(out->binary);
      log = std::move(out->log);
    }
    Split best;
    for (int r = 0; r < reps; ++r) {
      Split s = compile_split(arch, *src, c);
      if (!best.ok || s.front_end + s.nvvm + s.ptxas < best.front_end + best.nvvm + best.ptxas)
        best = std::move(s);
    }
    slowest = std::max(slowest, total);
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %u | %s |\n", c.to_string().c_str(), total,
                best.front_end, best.nvvm, best.ptxas, tune::gpu::parse_resource_log(log).registers,
                best.ok ? (best.cubin == cubin ? "yes" : "NO") : "failed");
    std::fflush(stdout);
  }

  // All at once, one thread per configuration (the autotuner compiles a key's variants so).
  for (int r = 0; r < reps; ++r) {
    std::vector<double> each(configs->size());
    std::vector<std::thread> pool;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < configs->size(); ++i) {
      pool.emplace_back([&, i] {
        const auto t1 = std::chrono::steady_clock::now();
        (void)tune::cuda::compile(arch, *src, (*configs)[i]);
        each[i] = seconds_since(t1);
      });
    }
    for (auto& t : pool) t.join();
    std::printf(
        "\nall %zu at once on %u hardware threads: wall %.3f s (slowest compile %.3f s; "
        "slowest single-threaded %.3f s)\n",
        configs->size(), std::thread::hardware_concurrency(), seconds_since(t0),
        *std::max_element(each.begin(), each.end()), slowest);
  }
  return 0;
}
