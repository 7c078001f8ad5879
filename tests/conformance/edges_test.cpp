// Conformance: the edges of a launch, the same on every backend. An empty problem (a grid with
// a zero dimension, as for n = 0) launches nothing and succeeds, through the device and the
// Autotuner; a LaunchDims::block that dims() leaves unset is the configuration's block.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "conformance_device.hpp"
#include "skip.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;

AutotunerOptions quick() {
  AutotunerOptions o;
  o.persistent = false;
  o.print = false;
  o.bench.warmup_ms = 0.5;
  o.bench.rep_ms = 1;
  return o;
}

// How many of c's first n floats still hold the poison (NaN) a workload writes.
std::size_t poisoned(Device& dev, const DeviceBuffer& c, std::size_t n) {
  std::vector<float> out(n);
  REQUIRE(dev.download(c, out.data(), n * sizeof(float)).ok());
  std::size_t count = 0;
  for (float v : out) count += v != v ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("empty problem: n = 0 launches nothing and succeeds, on the device and the tuner") {
  auto dev = tune::testing::open_conformance_device();
  const auto k = kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  auto w = k->workload(std::vector<std::int64_t>{4096});
  REQUIRE(w->setup(*dev, 21).ok());
  REQUIRE(w->poison_outputs(*dev).ok());
  std::vector<ArgValue> args(w->args().begin(), w->args().end());
  args[3] = ArgValue(std::int32_t{0});  // vector_add(a, b, c, n): n = 0
  const DeviceBuffer& c = *args[2].buffer;

  // The device: a grid with a zero dimension is a launch of nothing.
  auto kernel = dev->compile(*k->def.source_for(dev->language()), k->default_config);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
  for (const Dim3 grid : {Dim3{0, 1, 1}, Dim3{4, 0, 1}, Dim3{4, 1, 0}}) {
    const Status st = dev->launch(**kernel, {grid, k->default_config.launch().block}, args);
    CHECK_MESSAGE(st.ok(), st.to_string());
  }
  REQUIRE(dev->synchronize().ok());
  CHECK(poisoned(*dev, c, 4096) == 4096);

  // The Autotuner: no tuning (nothing to time), one report saying so, nothing written.
  TuningReport seen;
  int reports = 0;
  AutotunerOptions o = quick();
  o.listener = [&](const TuningReport& r) {
    seen = r;
    ++reports;
  };
  auto tuner = Autotuner::make(k->def, o);
  REQUIRE(tuner.ok());
  for (int call = 0; call < 2; ++call) {
    const Status st = (*tuner)->run(*dev, args);
    REQUIRE_MESSAGE(st.ok(), st.to_string());
  }
  REQUIRE(dev->synchronize().ok());
  CHECK(reports == 1);
  CHECK(seen.source == ResultSource::empty);
  CHECK(poisoned(*dev, c, 4096) == 4096);
}

TEST_CASE("launch block: a block dims() leaves unset is the configuration's block") {
  auto dev = tune::testing::open_conformance_device();
  auto k = kernels::bundled_kernel(dev->language(), "vector_add");
  REQUIRE(k.has_value());
  KernelDef def = k->def;
  auto dims = def.dims;
  def.dims = [dims](const Config& c, ArgList args) {
    LaunchDims d = dims(c, args);
    d.block = {0, 0, 0};  // unset: the configuration's block.x decides
    return d;
  };
  auto tuner = Autotuner::make(def, quick());
  REQUIRE(tuner.ok());
  auto w = k->workload(std::vector<std::int64_t>{4099});
  REQUIRE(w->setup(*dev, 22).ok());
  REQUIRE(w->poison_outputs(*dev).ok());
  const Status st = (*tuner)->run(*dev, w->args());
  REQUIRE_MESSAGE(st.ok(), st.to_string());  // every configuration used to fail here
  const Status out = w->check(*dev);
  CHECK_MESSAGE(out.ok(), out.to_string());
}
