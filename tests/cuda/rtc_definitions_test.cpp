// gpu::compile_for (CUDA and HIP) gives the compiler exactly tune::definitions, in its order,
// after the compiler's own options; and every definition is part of the binary-cache key, so
// variants that differ only in a launch option never share a binary.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "rtc.hpp"
#include "tune/definitions.hpp"

namespace fs = std::filesystem;

namespace {

// A compiler that records the options of its last compile.
struct Recorder final : tune::gpu::RtcCompiler {
  int compiles = 0;
  std::vector<std::string> options;
  std::string name_expression;
  std::string version() const override { return "recorder 1.0"; }
  std::string_view binary_kind() const noexcept override { return "bin"; }
  tune::Result<std::vector<std::string>> target_options(std::string_view a, bool) const override {
    return std::vector<std::string>{"--arch=" + std::string(a), "-DTUNE_WARP_SIZE=32"};
  }
  std::vector<std::string> base_options() const override { return {"-O3"}; }
  std::string max_registers_option(int r) const override {
    return "--maxrregcount=" + std::to_string(r);
  }
  tune::Result<tune::gpu::RtcOutput> compile(std::string_view, std::string_view,
                                             std::span<const std::string> o,
                                             std::span<const tune::KernelHeader>,
                                             std::string_view expr) override {
    ++compiles;
    options.assign(o.begin(), o.end());
    name_expression = std::string(expr);
    tune::gpu::RtcOutput out;
    out.binary = "binary " + std::to_string(compiles);
    out.entry_name = "lowered " + name_expression;  // names the kernel, as a mangled name does
    return out;
  }
};

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("libtune-rtc-defs-test-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

tune::KernelSource source(std::string entry) {
  tune::KernelSource src;
  src.language = tune::Language::cuda_hip;
  src.entry = std::move(entry);
  src.text = "template <int EPT> __global__ void k(float* x) { x[threadIdx.x] = EPT * TILE; }";
  return src;
}

}  // namespace

TEST_CASE("rtc: the compiler gets its own options, then tune::definitions in order") {
  tune::Config c{{"TILE", 16}, {"EPT", 4}, {"FLAG", true}, {"T", "float"}};
  c.set(tune::kBlockX, 64).set(tune::kBlockZ, 2).set(tune::kNumWarps, 2);
  c.set(tune::kNumStages, 4).set(tune::kMaxRegisters, 128).set(tune::kSharedBytes, 1024);
  const auto src = source("k<EPT>");
  Recorder rec;
  auto out = tune::gpu::compile_for(rec, "x1", src, c, nullptr);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  const std::vector<std::string> want = {
      "-O3",
      "--arch=x1",
      "-DTUNE_WARP_SIZE=32",
      "--maxrregcount=128",
      // EPT is the template argument, not a macro.
      "-DFLAG=1",
      "-DT=float",
      "-DTILE=16",
      "-DTUNE_BLOCK_X=64",
      "-DTUNE_BLOCK_Y=1",
      "-DTUNE_BLOCK_Z=2",
      "-DTUNE_NUM_WARPS=2",
      "-DTUNE_NUM_STAGES=4",
      "-DTUNE_MAX_REGISTERS=128",
      "-DTUNE_SHARED_BYTES=1024",
  };
  CHECK(rec.options == want);
  CHECK(rec.name_expression == "k<4>");
  // The same list, spelled as options, is what tune::definitions shows a user.
  auto defs = tune::definitions(c, src);
  REQUIRE(defs.ok());
  std::vector<std::string> shown;
  for (const auto& d : *defs) shown.push_back(tune::gpu::define_option(d));
  CHECK(shown == std::vector<std::string>(want.begin() + 4, want.end()));
}

TEST_CASE("rtc: every definition is in the binary-cache key") {
  TempDir tmp;
  tune::BinaryCache cache(tmp.path, true);
  Recorder rec;
  const auto src = source("k<EPT>");
  tune::Config base{{"TILE", 16}, {"EPT", 4}};
  base.set(tune::kBlockX, 64);
  std::vector<tune::Config> variants(7, base);
  variants[1].set(tune::kNumWarps, 2);
  variants[2].set(tune::kNumStages, 2);
  variants[3].set(tune::kSharedBytes, 512);
  variants[4].set(tune::kMaxRegisters, 64);
  variants[5].set(tune::kBlockY, 2);
  variants[6].set("EPT", 8);  // a template argument: in the key through the name expression
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < variants.size(); ++i) {
      CAPTURE(variants[i].to_string());
      auto out = tune::gpu::compile_for(rec, "x1", src, variants[i], &cache);
      REQUIRE_MESSAGE(out.ok(), out.status().to_string());
      CHECK(out->from_cache == (pass == 1));
      // Each variant has its own binary: a hit never returns another variant's.
      CHECK(out->binary == "binary " + std::to_string(i + 1));
    }
  }
  CHECK(rec.compiles == static_cast<int>(variants.size()));
}
