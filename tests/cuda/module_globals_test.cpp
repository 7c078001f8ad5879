// KernelSource::module_globals on GpuDevice (the compile path CUDA and HIP share), without a
// GPU: a fake GpuApi records what the device asks of the driver. Each variant's values are
// copied into its own module after it loads; a missing symbol, a size mismatch or a throwing
// callback fails that variant with a reason naming the global and the kernel, and its module
// is unloaded. The same on a real device: module_globals_gpu_test.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
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
    *p = 0x1000;
    return 0;
  }
  int mem_free(DevPtr) override { return 0; }
  int memcpy_htod(DevPtr dst, const void* src, std::size_t bytes, Handle) override {
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
  int stream_sync(Handle) override { return 0; }
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
  int launch(Handle, const Dim3&, const Dim3&, std::uint32_t, Handle, void**) override { return 0; }
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
};

struct NoCompiler final : RtcCompiler {
  std::string version() const override { return "none 1.0"; }
  std::string_view binary_kind() const noexcept override { return "bin"; }
  Result<std::vector<std::string>> target_options(std::string_view) const override {
    return std::vector<std::string>{};
  }
  std::vector<std::string> base_options() const override { return {}; }
  std::string max_registers_option(int) const override { return {}; }
  Result<RtcOutput> compile(std::string_view, std::string_view, std::span<const std::string>,
                            std::span<const KernelHeader>, std::string_view) override {
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
