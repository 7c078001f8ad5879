// The CUBIN disk cache: a second compile of the same variant is a cache hit, entries are
// keyed by everything that decides the binary, and damaged entries read as misses.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tune/cuda/cuda_backend.hpp"
#include "tune/gpu/rtc.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("libtune-cubin-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("store then load returns the same bytes and log") {
  TempDir tmp;
  tune::gpu::BinaryCache cache(tmp.path, true);
  tune::gpu::RtcOutput out;
  out.binary = std::string(
      "\x7f"
      "ELF\0binary",
      10);
  out.log = "ptxas info: Used 10 registers";
  cache.store("key one", out);
  auto hit = cache.load("key one");
  REQUIRE(hit.has_value());
  CHECK(hit->binary == out.binary);
  CHECK(hit->log == out.log);
  CHECK(hit->from_cache);
  CHECK_FALSE(cache.load("key two").has_value());
  // No temporary file is left behind.
  CHECK(entries(tmp.path).size() == 1);
}

TEST_CASE("a truncated or corrupted entry is a miss, and a rewrite repairs it") {
  TempDir tmp;
  tune::gpu::BinaryCache cache(tmp.path, true);
  tune::gpu::RtcOutput out;
  out.binary = std::string(1000, 'x');
  cache.store("k", out);
  auto files = entries(tmp.path);
  REQUIRE(files.size() == 1);
  fs::resize_file(files[0], fs::file_size(files[0]) - 10);
  CHECK_FALSE(cache.load("k").has_value());
  cache.store("k", out);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('y');  // flip one byte of the binary: the checksum no longer matches
  }
  CHECK_FALSE(cache.load("k").has_value());
  cache.store("k", out);
  CHECK(cache.load("k").has_value());
}

TEST_CASE("a read-only cache never writes") {
  TempDir tmp;
  tune::gpu::BinaryCache cache(tmp.path / "ro", false);
  cache.store("k", tune::gpu::RtcOutput{"bin", "", false});
  CHECK_FALSE(fs::exists(tmp.path / "ro"));
}

TEST_CASE("concurrent writers of one key leave one complete entry") {
  TempDir tmp;
  tune::gpu::BinaryCache cache(tmp.path, true);
  tune::gpu::RtcOutput out;
  out.binary = std::string(1 << 20, 'z');
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) cache.store("same key", out);
    });
  for (auto& t : threads) t.join();
  CHECK(entries(tmp.path).size() == 1);
  auto hit = cache.load("same key");
  REQUIRE(hit.has_value());
  CHECK(hit->binary == out.binary);
}

TEST_CASE("compile_for hits the cache on the second compile, keyed by config and arch") {
  TempDir tmp;
  tune::gpu::BinaryCache cache(tmp.path, true);
  tune::KernelSource src;
  src.language = tune::Language::cuda_hip;
  src.entry = "k";
  src.text = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = V; }";
  // A fake compiler counts real compiles; the cache logic is the one every backend uses.
  struct Fake final : tune::gpu::RtcCompiler {
    int compiles = 0;
    std::string version() const override { return "fake 1.0"; }
    std::string_view binary_kind() const noexcept override { return "bin"; }
    tune::Result<std::vector<std::string>> target_options(std::string_view a) const override {
      return std::vector<std::string>{"--arch=" + std::string(a)};
    }
    std::vector<std::string> base_options() const override { return {"-O3"}; }
    std::string max_registers_option(int) const override { return {}; }
    tune::Result<tune::gpu::RtcOutput> compile(std::string_view s, std::string_view,
                                               std::span<const std::string> o) override {
      ++compiles;
      std::string bin(s);
      for (const auto& x : o) bin += x;
      return tune::gpu::RtcOutput{bin, "log", false};
    }
  } fake;
  auto a = tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, &cache);
  REQUIRE(a.ok());
  CHECK_FALSE(a->from_cache);
  auto b = tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, &cache);
  REQUIRE(b.ok());
  CHECK(b->from_cache);
  CHECK(b->binary == a->binary);
  CHECK(fake.compiles == 1);
  REQUIRE(tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 2}}, &cache).ok());
  REQUIRE(tune::gpu::compile_for(fake, "x2", src, tune::Config{{"V", 1}}, &cache).ok());
  src.text += " ";
  REQUIRE(tune::gpu::compile_for(fake, "x1", src, tune::Config{{"V", 1}}, &cache).ok());
  CHECK(fake.compiles == 4);
}
