// The kernel the isolation tests tune, shared by the test and its simulated worker
// (sim_worker.cpp) so that both processes model the same device: y[i] = 2 x[i] + 1 for the
// first n elements, run time from a cost model whose best correct configuration is BM=64.
//
// Fault injection, driven by the configuration's parameter F (only the worker acts on it):
// F=1 abort()s in launch/time (a crashing kernel: illegal address, trap), F=2 never returns
// (a hang), F=3 answers device_lost (a sticky error: the context is poisoned), F=4 launches
// fine and poisons the context for the device's next call (CUDA's deferred illegal address),
// F=5 sleeps kSlowMs per launch (a slow kernel; correct output). Faulting
// configurations are modelled as the fastest, so they would win if they did not fail.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tune/kernel.hpp"
#include "tune/testing/sim_device.hpp"

namespace tune::testing::isolation {

enum Fault : std::int64_t { none = 0, crash = 1, hang = 2, lost = 3, deferred = 4, slow = 5 };
inline constexpr int kSlowMs = 60;
inline constexpr int kSlowCompileMs = 150;  // sim_worker --device slow-compile

inline void y_body(const Config&, ArgList args, SimDevice&) {
  auto x = SimDevice::view<float>(args[0]);
  auto y = SimDevice::view<float>(args[1]);
  const auto n = static_cast<std::size_t>(args[2].as_int());
  for (std::size_t i = 0; i < n && i < x.size() && i < y.size(); ++i) y[i] = 2.0f * x[i] + 1.0f;
}

inline double y_cost(const Config& c, ArgList) {
  if (c.get_int("F") != none && c.get_int("F") != slow) return 100.0;
  const auto bm = c.get_int("BM");
  return 1000.0 + 10.0 * static_cast<double>(bm > 64 ? bm - 64 : 64 - bm);
}

inline void configure(SimDevice& dev) {
  dev.set_cost_model(y_cost);
  dev.set_kernel_body(y_body);
  dev.set_record_events(false);
}

// A kernel named `name` of the simulated language over (x, y, n), keyed by n, whose space
// lists twelve BM values (F = 0: no fault): what the multi-process tests tune.
inline KernelDef listed_kernel(std::string name) {
  KernelDef def;
  def.name = std::move(name);
  KernelSource src;
  src.language = Language::simulated;
  src.entry = "y";
  src.text = "// simulated";
  def.sources = {src};
  def.signature.buffer("x", ElemType::f32).buffer("y", ElemType::f32).scalar("n", ElemType::i32);
  std::vector<Config> configs;
  for (int bm : {8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128})
    configs.push_back(Config().set("BM", bm).set("F", 0));
  def.space = ConfigSpace::list(std::move(configs));
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    const auto bm = static_cast<std::uint32_t>(c.get_int("BM"));
    return LaunchDims{
        {static_cast<std::uint32_t>((args[2].as_int() + bm - 1) / bm), 1, 1}, {bm, 1, 1}, 0};
  };
  return def;
}

inline std::vector<float> reference(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0f * x[i] + 1.0f;
  return y;
}

}  // namespace tune::testing::isolation
