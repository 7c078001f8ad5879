// KernelSource::module_globals and KernelSource::tensor_maps on GpuDevice (the compile and
// launch paths CUDA and HIP share), without a GPU: a fake GpuApi records what the device asks
// of the driver. Module globals: each variant's values are copied into its own module after it
// loads; a missing symbol, a size mismatch or a throwing callback fails that variant with a
// reason naming the global and the kernel, and its module is unloaded (on a real device:
// module_globals_gpu_test.cpp). Tensor maps: encoded at launch from the call's buffer and
// sizes, passed after the arguments, re-encoded only when those change; shapes TMA cannot
// address are refused naming the map, or passed as zero maps for a spec that asks for that
// (TensorMapSpec::zeros_when_unaligned; on an H200: wgmma_gpu_test.cpp). Cached binaries: their
// parameters are checked against the kernel's signature where the driver tells them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_device.hpp"
#include "rtc.hpp"

using namespace tune;
using namespace tune::gpu;

namespace {

// What the fake driver saw.
struct Journal {
  int loads = 0, unloads = 0;
  std::map<std::string, std::size_t> symbols{{"scale", 4}, {"table", 16}};
  std::map<std::string, std::vector<std::byte>> written;  // by symbol, the last copy
  std::vector<std::string> lookups;
  bool tensor_maps = true;  // whether the fake vendor has them
  int encodes = 0;
  std::size_t launch_args = 0, launch_maps = 0;           // what a launch passes, set by the test
  std::vector<std::vector<std::uint64_t>> launched_maps;  // of the last launch: 16 words each
  int copies = 0, syncs = 0, launches = 0;                // host-to-device copies, stream syncs
  bool param_info = false;          // whether the fake driver tells a function's parameters
  std::vector<std::size_t> params;  // and their sizes, as a loaded module's function has them
};

class FakeApi final : public GpuApi {
 public:
  explicit FakeApi(Journal* j) : j_(j) {}
  const char* call_name(Call c) const noexcept override {
    return c == Call::module_get_global ? "fakeModuleGetGlobal" : "fakeCall";
  }
  std::string error_text(int code) const override { return "FAKE_ERROR_" + std::to_string(code); }
  ErrorClass classify(int) const noexcept override { return ErrorClass::other; }
  int enter_current(SavedCurrent*) override { return 0; }
  void leave_current(const SavedCurrent&) noexcept override {}
  int relax_capture_mode(int*) override { return 0; }
  void restore_capture_mode(int) noexcept override {}
  int mem_alloc(DevPtr* p, std::size_t) override {
    *p = next_alloc_;  // distinct, 64 KiB apart (tensor maps tell buffers apart by address)
    next_alloc_ += 0x10000;
    return 0;
  }
  int mem_free(DevPtr) override { return 0; }
  int memcpy_htod(DevPtr dst, const void* src, std::size_t bytes, Handle) override {
    ++j_->copies;
    for (const auto& [name, addr] : addresses_)
      if (addr == dst) {
        const auto* b = static_cast<const std::byte*>(src);
        j_->written[name].assign(b, b + bytes);
      }
    return 0;
  }
  int memcpy_dtoh(void*, DevPtr, std::size_t, Handle) override { return 0; }
  int memcpy_dtod(DevPtr, DevPtr, std::size_t, Handle) override { return 0; }
  int memset_d32(DevPtr, std::uint32_t, std::size_t, Handle) override { return 0; }
  int memset_d8(DevPtr, std::uint8_t, std::size_t, Handle) override { return 0; }
  int stream_create(Handle* s) override {
    *s = this;
    return 0;
  }
  int stream_destroy(Handle) override { return 0; }
  int stream_sync(Handle) override {
    ++j_->syncs;
    return 0;
  }
  int module_load(Handle* m, const void*) override {
    ++j_->loads;
    *m = this;
    return 0;
  }
  int module_unload(Handle) override {
    ++j_->unloads;
    return 0;
  }
  int module_get_function(Handle* f, Handle, const char*) override {
    *f = this;
    return 0;
  }
  int module_get_global(DevPtr* ptr, std::size_t* bytes, Handle, const char* name) override {
    j_->lookups.push_back(name);
    auto it = j_->symbols.find(name);
    if (it == j_->symbols.end()) return 500;  // CUDA_ERROR_NOT_FOUND's value
    // One address per symbol for the fake's life (a later module's lookup of the same name
    // must not land on another symbol's address).
    const auto slot = addresses_.try_emplace(name, 0x9000 + 0x100 * addresses_.size()).first;
    *ptr = slot->second;
    *bytes = it->second;
    return 0;
  }
  int func_get_attribute(int* v, FuncAttr, Handle) override {
    *v = 0;
    return 0;
  }
  int func_set_max_dynamic_shared(Handle, int) override { return 0; }
  int launch(Handle, const Dim3&, const Dim3&, std::uint32_t, Handle, void** params) override {
    ++j_->launches;
    j_->launched_maps.clear();
    for (std::size_t i = j_->launch_args; i < j_->launch_args + j_->launch_maps; ++i) {
      const auto* w = static_cast<const std::uint64_t*>(params[i]);
      CHECK(reinterpret_cast<std::uintptr_t>(w) % 64 == 0);  // CUtensorMap's alignment
      j_->launched_maps.emplace_back(w, w + 16);
    }
    return 0;
  }
  bool has_param_info() const noexcept override { return j_->param_info; }
  int func_param_info(Handle, std::size_t index, std::size_t* offset, std::size_t* bytes) override {
    if (index >= j_->params.size()) return 1;  // CUDA_ERROR_INVALID_VALUE past the last one
    *offset = 8 * index;
    *bytes = j_->params[index];
    return 0;
  }
  bool has_tensor_maps() const noexcept override { return j_->tensor_maps; }
  // The "map" records what it was encoded from: address, rows, cols, box, element size.
  int encode_tensor_map(void* map, const TensorMapSpec& spec, ElemType type, DevPtr ptr,
                        std::uint64_t rows, std::uint64_t cols) override {
    ++j_->encodes;
    const std::uint64_t words[16] = {ptr, rows, cols, spec.box_rows, spec.box_cols, size_of(type)};
    std::memcpy(map, words, sizeof words);
    return 0;
  }
  int event_create(Handle* e) override {
    *e = this;
    return 0;
  }
  int event_destroy(Handle) override { return 0; }
  int event_record(Handle, Handle) override { return 0; }
  int event_query(Handle) override { return 0; }
  int stream_is_capturing(bool* capturing, Handle) override {
    *capturing = false;
    return 0;
  }
  int event_create_ordering(Handle* e) override { return event_create(e); }
  int stream_wait_event(Handle, Handle) override { return 0; }
  int mem_get_address_range(DevPtr* base, std::size_t* bytes, DevPtr ptr) override {
    *base = ptr;
    *bytes = 0;
    return 0;
  }
  int event_elapsed_ms(float* ms, Handle, Handle) override {
    *ms = 0;
    return 0;
  }

 private:
  Journal* j_;
  std::map<std::string, DevPtr> addresses_;
  DevPtr next_alloc_ = 0x100000;
};

struct NoCompiler final : RtcCompiler {
  int compiles = 0;
  std::string version() const override { return "none 1.0"; }
  std::string_view binary_kind() const noexcept override { return "bin"; }
  Result<std::vector<std::string>> target_options(std::string_view, bool) const override {
    return std::vector<std::string>{};
  }
  std::vector<std::string> base_options() const override { return {}; }
  std::string max_registers_option(int) const override { return {}; }
  Result<RtcOutput> compile(std::string_view, std::string_view, std::span<const std::string>,
                            std::span<const KernelHeader>, std::string_view) override {
    ++compiles;
    RtcOutput out;
    out.binary = "image";
    return out;
  }
};

std::unique_ptr<GpuDevice> fake_device(Journal* j) {
  DeviceInfo info;
  info.backend = "fake";
  info.name = "fake device";
  info.arch = "sm_90";
  info.max_threads_per_block = 1024;
  info.shared_bytes_per_block = 48 * 1024;
  info.shared_bytes_per_block_optin = 228 * 1024;
  auto dev =
      GpuDevice::make(std::make_unique<FakeApi>(j), std::make_shared<NoCompiler>(), nullptr, info);
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  return std::move(*dev);
}

KernelSource with_globals(ModuleGlobalsFn fn) {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = "k";
  s.text = "__constant__ float scale; extern \"C\" __global__ void k() {}";
  s.module_globals = std::move(fn);
  return s;
}

Config with_s(std::int64_t s) {
  Config c;
  c.set("S", s);
  return c;
}

float as_float(const std::vector<std::byte>& b) {
  REQUIRE(b.size() == sizeof(float));
  float f = 0;
  std::memcpy(&f, b.data(), sizeof f);
  return f;
}

}  // namespace

TEST_CASE("each variant's module gets its own values of the module globals") {
  Journal j;
  auto dev = fake_device(&j);
  const KernelSource src = with_globals([](const Config& c) {
    const auto s = std::get<std::int64_t>(*c.find("S"));
    const std::int32_t table[4] = {1, 2, 3, static_cast<std::int32_t>(s)};
    return std::vector<ModuleGlobal>{
        ModuleGlobal::of("scale", 0.5f * static_cast<float>(s)),
        ModuleGlobal::of("table", std::span<const std::int32_t>(table))};
  });
  for (std::int64_t s : {1, 2, 3}) {
    auto k = dev->compile(src, with_s(s));
    REQUIRE_MESSAGE(k.ok(), k.status().to_string());
    CHECK(as_float(j.written["scale"]) == 0.5f * static_cast<float>(s));
    REQUIRE(j.written["table"].size() == 16);
    std::int32_t last = 0;
    std::memcpy(&last, j.written["table"].data() + 12, 4);
    CHECK(last == s);
  }
  CHECK(j.loads == 3);
}

TEST_CASE(
    "module globals are copied once when the variant loads; a launch copies and syncs nothing") {
  // Issue 13: with OpenOptions::use_stream the device's queue is the application's stream, so a
  // per-launch copy and sync there would stall the application on every cache hit.
  Journal j;
  auto dev = fake_device(&j);
  const KernelSource src = with_globals(
      [](const Config&) { return std::vector<ModuleGlobal>{ModuleGlobal::of("scale", 2.0f)}; });
  auto k = dev->compile(src, with_s(1));
  REQUIRE_MESSAGE(k.ok(), k.status().to_string());
  CHECK(j.copies == 1);
  const int syncs = j.syncs;
  const LaunchDims dims{{1, 1, 1}, {32, 1, 1}, 0};
  const LaunchTarget stream = LaunchTarget::stream(reinterpret_cast<void*>(0x77));
  for (int i = 0; i < 10; ++i) {
    REQUIRE(dev->launch(**k, dims, {}).ok());
    REQUIRE(dev->launch_on(**k, dims, {}, stream).ok());
  }
  CHECK(j.launches == 20);
  CHECK(j.copies == 1);
  CHECK(j.syncs == syncs);
}

TEST_CASE("a module global the module lacks fails that variant naming the global and kernel") {
  Journal j;
  auto dev = fake_device(&j);
  const KernelSource src = with_globals(
      [](const Config&) { return std::vector<ModuleGlobal>{ModuleGlobal::of("scael", 1.0f)}; });
  auto k = dev->compile(src, with_s(1));
  REQUIRE(!k.ok());
  CHECK(k.status().code() == StatusCode::invalid_argument);
  const std::string& m = k.status().message();
  CHECK(m.find("module global 'scael'") != std::string::npos);
  CHECK(m.find("k{S=1}") != std::string::npos);  // the kernel and its configuration
  CHECK(m.find("fakeModuleGetGlobal") != std::string::npos);
  CHECK(j.unloads == j.loads);  // the variant's module is not leaked
}

TEST_CASE("a module global of the wrong size fails that variant, naming both sizes") {
  Journal j;
  auto dev = fake_device(&j);
  const KernelSource src = with_globals([](const Config&) {
    return std::vector<ModuleGlobal>{ModuleGlobal::of("scale", 1.0)};  // a double: 8 bytes
  });
  auto k = dev->compile(src, with_s(2));
  REQUIRE(!k.ok());
  CHECK(k.status().code() == StatusCode::invalid_argument);
  CHECK(k.status().message().find("'scale' of k{S=2} is 4 bytes; module_globals gave 8") !=
        std::string::npos);
  CHECK(j.written.empty());
  CHECK(j.unloads == j.loads);
}

TEST_CASE("a module_globals callback that throws fails that variant with callback_failed") {
  Journal j;
  auto dev = fake_device(&j);
  const KernelSource src = with_globals([](const Config& c) -> std::vector<ModuleGlobal> {
    if (std::get<std::int64_t>(*c.find("S")) == 2) throw std::runtime_error("no value for S=2");
    return {ModuleGlobal::of("scale", 1.0f)};
  });
  CHECK(dev->compile(src, with_s(1)).ok());
  auto k = dev->compile(src, with_s(2));
  REQUIRE(!k.ok());
  CHECK(k.status().code() == StatusCode::callback_failed);
  CHECK(k.status().message().find("module_globals threw for k{S=2}: no value for S=2") !=
        std::string::npos);
  CHECK(j.unloads == j.loads);
}

namespace {

// A kernel (A f16[rows * cols], rows i32, cols i32) with one tensor map over A, box BOX x 64.
KernelSource with_tensor_map() {
  KernelSource s;
  s.language = Language::cuda_hip;
  s.entry = "k";
  s.text = "extern \"C\" __global__ void k() {}";
  s.tensor_maps = [](const Config& c) {
    const auto box = static_cast<std::uint32_t>(std::get<std::int64_t>(*c.find("S")));
    return std::vector<TensorMapSpec>{{0, 1, 2, box, 64, TensorMapSpec::Swizzle::bytes128}};
  };
  return s;
}

}  // namespace

TEST_CASE("tensor maps are encoded at launch, after the arguments, again only on a change") {
  Journal j;
  j.launch_args = 3;
  j.launch_maps = 1;
  auto dev = fake_device(&j);
  auto k = dev->compile(with_tensor_map(), with_s(128));
  REQUIRE_MESSAGE(k.ok(), k.status().to_string());
  CHECK(j.encodes == 0);  // nothing is known of the buffers before a launch
  auto a = dev->alloc(256 * 512 * 2);
  auto b = dev->alloc(256 * 512 * 2);
  REQUIRE((a.ok() && b.ok()));
  auto launch = [&](DeviceBuffer& buf, std::int32_t rows, std::int32_t cols) {
    const ArgValue args[] = {ArgValue::buf(buf, ElemType::f16, 256 * 512), rows, cols};
    return dev->launch(**k, LaunchDims{{1, 1, 1}, {128, 1, 1}, 0}, args);
  };
  REQUIRE(launch(**a, 256, 512).ok());
  CHECK(j.encodes == 1);
  REQUIRE(j.launched_maps.size() == 1);
  const std::uint64_t a_ptr = j.launched_maps[0][0];
  CHECK(j.launched_maps[0] ==
        std::vector<std::uint64_t>{a_ptr, 256, 512, 128, 64, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  // The same buffer and sizes: the kept map, not a new encoding.
  REQUIRE(launch(**a, 256, 512).ok());
  CHECK(j.encodes == 1);
  CHECK(j.launched_maps[0][0] == a_ptr);
  // Another buffer (a later call of the application's): encoded for that buffer.
  REQUIRE(launch(**b, 256, 512).ok());
  CHECK(j.encodes == 2);
  CHECK(j.launched_maps[0][0] != a_ptr);
  // Other sizes on the same buffer: encoded again.
  REQUIRE(launch(**b, 128, 512).ok());
  CHECK(j.encodes == 3);
  CHECK(j.launched_maps[0][1] == 128);
}

TEST_CASE("a shape TMA cannot address is invalid_argument naming the map and the row stride") {
  Journal j;
  j.launch_args = 3;
  j.launch_maps = 1;
  auto dev = fake_device(&j);
  auto k = dev->compile(with_tensor_map(), with_s(128));
  REQUIRE_MESSAGE(k.ok(), k.status().to_string());
  auto a = dev->alloc(1000 * 1030 * 2);
  REQUIRE(a.ok());
  const ArgValue args[] = {ArgValue::buf(**a, ElemType::f16, 1000 * 1030), std::int32_t{1000},
                           std::int32_t{1030}};
  const Status st = dev->launch(**k, LaunchDims{{1, 1, 1}, {128, 1, 1}, 0}, args);
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK(st.message().find("tensor map 0") != std::string::npos);
  CHECK(st.message().find("2060 bytes") != std::string::npos);
  CHECK(j.encodes == 0);
  // A matrix larger than its buffer is refused before the driver sees it.
  const ArgValue big[] = {ArgValue::buf(**a, ElemType::f16, 1000 * 1030), std::int32_t{4096},
                          std::int32_t{1024}};
  const Status over = dev->launch(**k, LaunchDims{{1, 1, 1}, {128, 1, 1}, 0}, big);
  CHECK(over.code() == StatusCode::invalid_argument);
  CHECK(over.message().find("does not fit argument 0") != std::string::npos);
}

TEST_CASE("zeros_when_unaligned passes a zero map for a shape TMA cannot address") {
  Journal j;
  j.launch_args = 3;
  j.launch_maps = 1;
  auto dev = fake_device(&j);
  KernelSource src = with_tensor_map();
  src.tensor_maps = [](const Config&) {
    return std::vector<TensorMapSpec>{
        {0, 1, 2, 128, 64, TensorMapSpec::Swizzle::bytes128, /*zeros_when_unaligned=*/true}};
  };
  auto k = dev->compile(src, with_s(128));
  REQUIRE_MESSAGE(k.ok(), k.status().to_string());
  auto a = dev->alloc(1000 * 1030 * 2);
  REQUIRE(a.ok());
  auto launch = [&](std::int32_t rows, std::int32_t cols) {
    const ArgValue args[] = {ArgValue::buf(**a, ElemType::f16, 1000 * 1030), rows, cols};
    return dev->launch(**k, LaunchDims{{1, 1, 1}, {128, 1, 1}, 0}, args);
  };
  const std::vector<std::uint64_t> zeros(16, 0);
  // A 2060-byte row: launched with 128 zero bytes, nothing encoded.
  const Status odd = launch(1000, 1030);
  REQUIRE_MESSAGE(odd.ok(), odd.to_string());
  CHECK(j.encodes == 0);
  REQUIRE(j.launched_maps.size() == 1);
  CHECK(j.launched_maps[0] == zeros);
  // An aligned shape on the same buffer is encoded as ever, then the odd one is zeros again
  // (the kept map is not passed for it).
  REQUIRE(launch(1000, 1024).ok());
  CHECK(j.encodes == 1);
  CHECK(j.launched_maps[0][2] == 1024);
  REQUIRE(launch(1000, 1030).ok());
  CHECK(j.encodes == 1);
  CHECK(j.launched_maps[0] == zeros);
  REQUIRE(launch(1000, 1024).ok());
  CHECK(j.encodes == 1);  // the kept map
  CHECK(j.launched_maps[0][2] == 1024);
  // A matrix larger than its buffer is still refused: the flag is about TMA's alignment alone.
  const Status over = launch(4096, 1030);
  CHECK(over.code() == StatusCode::invalid_argument);
  CHECK(over.message().find("does not fit argument 0") != std::string::npos);
}

TEST_CASE("tensor maps on a vendor without them, or a throwing callback, fail the variant") {
  Journal j;
  j.tensor_maps = false;
  auto dev = fake_device(&j);
  auto refused = dev->compile(with_tensor_map(), with_s(128));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::invalid_argument);
  CHECK(refused.status().message().find("KernelSource::tensor_maps") != std::string::npos);
  j.tensor_maps = true;
  KernelSource src = with_tensor_map();
  src.tensor_maps = [](const Config&) -> std::vector<TensorMapSpec> {
    throw std::runtime_error("no box for this tile");
  };
  auto threw = dev->compile(src, with_s(128));
  REQUIRE_FALSE(threw.ok());
  CHECK(threw.status().code() == StatusCode::callback_failed);
  CHECK(threw.status().message().find("no box for this tile") != std::string::npos);
  CHECK(threw.status().message().find("k{") != std::string::npos);
  CHECK(j.loads == 0);  // refused before any module was loaded
}

TEST_CASE("a vendor without thread-block clusters refuses a cluster launch naming the kernel") {
  // HIP's GpuApi has no clusters (has_clusters() is false), as this fake's: the refusal is
  // GpuDevice's, before the driver is asked.
  Journal j;
  auto dev = fake_device(&j);
  auto k = dev->compile(with_globals([](const Config&) { return std::vector<ModuleGlobal>{}; }),
                        with_s(1));
  REQUIRE_MESSAGE(k.ok(), k.status().to_string());
  const Status st = dev->launch(**k, LaunchDims{{2, 1, 1}, {128, 1, 1}, 0, {2, 1, 1}}, {});
  CHECK(st.code() == StatusCode::invalid_argument);
  CHECK_MESSAGE(st.message().starts_with("k{"), st.message());  // the variant's name
  CHECK_MESSAGE(st.message().find("cluster 2x1x1") != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find("fake has no thread-block clusters") != std::string::npos,
                st.message());
  CHECK(j.launches == 0);
  // A cluster of one block is no cluster: the plain launch, as before clusters existed.
  REQUIRE(dev->launch(**k, LaunchDims{{2, 1, 1}, {128, 1, 1}, 0, {1, 1, 1}}, {}).ok());
  CHECK(j.launches == 1);
}

TEST_CASE("a cached binary whose parameters are not the kernel's is evicted and compiled again") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("libtune-params-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto cache = std::make_shared<BinaryCache>(dir, true);
  Journal j;
  j.param_info = true;
  j.params = {8, 4};  // a device pointer and an int: the kernel's signature below
  DeviceInfo info;
  info.backend = "fake";
  info.name = "fake device";
  info.arch = "sm_90";
  info.max_threads_per_block = 1024;
  info.shared_bytes_per_block_optin = 228 * 1024;
  auto compiler = std::make_shared<NoCompiler>();
  auto made = GpuDevice::make(std::make_unique<FakeApi>(&j), compiler, cache, info);
  REQUIRE(made.ok());
  GpuDevice& dev = **made;
  KernelSource src;
  src.language = Language::cuda_hip;
  src.entry = "k";
  src.text = "extern \"C\" __global__ void k(float* x, int n) {}";
  src.signature.buffer("x", ElemType::f32).scalar("n", ElemType::i32);

  auto first = dev.compile(src, with_s(1));
  REQUIRE(first.ok());
  CHECK_FALSE((*first)->from_binary_cache());
  auto hit = dev.compile(src, with_s(1));  // the parameters match: the cached binary is used
  REQUIRE(hit.ok());
  CHECK((*hit)->from_binary_cache());
  CHECK(compiler->compiles == 1);

  for (const auto& forged : std::vector<std::vector<std::size_t>>{{8}, {8, 4, 8}, {8, 8}, {4, 4}}) {
    CAPTURE(forged.size());
    j.params = {8, 4};
    REQUIRE(dev.compile(src, with_s(2)).ok());  // a fresh entry to forge
    j.params = forged;  // what the entry's binary declares: another kernel's code
    const int before = compiler->compiles;
    auto again = dev.compile(src, with_s(2));
    REQUIRE_MESSAGE(again.ok(), again.status().to_string());
    CHECK_FALSE((*again)->from_binary_cache());  // compiled afresh, not launched
    CHECK(compiler->compiles == before + 1);
  }
  // Where the driver cannot tell (HIP, a CUDA driver before 12.4), the binary is used as is.
  j.param_info = false;
  j.params = {8};
  auto untold = dev.compile(src, with_s(1));
  REQUIRE(untold.ok());
  CHECK((*untold)->from_binary_cache());
  std::filesystem::remove_all(dir);
}

TEST_CASE("parameters_unlike names the first parameter unlike the signature") {
  KernelSignature sig;
  sig.buffer("x", ElemType::f32).scalar("n", ElemType::i32).scalar("alpha", ElemType::f64);
  const std::vector<std::size_t> right = {8, 4, 8};
  CHECK(parameters_unlike(right, sig, 0).empty());
  const std::vector<std::size_t> with_map = {8, 4, 8, 128};
  CHECK(parameters_unlike(with_map, sig, 1).empty());
  const std::vector<std::size_t> short_list = {8, 4};
  CHECK(parameters_unlike(short_list, sig, 0).find("2 parameters") != std::string::npos);
  const std::vector<std::size_t> wrong = {8, 8, 8};
  CHECK(parameters_unlike(wrong, sig, 0).find("argument 'n'") != std::string::npos);
}
