// The Autotuner's hot path: a call with a known key must not allocate (autotuner.hpp: "A known
// key launches the remembered variant: no lock, no allocation"). Counted by replacing the
// global operator new in this test binary; the counter is per thread, so other threads'
// allocations (none expected here) never leak into a measurement.
//
// Sanitizer builds keep their own allocator: there these cases are compiled out (not skipped
// and not passed silently: they do not exist in that binary).
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>

#include "key_builder.hpp"
#include "sim_fixture.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TUNE_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TUNE_TEST_SANITIZED 1
#endif

#ifndef TUNE_TEST_SANITIZED

namespace {
thread_local std::size_t g_allocations = 0;
int* volatile g_sink = nullptr;  // keeps the sanity check's allocation from being elided
}  // namespace

// Replacements of the global allocation functions (malloc/free based). GCC cannot see that
// the replaced operator new and operator delete match once they are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using namespace tune;
using namespace tune::testing;

namespace {

// Allocations made by `fn` on this thread.
template <class Fn>
std::size_t allocations_of(Fn&& fn) {
  const std::size_t before = g_allocations;
  fn();
  return g_allocations - before;
}

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
