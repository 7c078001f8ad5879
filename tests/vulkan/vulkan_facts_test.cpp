// The Vulkan backend's device facts (backends/vulkan/src/device_facts.hpp) on hand-built
// snapshots of real devices: what DeviceInfo, memory types, buffer limits, flush size and
// shader capabilities the backend derives from a physical device's capabilities. No device is
// needed; the snapshots hold the fields those functions read, as the drivers report them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "compute_pipeline.hpp"
#include "device_facts.hpp"
#include "device_snapshots.hpp"
#include "scoped_env.hpp"
#include "skip.hpp"
#include "spirv_capabilities.hpp"
#include "spirv_reflect.hpp"
#include "tune/backend/power_settle.hpp"

namespace {

using namespace tune;
using namespace tune::vk;
using namespace tune::vk::snapshots;

}  // namespace

TEST_CASE("device facts: memory plan per device class") {
  SUBCASE("lavapipe: the one type, mapped; a cheap flush") {
    auto p = plan_memory(lavapipe());
    REQUIRE(p.ok());
    CHECK(p->device_type == 0);
    CHECK(p->staging_type == 0);
    CHECK(p->device_mappable);
    CHECK(p->max_buffer_bytes == 2 * kGiB);  // maxMemoryAllocationSize is the least
    CHECK(p->flush_bytes == (4ull << 20));
  }
  SUBCASE("H200: device-local without host visibility, cached staging, 64 MiB flush") {
    auto p = plan_memory(h200(true));
    REQUIRE(p.ok());
    CHECK(p->device_type == 1);
    CHECK(p->staging_type == 3);
    CHECK_FALSE(p->device_mappable);
    CHECK(p->max_buffer_bytes == 0xffffffffu);  // maxStorageBufferRange is the least
    CHECK(p->flush_bytes == (64ull << 20));
  }
  SUBCASE("integrated: device-local and host-visible, 16 MiB flush") {
    auto p = plan_memory(integrated());
    REQUIRE(p.ok());
    CHECK(p->device_type == 1);
    CHECK(p->staging_type == 1);
    CHECK(p->device_mappable);
    CHECK(p->flush_bytes == (16ull << 20));
  }
  SUBCASE("the flush is at most a quarter of the largest buffer, a multiple of 4") {
    DeviceCaps c = h200(true);
    c.props.limits.maxStorageBufferRange = (16u << 20) + 6;
    auto p = plan_memory(c);
    REQUIRE(p.ok());
    CHECK(p->flush_bytes == (4u << 20));
    CHECK(p->flush_bytes % 4 == 0);
  }
  SUBCASE("no host-visible type: unavailable") {
    DeviceCaps c;
    c.props.deviceType = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    add_heap(c, kGiB, true);
    add_type(c, kLocal, 0);
    CHECK(plan_memory(c).status().code() == StatusCode::unavailable);
  }
}

TEST_CASE("device facts: DeviceInfo from the capabilities") {
  tune::testing::ScopedEnv no_override("TUNE_LLC_BYTES", nullptr);
  const DeviceInfo lvp = device_info(lavapipe(), "shaderc test");
  CHECK(lvp.backend == "vulkan");
  CHECK(lvp.vendor == "Mesa");
  CHECK(lvp.name == "llvmpipe (LLVM 15.0.6, 256 bits)");
  CHECK(lvp.arch == "vk:10005:0");
  CHECK(lvp.driver_version == "llvmpipe Mesa 22.3.6 (LLVM 15.0.6)");
  CHECK(lvp.compiler_version == "shaderc test");
  CHECK(lvp.max_threads_per_block == 1024);
  CHECK(lvp.max_block == Dim3{1024, 1024, 64});
  CHECK(lvp.max_grid == Dim3{65535, 65535, 65535});
  CHECK(lvp.shared_bytes_per_block == 32768);
  CHECK(lvp.shared_bytes_per_block_optin == 32768);
  CHECK(lvp.warp_size == 8);
  CHECK(lvp.l2_bytes == 0);
  CHECK(lvp.llc_bytes == (2ull << 20));  // Vulkan reports no cache: the CPU device's default
  CHECK(lvp.llc_source == CacheSizeSource::default_size);
  CHECK(lvp.global_memory_bytes == 16 * kGiB);
  CHECK(lvp.timer_resolution_ns == 1.0);
  CHECK(lvp.clock_settle_ms == 0.0);
  CHECK(lvp.power_settle_ms == 0.0);  // a CPU: no sustained turns by default

  const DeviceInfo nv = device_info(h200(false), "shaderc test");
  CHECK(nv.vendor == "NVIDIA");
  CHECK(nv.arch == "vk:10de:2335");
  CHECK(nv.driver_version == "580.159.0");      // NVIDIA's own packing of driverVersion
  CHECK(nv.global_memory_bytes == 140 * kGiB);  // the largest device-local heap
  CHECK(nv.warp_size == 32);
  CHECK(nv.clock_settle_ms == 300.0);              // the driver's clock steps (clock_study)
  CHECK(nv.power_settle_ms == kGpuPowerSettleMs);  // a GPU's power limit (bench_cuda --turns)
  CHECK(nv.llc_bytes == (32ull << 20));            // the discrete default: flush 64 MiB
  CHECK(device_info(h200(true), "").driver_version == "NVIDIA 580.159");

  const DeviceInfo amd = device_info(integrated(), "");
  CHECK(amd.vendor == "AMD");
  CHECK(amd.driver_version == "2.0.279");  // Vulkan's packing for everyone else
  CHECK(amd.timer_resolution_ns == 10.0);
  CHECK(amd.llc_bytes == (8ull << 20));
  CHECK(amd.power_settle_ms == kGpuPowerSettleMs);  // an integrated GPU has a power limit too

  tune::testing::ScopedEnv user("TUNE_LLC_BYTES", "48M");
  const DeviceInfo sized = device_info(h200(false), "");
  CHECK(sized.llc_bytes == (48ull << 20));
  CHECK(sized.llc_source == CacheSizeSource::user);
}

TEST_CASE("device facts: names of vendors and device types") {
  CHECK(vendor_name(0x10DE) == "NVIDIA");
  CHECK(vendor_name(0x1002) == "AMD");
  CHECK(vendor_name(0x1022) == "AMD");
  CHECK(vendor_name(0x8086) == "Intel");
  CHECK(vendor_name(0x10005) == "Mesa");
  CHECK(vendor_name(0xabcd) == "vendor 0xabcd");
  CHECK(device_type_name(VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) == "discrete");
  CHECK(device_type_name(VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) == "integrated");
  CHECK(device_type_name(VK_PHYSICAL_DEVICE_TYPE_CPU) == "cpu");
  CHECK(device_type_name(VK_PHYSICAL_DEVICE_TYPE_OTHER) == "other");
}

TEST_CASE("device facts: SPIR-V capabilities a device supports") {
  const DeviceCaps lvp = lavapipe();
  CHECK(supports_capability(lvp, spv_cap::kFloat16));
  CHECK(supports_capability(lvp, spv_cap::kStorageBuffer16BitAccess));
  CHECK_FALSE(supports_capability(lvp, spv_cap::kStorageBuffer8BitAccess));
  CHECK(supports_capability(lvp, spv_cap::kGroupNonUniformArithmetic));
  CHECK_FALSE(supports_capability(lvp, spv_cap::kGroupNonUniformShuffle));
  CHECK(supports_capability(lvp, 1));  // Shader: core, always there
  CHECK_FALSE(supports_capability(lvp, spv_cap::kGroupNonUniformClustered));
  CHECK_FALSE(supports_capability(h200(true), spv_cap::kGroupNonUniformQuad));

  DeviceCaps no_compute_subgroups = h200(true);
  no_compute_subgroups.subgroup_in_compute = false;
  CHECK_FALSE(supports_capability(no_compute_subgroups, spv_cap::kGroupNonUniform));
  CHECK(supports_capability(h200(true), spv_cap::kGroupNonUniformShuffle));

  // Float atomics: a feature in either place declares the capability; integer dot products.
  CHECK(supports_capability(lvp, spv_cap::kAtomicFloat32AddEXT));
  CHECK(supports_capability(lvp, spv_cap::kAtomicFloat32MinMaxEXT));
  CHECK_FALSE(supports_capability(lvp, spv_cap::kAtomicFloat64AddEXT));
  CHECK_FALSE(supports_capability(lvp, spv_cap::kAtomicFloat16AddEXT));
  CHECK_FALSE(supports_capability(lvp, spv_cap::kAtomicFloat16MinMaxEXT));
  CHECK(supports_capability(lvp, spv_cap::kDotProductKHR));
  CHECK(supports_capability(lvp, spv_cap::kDotProductInput4x8BitKHR));  // with Int8
  DeviceCaps shared_only = h200(true);
  shared_only.float_atomics_buffer = {};
  shared_only.float_atomics_shared = {};
  shared_only.float_atomics_shared.float64_add = true;
  CHECK(supports_capability(shared_only, spv_cap::kAtomicFloat64AddEXT));
  CHECK_FALSE(supports_capability(shared_only, spv_cap::kAtomicFloat32AddEXT));

  const DeviceCaps apu = integrated();  // reports no optional feature
  CHECK_FALSE(supports_capability(apu, spv_cap::kAtomicFloat32AddEXT));
  CHECK_FALSE(supports_capability(apu, spv_cap::kDotProductKHR));
  CHECK_FALSE(supports_capability(apu, spv_cap::kFloat64));
  CHECK_FALSE(supports_capability(apu, spv_cap::kInt64));
  CHECK_FALSE(supports_capability(apu, spv_cap::kGroupNonUniform));
}

TEST_CASE("device facts: a capability needs the capabilities it implies") {
  // bf16 matrices imply the bf16 type and VK_KHR_cooperative_matrix's capability.
  DeviceCaps c = h200(true);
  c.bfloat16 = {true, true, true};
  c.coopmat_khr = false;
  CHECK(missing_capability(c, spv_cap::kBFloat16CooperativeMatrixKHR) ==
        spv_cap::kCooperativeMatrixKHR);
  CHECK(supports_capability(c, spv_cap::kBFloat16DotProductKHR));
  c.coopmat_khr = true;
  CHECK(supports_capability(c, spv_cap::kBFloat16CooperativeMatrixKHR));

  // A subgroup operation implies GroupNonUniform (the basic operations).
  DeviceCaps sg = h200(true);
  sg.subgroup_ops = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  CHECK(missing_capability(sg, spv_cap::kGroupNonUniformArithmetic) == spv_cap::kGroupNonUniform);
  CHECK(missing_capability(sg, spv_cap::kGroupNonUniformShuffle) ==
        spv_cap::kGroupNonUniformShuffle);  // its own feature first

  // Uniform-and-storage 16/8-bit access implies storage-buffer access; 64-bit atomics, Int64.
  DeviceCaps st = h200(true);
  st.uniform_storage16 = st.uniform_storage8 = true;
  st.storage16 = st.storage8 = st.int64 = false;
  CHECK(missing_capability(st, spv_cap::kUniformAndStorageBuffer16BitAccess) ==
        spv_cap::kStorageBuffer16BitAccess);
  CHECK(missing_capability(st, spv_cap::kUniformAndStorageBuffer8BitAccess) ==
        spv_cap::kStorageBuffer8BitAccess);
  CHECK(missing_capability(st, spv_cap::kInt64Atomics) == spv_cap::kInt64);
  // The unpacked 4 x 8-bit dot product takes 8-bit integers.
  DeviceCaps dot = lavapipe();
  dot.int8 = false;
  CHECK(missing_capability(dot, spv_cap::kDotProductInput4x8BitKHR) == spv_cap::kInt8);
  CHECK_FALSE(missing_capability(dot, spv_cap::kDotProductInput4x8BitPackedKHR).has_value());
  CHECK_FALSE(missing_capability(h200(true), spv_cap::kInt64Atomics).has_value());
}

// spv_cap::implied against the SPIR-V grammar of the spirv-headers package (its "capabilities"
// of each enumerant, Shader left out): every capability the backend names that the installed
// grammar knows (older headers lack the newest).
TEST_CASE("device facts: a module refused for a capability its declared one implies") {
  // bf16 matrices declared without the capabilities they imply (the grammar lets a module
  // leave them out), on a device with bf16 but without VK_KHR_cooperative_matrix.
  SpirvInfo si;
  si.capabilities = {1, spv_cap::kBFloat16CooperativeMatrixKHR};
  si.local_size[0] = 64;
  si.local_size[1] = si.local_size[2] = 1;
  DeviceCaps c = h200(true);
  c.bfloat16 = {true, true, true};
  const Status refused = check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200");
  CHECK(refused.code() == StatusCode::unavailable);
  const std::string& m = refused.message();
  CHECK_MESSAGE(
      m.find("needs SPIR-V capability " + capability_name(spv_cap::kCooperativeMatrixKHR) +
             ", which NVIDIA H200 does not support (the shader declares capability " +
             capability_name(spv_cap::kBFloat16CooperativeMatrixKHR) + ", which implies it)") !=
          std::string::npos,
      m);
  c.coopmat_khr = true;
  const Status ok = check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200");
  CHECK_MESSAGE(ok.ok(), ok.to_string());
  c.bfloat16.type = false;  // declared capability present, implied type missing
  CHECK_MESSAGE(check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200")
                        .message()
                        .find("capability " + capability_name(spv_cap::kBFloat16TypeKHR)) !=
                    std::string::npos,
                check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200").message());
}

TEST_CASE("device facts: the implied capabilities are the SPIR-V grammar's") {
  const char* path = "/usr/include/spirv/unified1/spirv.core.grammar.json";
  std::ifstream in(path);
  if (!in) TUNE_SKIP(std::string("no SPIR-V grammar at ") + path + " (package spirv-headers)");
  const nlohmann::json grammar = nlohmann::json::parse(in);
  std::map<std::string, std::uint32_t> value_of;
  std::map<std::uint32_t, std::set<std::string>> implies;
  for (const auto& kind : grammar.at("operand_kinds")) {
    if (kind.at("kind") != "Capability") continue;
    for (const auto& e : kind.at("enumerants")) {
      const auto v = e.at("value").get<std::uint32_t>();
      value_of[e.at("enumerant").get<std::string>()] = v;
      for (const auto& name : e.value("capabilities", nlohmann::json::array()))
        if (name != "Shader") implies[v].insert(name.get<std::string>());
    }
  }
  int checked = 0;
  for (std::uint32_t cap : spv_cap::kNamed) {
    CAPTURE(capability_name(cap));
    const bool known = std::any_of(value_of.begin(), value_of.end(),
                                   [&](const auto& kv) { return kv.second == cap; });
    if (!known) continue;
    std::set<std::uint32_t> expected;
    for (const std::string& name : implies[cap]) expected.insert(value_of.at(name));
    const auto ours = spv_cap::implied(cap);
    CHECK(std::set<std::uint32_t>(ours.begin(), ours.end()) == expected);
    ++checked;
  }
  MESSAGE(checked << " of " << std::size(spv_cap::kNamed) << " capabilities checked against "
                  << std::string(path));
  CHECK(checked >= 12);  // the Vulkan 1.1 ones, in any grammar (19 in Debian 13's)
}

namespace {

// Each <spirvcapability> of Vulkan's registry (vk.xml) -> the lowest minor version of Vulkan 1.x
// among its enables, or -1 when none is a version (gated by a feature, extension or property).
// The registry's layout: one element per line.
std::map<std::string, int> registry_capabilities(std::istream& in) {
  std::map<std::string, int> minor;
  const std::string open = "<spirvcapability name=\"", version = "VERSION_1_";
  std::string line, current;
  while (std::getline(in, line)) {
    if (const auto p = line.find(open); p != std::string::npos) {
      const auto from = p + open.size();
      current = line.substr(from, line.find('"', from) - from);
      minor[current] = -1;
    } else if (line.find("</spirvcapability>") != std::string::npos) {
      current.clear();
    } else if (const auto v = line.find(version);
               !current.empty() && line.find("<enable version=") != std::string::npos &&
               v != std::string::npos) {
      const int m = line[v + version.size()] - '0';
      minor[current] = minor[current] < 0 ? m : std::min(minor[current], m);
    }
  }
  return minor;
}

// The SPIR-V grammar's capability names (aliases too) -> numbers.
std::map<std::string, std::uint32_t> grammar_capabilities(std::istream& in) {
  const nlohmann::json grammar = nlohmann::json::parse(in);
  std::map<std::string, std::uint32_t> value_of;
  for (const auto& kind : grammar.at("operand_kinds")) {
    if (kind.at("kind") != "Capability") continue;
    for (const auto& e : kind.at("enumerants")) {
      const auto v = e.at("value").get<std::uint32_t>();
      value_of.emplace(e.at("enumerant").get<std::string>(), v);
      for (const auto& alias : e.value("aliases", nlohmann::json::array()))
        value_of.emplace(alias.get<std::string>(), v);
    }
  }
  return value_of;
}

}  // namespace

// Against Vulkan's registry and the SPIR-V grammar: libtune's core capabilities are the ones a
// Vulkan version (up to 1.3, these headers') enables, from that version; the ones it checks are
// gated; every other capability the registry knows is refused on a device with every feature
// libtune checks, and the names the refusal gives are the grammar's for their numbers.
TEST_CASE("device facts: a module may declare only the capabilities libtune checks or core ones") {
  const char* registry_path = "/usr/share/vulkan/registry/vk.xml";
  const char* grammar_path = "/usr/include/spirv/unified1/spirv.core.grammar.json";
  std::ifstream registry(registry_path), grammar(grammar_path);
  if (!registry) TUNE_SKIP(std::string("no Vulkan registry at ") + registry_path);
  if (!grammar) TUNE_SKIP(std::string("no SPIR-V grammar at ") + grammar_path);
  const std::map<std::string, int> minor = registry_capabilities(registry);
  const std::map<std::string, std::uint32_t> value_of = grammar_capabilities(grammar);
  REQUIRE(minor.size() > 100);
  const DeviceCaps device = h200_with_coopmat2();  // Vulkan 1.4
  int refused = 0;
  for (const auto& entry : minor) {  // no structured binding: the lambda below reads m
    const std::string& name = entry.first;
    const int m = entry.second;
    auto v = value_of.find(name);
    if (v == value_of.end() || m > 3) continue;  // newer than this grammar, or than 1.3
    CAPTURE(name);
    const bool core = std::any_of(
        std::begin(spv_cap::kCore), std::end(spv_cap::kCore),
        [&](const auto& k) { return k.cap == v->second && static_cast<int>(k.minor) == m; });
    const bool named = std::find(std::begin(spv_cap::kNamed), std::end(spv_cap::kNamed),
                                 v->second) != std::end(spv_cap::kNamed);
    CHECK(core == (m >= 0));
    CHECK(spv_cap::known(v->second) == (core || named));
    if (!spv_cap::known(v->second)) {
      CHECK_FALSE(supports_capability(device, v->second));
      ++refused;
    }
  }
  for (const spv_cap::UnenabledCapability& u : spv_cap::unenabled()) {
    CAPTURE(u.name);
    CHECK(minor.count(u.name) == 1);
    REQUIRE(value_of.count(u.name) == 1);
    CHECK(value_of.at(u.name) == u.cap);  // aliases share one number
    CHECK_FALSE(spv_cap::known(u.cap));
  }
  CHECK(std::is_sorted(spv_cap::unenabled().begin(), spv_cap::unenabled().end(),
                       [](const auto& a, const auto& b) { return a.cap < b.cap; }));
  MESSAGE(refused << " capabilities of " << std::string(registry_path) << " refused, "
                  << std::size(spv_cap::kNamed) << " checked, " << std::size(spv_cap::kCore)
                  << " core");
}

// The names refusals give the capabilities libtune checks are the grammar's for their numbers
// (the part before " (extension)"), for every number the installed grammar knows.
TEST_CASE("device facts: the checked capabilities' names are the SPIR-V grammar's") {
  const char* path = "/usr/include/spirv/unified1/spirv.core.grammar.json";
  std::ifstream in(path);
  if (!in) TUNE_SKIP(std::string("no SPIR-V grammar at ") + path + " (package spirv-headers)");
  const std::map<std::string, std::uint32_t> value_of = grammar_capabilities(in);
  int checked = 0;
  for (std::uint32_t cap : spv_cap::kNamed) {
    const std::string full = capability_name(cap);
    const std::string name = full.substr(0, full.find(" ("));
    CAPTURE(full);
    const bool known = std::any_of(value_of.begin(), value_of.end(),
                                   [&](const auto& kv) { return kv.second == cap; });
    if (!known) continue;  // newer than this grammar
    REQUIRE(value_of.count(name) == 1);
    CHECK(value_of.at(name) == cap);
    ++checked;
  }
  MESSAGE(checked << " of " << std::size(spv_cap::kNamed) << " names checked against "
                  << std::string(path));
  CHECK(checked >= 31);  // Debian 12's grammar: all but the bf16 and cooperative_matrix2 ones
}

// A module declaring a capability libtune neither enables nor checks is refused naming it (a
// number where no name is known) and why; a core one needs its Vulkan version; the one the
// memory model brings (VulkanMemoryModelDeviceScope) goes with the model.
TEST_CASE("device facts: a capability libtune does not support is refused, named") {
  SpirvInfo si;
  si.local_size[0] = 64;
  si.local_size[1] = si.local_size[2] = 1;
  DeviceCaps c = h200(true);
  c.memory_model = true;
  const std::string why =
      ", which libtune does not support (it neither enables nor checks what Vulkan requires for "
      "it)";
  // the shader clock, variable pointers, buffer addresses, 16-bit push constants, subgroup
  // rotation (newer than the registry), unknown numbers
  for (std::uint32_t cap : {5055u, 4441u, 5347u, 4435u, 6026u, 99999u}) {
    si.capabilities = {1, cap};
    const Status s = check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200");
    CAPTURE(capability_name(cap));
    CHECK(s.code() == StatusCode::unavailable);
    CHECK_MESSAGE(s.message().find("needs SPIR-V capability " + capability_name(cap) + why) !=
                      std::string::npos,
                  s.message());
  }
  CHECK(capability_name(5055) == "ShaderClockKHR");
  CHECK(capability_name(99999) == "99999");
  si.capabilities = {1, spv_cap::kVulkanMemoryModel, spv_cap::kVulkanMemoryModelDeviceScope};
  CHECK_MESSAGE(check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200").ok(), "with the model");
  c.memory_model = false;
  CHECK(check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200")
            .message()
            .find("which NVIDIA H200 does not support") != std::string::npos);
  si.capabilities = {1, 5301};  // ShaderNonUniform: core from Vulkan 1.2
  CHECK(check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200").ok());
  c.props.apiVersion = VK_API_VERSION_1_1;
  CHECK(check_spirv(si, Dim3{64, 1, 1}, c, "NVIDIA H200")
            .message()
            .find("capability 5301, which NVIDIA H200 does not support") != std::string::npos);
}

TEST_CASE("device facts: VK_NV_cooperative_matrix2's workgroup-scope shapes") {
  const auto list = h100_flexible_list();
  constexpr std::uint32_t f16 = kCoopComponentFloat16, bf16 = kCoopComponentBfloat16;
  const auto shapes = workgroup_shapes(list, f16, 1024, 256);
  REQUIRE(shapes.size() == 4);  // f16 x f16 + f32 at workgroup scope, one per workgroup size
  CHECK(shapes[0] == WorkgroupMatrixShape{32, {16, 16, 16}, 1024});
  CHECK(shapes[1] == WorkgroupMatrixShape{64, {16, 16, 16}, 1024});
  CHECK(shapes[2] == WorkgroupMatrixShape{128, {32, 16, 16}, 1024});
  CHECK(shapes[3] == WorkgroupMatrixShape{256, {32, 32, 16}, 1024});
  // bf16 x bf16 + f32: the same granularities on this driver, from the bf16 rows alone.
  auto bf16_list = list;
  for (auto& e : bf16_list)
    if (e.AType == bf16) e.MGranularity *= 2;  // told apart from the f16 rows
  const auto bf16_shapes = workgroup_shapes(bf16_list, bf16, 1024, 256);
  REQUIRE(bf16_shapes.size() == 4);
  CHECK(bf16_shapes[0] == WorkgroupMatrixShape{32, {32, 16, 16}, 1024});
  CHECK(bf16_shapes[3] == WorkgroupMatrixShape{256, {64, 32, 16}, 1024});
  CHECK(workgroup_shapes(bf16_list, f16, 1024, 256) == shapes);
  // Workgroups above cooperativeMatrixWorkgroupScopeMaxWorkgroupSize are left out.
  CHECK(workgroup_shapes(list, f16, 1024, 128).size() == 3);
  CHECK(workgroup_shapes(list, bf16, 1024, 128).size() == 3);
  CHECK(workgroup_shapes(list, f16, 1024, 0).empty());
  auto saturating = list;
  for (auto& e : saturating) e.saturatingAccumulation = VK_TRUE;
  CHECK(workgroup_shapes(saturating, f16, 1024, 256).empty());
  CHECK(workgroup_shapes(saturating, bf16, 1024, 256).empty());

  // DeviceInfo reports them only when every feature the bundled kernel needs is on.
  const DeviceInfo on = device_info(h200_with_coopmat2(), "");
  CHECK(on.workgroup_matrix_f16 == shapes);
  CHECK(device_info(h200(true), "").workgroup_matrix_f16.empty());
  CHECK(on.matrix_shapes_f16.size() == 2);
  for (int missing = 0; missing < 7; ++missing) {
    CAPTURE(missing);
    DeviceCaps c = h200_with_coopmat2();
    if (missing == 0) c.memory_model = false;
    if (missing == 1) c.maintenance4 = false;
    if (missing == 2) c.coopmat2.workgroup_scope = false;
    if (missing == 3) c.coopmat2.flexible_dimensions = false;
    if (missing == 4) c.coopmat2.tensor_addressing = false;
    if (missing == 5) c.float16 = false;
    if (missing == 6) c.storage16 = false;
    const DeviceInfo info = device_info(c, "");
    CHECK(info.workgroup_matrix_f16.empty());
    // The subgroup-scope kernel's shapes need f16 and the memory model, not the rest.
    CHECK(info.matrix_shapes_f16.empty() == (missing == 0 || missing >= 5));
    // bf16 needs all of the f16 kernel's (its buffers hold 16-bit floats too).
    CHECK(info.workgroup_matrix_bf16.empty());
  }
}

TEST_CASE("device facts: bf16 workgroup-scope matrices need VK_KHR_shader_bfloat16's features") {
  const auto bf16_shapes =
      workgroup_shapes(h100_flexible_list(), kCoopComponentBfloat16, 1024, 256);
  REQUIRE(bf16_shapes.size() == 4);
  CHECK(device_info(h200_with_coopmat2(), "").workgroup_matrix_bf16 == bf16_shapes);
  for (int missing = 0; missing < 3; ++missing) {
    CAPTURE(missing);
    DeviceCaps c = h200_with_coopmat2();
    if (missing == 0) c.bfloat16.type = false;
    if (missing == 1) c.bfloat16.cooperative_matrix = false;
    if (missing == 2) c.bfloat16.dot_product = false;  // not used by the kernel
    const DeviceInfo info = device_info(c, "");
    CHECK(info.workgroup_matrix_bf16.empty() == (missing != 2));
    CHECK(info.workgroup_matrix_f16.size() == 4);  // f16 does not depend on them
  }
  // A driver without bf16 rows: the features alone offer nothing.
  DeviceCaps no_rows = h200_with_coopmat2();
  no_rows.coopmat2_shapes_bf16.clear();
  CHECK(device_info(no_rows, "").workgroup_matrix_bf16.empty());

  // Each capability of VK_KHR_shader_bfloat16 follows its own feature, named in the refusal,
  // and the features of the capabilities it implies (the dot product and the matrices imply
  // the type).
  const std::pair<std::uint32_t, bool DeviceCaps::Bfloat16::*> caps[] = {
      {spv_cap::kBFloat16TypeKHR, &DeviceCaps::Bfloat16::type},
      {spv_cap::kBFloat16DotProductKHR, &DeviceCaps::Bfloat16::dot_product},
      {spv_cap::kBFloat16CooperativeMatrixKHR, &DeviceCaps::Bfloat16::cooperative_matrix}};
  for (const auto& cap : caps) {
    CAPTURE(capability_name(cap.first));
    CHECK(capability_name(cap.first).find("VK_KHR_shader_bfloat16") != std::string::npos);
    CHECK_FALSE(supports_capability(lavapipe(), cap.first));
    DeviceCaps c = h200_with_coopmat2();
    CHECK(supports_capability(c, cap.first));
    c.bfloat16.*cap.second = false;
    CHECK(missing_capability(c, cap.first) == cap.first);
    for (const auto& other : caps) {
      if (other.first == cap.first) continue;
      const auto implied = spv_cap::implied(other.first);
      const bool needs = std::find(implied.begin(), implied.end(), cap.first) != implied.end();
      CHECK(supports_capability(c, other.first) == !needs);
      if (needs) CHECK(missing_capability(c, other.first) == cap.first);
    }
  }
}

TEST_CASE("device facts: the cooperative-matrix capabilities follow their features") {
  const DeviceCaps none = lavapipe();
  const DeviceCaps all = h200_with_coopmat2();
  const std::uint32_t caps[] = {spv_cap::kCooperativeMatrixKHR,
                                spv_cap::kCooperativeMatrixReductionsNV,
                                spv_cap::kCooperativeMatrixConversionsNV,
                                spv_cap::kCooperativeMatrixPerElementOperationsNV,
                                spv_cap::kCooperativeMatrixTensorAddressingNV,
                                spv_cap::kCooperativeMatrixBlockLoadsNV,
                                spv_cap::kTensorAddressingNV};
  for (std::uint32_t cap : caps) {
    CAPTURE(capability_name(cap));
    CHECK_FALSE(supports_capability(none, cap));
    CHECK(supports_capability(all, cap));
    CHECK(capability_name(cap).find("cooperative_matrix") != std::string::npos);
  }
  DeviceCaps partial = all;
  partial.coopmat2.block_loads = false;
  CHECK_FALSE(supports_capability(partial, spv_cap::kCooperativeMatrixBlockLoadsNV));
  CHECK(supports_capability(partial, spv_cap::kTensorAddressingNV));
  partial.coopmat2.tensor_addressing = false;
  CHECK_FALSE(supports_capability(partial, spv_cap::kTensorAddressingNV));
  CHECK_FALSE(supports_capability(partial, spv_cap::kCooperativeMatrixTensorAddressingNV));
}

TEST_CASE("device facts: workgroup-scope matrices checked against the device before a pipeline") {
  // What the reflection of a VK_NV_cooperative_matrix2 module reports (the bundled
  // matmul_f16_coopmat2's capabilities; its reflection is tested in vulkan_spirv_tests).
  SpirvInfo si;
  si.capabilities = {1,
                     spv_cap::kFloat16,
                     spv_cap::kStorageBuffer16BitAccess,
                     spv_cap::kVulkanMemoryModel,
                     spv_cap::kCooperativeMatrixTensorAddressingNV,
                     spv_cap::kTensorAddressingNV,
                     spv_cap::kCooperativeMatrixKHR};
  si.workgroup_scope_matrices = true;
  si.local_size[0] = 128;
  si.local_size[1] = si.local_size[2] = 1;
  si.local_size_spec_id[0] = 0;
  si.local_size_is_spec = true;
  const DeviceCaps nv = h200_with_coopmat2();
  CHECK(check_spirv(si, Dim3{256, 1, 1}, nv, "NVIDIA H200").ok());
  CHECK(check_spirv(si, Dim3{}, nv, "NVIDIA H200").ok());  // the module's own 128

  const Status big = check_spirv(si, Dim3{512, 1, 1}, nv, "NVIDIA H200");
  CHECK(big.code() == StatusCode::out_of_resources);
  CHECK_MESSAGE(big.message().find("512 invocations") != std::string::npos, big.message());
  CHECK_MESSAGE(big.message().find("allows 256") != std::string::npos, big.message());

  DeviceCaps no_scope = nv;  // the capabilities, but no workgroup scope
  no_scope.coopmat2.workgroup_scope = false;
  const Status scope = check_spirv(si, Dim3{128, 1, 1}, no_scope, "NVIDIA H200");
  CHECK(scope.code() == StatusCode::unavailable);
  CHECK_MESSAGE(scope.message().find("cooperativeMatrixWorkgroupScope") != std::string::npos,
                scope.message());

  // The driver reserves shared memory for workgroup-scope matrices: the shader's own must fit
  // in what is left (48 KiB - 8 KiB here); a shader without them may use all 48 KiB.
  si.shared_bytes = 40960;
  CHECK(check_spirv(si, Dim3{128, 1, 1}, nv, "NVIDIA H200").ok());
  si.shared_bytes = 40964;
  const Status shared = check_spirv(si, Dim3{128, 1, 1}, nv, "NVIDIA H200");
  CHECK(shared.code() == StatusCode::out_of_resources);
  CHECK_MESSAGE(shared.message().find("8192 of it reserved") != std::string::npos,
                shared.message());
  SpirvInfo plain = si;
  plain.workgroup_scope_matrices = false;
  CHECK(check_spirv(plain, Dim3{128, 1, 1}, nv, "NVIDIA H200").ok());
  si.shared_bytes = 0;

  DeviceCaps lvp = lavapipe();
  lvp.memory_model = true;
  const Status missing = check_spirv(si, Dim3{128, 1, 1}, lvp, "llvmpipe");
  CHECK(missing.code() == StatusCode::unavailable);
  CHECK_MESSAGE(missing.message().find("VK_NV_cooperative_matrix2") != std::string::npos,
                missing.message());
}
