// The device-family fallback chain's first stage (cache/device_family.hpp): fingerprints of
// real DeviceInfo snapshots read back, and the level at which one device's rows stand to
// another's (exact, same architecture, same vendor, other).
#include <doctest/doctest.h>

#include <string>

#include "cache/device_family.hpp"
#include "tune/device_info.hpp"
#include "tune/testing/sim_device.hpp"

using namespace tune;
using namespace tune::cache;

namespace {

DeviceInfo device(std::string backend, std::string name, std::string arch, std::string driver) {
  DeviceInfo d = testing::SimDevice::default_info();
  d.backend = std::move(backend);
  d.name = std::move(name);
  d.arch = std::move(arch);
  d.driver_version = std::move(driver);
  return d;
}

DeviceFamily family(const DeviceInfo& d) {
  auto f = parse_fingerprint(d.fingerprint());
  REQUIRE_MESSAGE(f.has_value(), d.fingerprint());
  return *f;
}

}  // namespace

TEST_CASE("a fingerprint reads back into backend, name, arch, driver and vendor") {
  const DeviceFamily sim = family(testing::SimDevice::default_info());
  CHECK(sim.backend == "simulated");
  CHECK(sim.name == "simulated device");
  CHECK(sim.arch == "sim");
  CHECK(sim.driver == "sim-1");
  CHECK(sim.vendor == "simulated");

  const DeviceFamily h100 = family(device("cuda", "NVIDIA H100 80GB HBM3", "sm_90", "550.54"));
  CHECK(h100.vendor == "NVIDIA");
  CHECK(h100.arch == "sm_90");
  const DeviceFamily mi =
      family(device("hip", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", "6.2"));
  CHECK(mi.vendor == "AMD");
  CHECK(mi.arch == "gfx942:sramecc+:xnack-");
  // A '|' in the name stays in the name.
  const DeviceFamily odd = family(device("vulkan", "odd|name", "vk:4318:8817", "535.1"));
  CHECK(odd.name == "odd|name");
  CHECK(odd.arch == "vk:4318:8817");
  CHECK(odd.vendor == "vk:4318");

  CHECK_FALSE(parse_fingerprint("").has_value());
  CHECK_FALSE(parse_fingerprint("cuda|H100|sm_90").has_value());
  CHECK_FALSE(parse_fingerprint("|H100|sm_90|550").has_value());
  CHECK_FALSE(parse_fingerprint("cuda|H100||550").has_value());
}

TEST_CASE("family levels: exact, same architecture, same vendor, other") {
  const DeviceFamily h100 = family(device("cuda", "NVIDIA H100 PCIe", "sm_90", "550.54"));
  const DeviceFamily h100_new_driver = family(device("cuda", "NVIDIA H100 PCIe", "sm_90", "560.1"));
  const DeviceFamily h200 = family(device("cuda", "NVIDIA H200", "sm_90", "550.54"));
  const DeviceFamily a100 = family(device("cuda", "NVIDIA A100", "sm_80", "550.54"));
  const DeviceFamily mi300 = family(device("hip", "AMD Instinct MI300X", "gfx942", "6.2"));
  const DeviceFamily nv_vk = family(device("vulkan", "NVIDIA H100 PCIe", "vk:4318:8961", "550.54"));
  const DeviceFamily nv_vk2 = family(device("vulkan", "NVIDIA A100", "vk:4318:8384", "550.54"));
  const DeviceFamily lvp = family(device("vulkan", "llvmpipe", "vk:65541:0", "23.2"));

  CHECK(family_level(h100, h100) == FamilyLevel::exact);
  CHECK(family_level(h100, h100_new_driver) == FamilyLevel::same_architecture);
  CHECK(family_level(h100, h200) == FamilyLevel::same_architecture);
  CHECK(family_level(h100, a100) == FamilyLevel::same_vendor);
  CHECK(family_level(h100, mi300) == FamilyLevel::other);
  CHECK(family_level(h100, nv_vk) == FamilyLevel::other);  // another backend: other code
  CHECK(family_level(nv_vk, nv_vk2) == FamilyLevel::same_vendor);
  CHECK(family_level(nv_vk, lvp) == FamilyLevel::other);
  CHECK(to_string(FamilyLevel::same_architecture) == "same architecture");
}
