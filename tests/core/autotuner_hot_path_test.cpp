// The Autotuner's hot path: a call with a known key must not allocate (autotuner.hpp: "A known
// key launches the remembered variant: no lock, no allocation"), counted with
// tests/support/allocation_counter.hpp (compiled out in sanitizer builds).
#include <doctest/doctest.h>

#include "allocation_counter.hpp"
#include "key_builder.hpp"
#include "sim_fixture.hpp"

#ifndef TUNE_TEST_SANITIZED

using namespace tune;
using namespace tune::testing;

namespace {
int* volatile g_sink = nullptr;  // keeps the sanity check's allocation from being elided
}  // namespace

TEST_CASE("allocation counter sanity") {
  CHECK(allocations_of([] {
          g_sink = new int(3);
          delete g_sink;
        }) == 1);
  CHECK(allocations_of([] {}) == 0);
}

TEST_CASE("KeyBuilder::build does not allocate") {
  SimRig rig;
  KernelDef def = sim_kernel(bm_space({32}));
  auto kb = KeyBuilder::make(def.signature, {KeySpec::pow2("n")});
  REQUIRE(kb.ok());
  auto args = rig.args(1000);
  std::uint64_t sink = 0;
  CHECK(allocations_of([&] {
          for (int i = 0; i < 100; ++i) sink += kb->build(args, 1).hash;
        }) == 0);
  CHECK(sink != 0);
}

TEST_CASE("KernelSignature::check does not allocate on valid arguments") {
  SimRig rig;
  // Realistic names: longer than the small-string buffer of std::string.
  KernelSignature sig;
  sig.buffer("input_activations", ElemType::f32).scalar("num_elements", ElemType::i32);
  std::vector<ArgValue> args = {ArgValue::buf(*rig.x, ElemType::f32, 1024), ArgValue(1000)};
  bool all_ok = true;
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 100; ++i) all_ok &= sig.check(args).ok();
  });
  CHECK(all_ok);
  CHECK_MESSAGE(n == 0, n << " allocations in 100 checks of valid arguments");
}

TEST_CASE("Autotuner::run on a known key does not allocate") {
  SimRig rig;
  rig.dev.set_fast_launch(true);  // the simulated launch itself records nothing
  auto tuner = Autotuner::make(sim_kernel(bm_space({32, 64})), quiet_options());
  REQUIRE(tuner.ok());
  auto args = rig.args(1000);
  REQUIRE((*tuner)->run(rig.dev, args).ok());  // tunes: allocates freely
  bool all_ok = true;
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 100; ++i) all_ok &= (*tuner)->run(rig.dev, args).ok();
  });
  CHECK(all_ok);
  CHECK_MESSAGE(n == 0, n << " allocations in 100 cache-hit calls");
}

TEST_CASE("Autotuner::run on a known key with a stream target does not allocate") {
  SimRig rig;
  rig.dev.set_fast_launch(true);
  auto tuner = Autotuner::make(sim_kernel(bm_space({32, 64})), quiet_options());
  REQUIRE(tuner.ok());
  auto args = rig.args(1000);
  const LaunchTarget stream = LaunchTarget::stream(reinterpret_cast<void*>(std::uintptr_t{0x7}));
  REQUIRE((*tuner)->run(rig.dev, args, stream).ok());  // tunes: allocates freely
  bool all_ok = true;
  const std::size_t n = allocations_of([&] {
    for (int i = 0; i < 100; ++i) all_ok &= (*tuner)->run(rig.dev, args, stream).ok();
  });
  CHECK(all_ok);
  CHECK_MESSAGE(n == 0, n << " allocations in 100 cache-hit calls on a stream");
  CHECK(rig.dev.target_launches() == 101);
}

#endif  // TUNE_TEST_SANITIZED
