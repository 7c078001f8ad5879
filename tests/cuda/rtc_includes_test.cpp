// CUDA kernels as programs write them, compiled by NVRTC without a GPU: a user header from
// include_dirs and one given in memory, the toolkit's own headers (CUB, cuda/std,
// cuda_fp16.h; TUNE_CUDA_INCLUDE_DIR), kernel options that change the binary, and options
// refused by libtune or by NVRTC naming the option. Then the binary-cache key (gpu::compile_for
// with a counting compiler): an edited header, a new option or another include-dir order is
// a miss, the same inputs a hit.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rtc.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"
#include "tune/cuda.hpp"

namespace fs = std::filesystem;
using namespace tune;

namespace {

constexpr const char* kArch = "sm_90";

using tune::testing::TempDir;

KernelSource cuda_source(std::string text) {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = "k";
  s.text = std::move(text);
  return s;
}

// The value the kernel writes is decided by the headers; a static_assert checks the right
// header was read (a wrong one is a compile error naming the assertion).
const char* kUsesHeader = R"(#include "values.cuh"
static_assert(VALUE == 7, "values.cuh from the include dir");
extern "C" __global__ void k(int* out) { out[0] = VALUE; }
)";

Result<RtcOutput> nvrtc(const KernelSource& s, const Config& c = {}) {
  return cuda::compile(kArch, s, c);
}

}  // namespace

TEST_CASE("NVRTC: a kernel includes a user header from include_dirs (nested, beside it)") {
  TempDir d;
  d.write("values.cuh", "#pragma once\n#include \"detail/seven.cuh\"\n#define VALUE SEVEN\n");
  d.write("detail/seven.cuh", "#define SEVEN 7\n");
  KernelSource s = cuda_source(kUsesHeader);
  auto missing = nvrtc(s);
  REQUIRE(!missing.ok());
  CHECK(missing.status().code() == StatusCode::compile_error);
  CHECK(missing.status().message().find("values.cuh") != std::string::npos);
  s.include_dirs = {d.path.string()};
  auto out = nvrtc(s);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  CHECK(!out->binary.empty());
}

TEST_CASE("NVRTC: a kernel includes an in-memory header, found before any directory") {
  TempDir d;
  d.write("values.cuh", "#define VALUE 1\n");  // shadowed by the in-memory header
  KernelSource s = cuda_source(kUsesHeader);
  s.include_dirs = {d.path.string()};
  s.headers = {{"values.cuh", "#define VALUE 7\n"}};
  auto out = nvrtc(s);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
}

TEST_CASE("NVRTC: the toolkit's headers are reachable: CUB, cuda/std, cuda_fp16.h") {
  KernelSource s = cuda_source(R"(#include <cub/block/block_reduce.cuh>
#include <cuda/std/type_traits>
#include <cuda_fp16.h>
static_assert(cuda::std::is_same_v<cuda::std::remove_cv_t<const int>, int>, "libcu++");
extern "C" __global__ void k(const float* x, float* out) {
  using Reduce = cub::BlockReduce<float, 128>;
  __shared__ typename Reduce::TempStorage tmp;
  const float v = Reduce(tmp).Sum(x[threadIdx.x]);
  if (threadIdx.x == 0) out[0] = __half2float(__float2half(v));
}
)");
  auto out = nvrtc(s);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  CHECK(!out->binary.empty());
}

TEST_CASE("TUNE_CUDA_INCLUDE_DIR names the toolkit's include directory, its cccl/ first") {
  TempDir d;
  d.write("cccl/cub/marker.cuh", "#define MARKER 42\n");
  d.write("marker_top.cuh", "#define TOP 1\n");
  tune::testing::ScopedEnv env("TUNE_CUDA_INCLUDE_DIR", d.path.c_str());
  auto out = nvrtc(cuda_source(R"(#include <cub/marker.cuh>
#include <marker_top.cuh>
static_assert(MARKER == 42 && TOP == 1, "the overriding toolkit dir");
extern "C" __global__ void k() {}
)"));
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
}

TEST_CASE("NVRTC: kernel options reach the compiler and change the binary") {
  KernelSource s = cuda_source(R"(#ifndef FOO
#error FOO comes from the kernel's options
#endif
extern "C" __global__ void k(float* y, const float* x) { y[threadIdx.x] = __expf(x[threadIdx.x]) * FOO; }
)");
  s.options = {"-DFOO=3"};
  auto plain = nvrtc(s);
  REQUIRE_MESSAGE(plain.ok(), plain.status().to_string());
  s.options = {"-DFOO=3", "-use_fast_math", "-lineinfo"};
  auto fast = nvrtc(s);
  REQUIRE_MESSAGE(fast.ok(), fast.status().to_string());
  CHECK(fast->binary != plain->binary);
  // -lineinfo leaves the source's line table in the CUBIN.
  CHECK(fast->binary.find(".nv_debug_line_sass") != std::string::npos);
  CHECK(plain->binary.find(".nv_debug_line_sass") == std::string::npos);
  // A later --std wins over libtune's own (NVRTC warns; the option is the kernel's to give).
  s.options = {"-DFOO=3", "--std=c++20"};
  CHECK(nvrtc(s).ok());
}

TEST_CASE("an option NVRTC does not know fails with invalid_argument naming it") {
  KernelSource s = cuda_source("extern \"C\" __global__ void k() {}");
  s.options = {"-fno-such-option"};
  auto out = nvrtc(s);
  REQUIRE(!out.ok());
  CHECK(out.status().code() == StatusCode::invalid_argument);
  CHECK(out.status().message().find("-fno-such-option") != std::string::npos);
}

TEST_CASE("options libtune sets itself, or that hide files from the cache key, are refused") {
  KernelSource s = cuda_source("extern \"C\" __global__ void k() {}");
  for (const char* bad : {"-arch=sm_80", "--gpu-architecture=sm_80", "--maxrregcount=32",
                          "-I/usr/include", "--include-path=/tmp", "-include", "-DTUNE_X=1", ""}) {
    CAPTURE(bad);
    s.options = {bad};
    auto out = nvrtc(s);
    REQUIRE(!out.ok());
    CHECK(out.status().code() == StatusCode::invalid_argument);
    CHECK(out.status().message().find("kernel option '" + std::string(bad) + "'") !=
          std::string::npos);
    CHECK(out.status().message().find("NVRTC") != std::string::npos);
  }
}

namespace {

// A compiler that counts real compiles; the key logic is compile_for's, the one CUDA and HIP use.
struct Counting final : gpu::RtcCompiler {
  int compiles = 0;
  std::vector<std::string> last_options;
  std::vector<KernelHeader> last_headers;
  std::string version() const override { return "counting 1.0"; }
  std::string_view binary_kind() const noexcept override { return "bin"; }
  Result<std::vector<std::string>> target_options(std::string_view a, bool) const override {
    return std::vector<std::string>{"--arch=" + std::string(a)};
  }
  std::vector<std::string> base_options() const override { return {"-O3"}; }
  std::string max_registers_option(int) const override { return {}; }
  std::vector<std::string> toolkit_include_options() const override { return {"-I/toolkit"}; }
  Result<RtcOutput> compile(std::string_view s, std::string_view, std::span<const std::string> o,
                            std::span<const KernelHeader> h, std::string_view) override {
    ++compiles;
    last_options.assign(o.begin(), o.end());
    last_headers.assign(h.begin(), h.end());
    RtcOutput out;
    out.binary = "binary " + std::to_string(compiles) + " of " + std::string(s);
    return out;
  }
};

}  // namespace

TEST_CASE("compile_for: kernel options and include dirs reach the compiler, in their place") {
  Counting c;
  KernelSource s = cuda_source("extern \"C\" __global__ void k() {}");
  s.options = {"-use_fast_math"};
  s.include_dirs = {"/a", "/b"};
  s.headers = {{"h.cuh", "text"}};
  Config cfg;
  cfg.set("P", std::int64_t{2});
  REQUIRE(gpu::compile_for(c, kArch, s, cfg, nullptr).ok());
  CHECK(c.last_options == std::vector<std::string>{"-O3", "--arch=sm_90", "-use_fast_math", "-I/a",
                                                   "-I/b", "-I/toolkit", "-DP=2"});
  CHECK(c.last_headers == s.headers);
}

TEST_CASE("the binary-cache key: an edited header, an option, the include-dir order are misses") {
  TempDir d, other, cache_dir;
  d.write("values.cuh", "#include \"inner.cuh\"\n#define VALUE 7\n");
  d.write("inner.cuh", "#define INNER 1\n");
  other.write("values.cuh", "#define VALUE 8\n");
  gpu::BinaryCache cache(cache_dir.path, true);
  Counting c;
  KernelSource s = cuda_source(kUsesHeader);
  s.include_dirs = {d.path.string()};
  auto compile = [&](const KernelSource& src) {
    auto out = gpu::compile_for(c, kArch, src, Config{}, &cache);
    REQUIRE_MESSAGE(out.ok(), out.status().to_string());
    return *out;
  };
  CHECK(!compile(s).from_cache);
  CHECK(compile(s).from_cache);  // the same inputs: a hit
  CHECK(c.compiles == 1);

  d.write("values.cuh", "#include \"inner.cuh\"\n#define VALUE 9\n");  // the header edited
  CHECK(!compile(s).from_cache);
  CHECK(compile(s).from_cache);
  d.write("inner.cuh", "#define INNER 2\n");  // a nested one
  CHECK(!compile(s).from_cache);
  CHECK(c.compiles == 3);

  KernelSource with_option = s;
  with_option.options = {"-lineinfo"};
  CHECK(!compile(with_option).from_cache);
  CHECK(compile(with_option).from_cache);

  KernelSource two = s;
  two.include_dirs = {d.path.string(), other.path.string()};
  KernelSource swapped = s;
  swapped.include_dirs = {other.path.string(), d.path.string()};
  CHECK(!compile(two).from_cache);
  CHECK(!compile(swapped).from_cache);
  CHECK(compile(two).from_cache);
  // The shadowed candidate counts too (a compiler may search in another order).
  other.write("values.cuh", "#define VALUE 10\n");
  CHECK(!compile(two).from_cache);

  KernelSource mem = s;
  mem.headers = {{"values.cuh", "#define VALUE 7\n"}};
  CHECK(!compile(mem).from_cache);
  CHECK(compile(mem).from_cache);
  mem.headers[0].text = "#define VALUE 7 // edited\n";
  CHECK(!compile(mem).from_cache);
  // An in-memory header nothing includes changes no binary: still a hit.
  KernelSource unused = mem;
  unused.headers.push_back({"unused.cuh", "anything"});
  CHECK(compile(unused).from_cache);
}

TEST_CASE("the binary-cache key of a source without includes or options is what it was") {
  TempDir cache_dir;
  gpu::BinaryCache cache(cache_dir.path, true);
  Counting c;
  KernelSource s = cuda_source("extern \"C\" __global__ void k() {}");
  REQUIRE(gpu::compile_for(c, kArch, s, Config{}, &cache).ok());
  // The key compile_for wrote: version, options, the source's hash; no includes line.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(cache_dir.path)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  std::ifstream in(files[0], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes.find("includes") == std::string::npos);
  CHECK(bytes.find("counting 1.0\n-O3 --arch=sm_90 -I/toolkit \n") != std::string::npos);
}
