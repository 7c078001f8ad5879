// The accumulating kernel of the hook tests: acc_kernel(x: f32 in/out, acc: f32, n: i32) does
// acc += x, then x = 2 * x + 1, on real host memory, so a missing reset or restore shows.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "sim_fixture.hpp"

namespace tune::testing {

// acc_kernel(x: f32 in/out, acc: f32 accumulator, n: i32): acc += x, then x = 2 * x + 1.
// Both effects compound if a buffer is not reset/restored between launches.
inline KernelDef acc_kernel(ConfigSpace space) {
  KernelDef def;
  def.name = "acc_kernel";
  def.sources = {sim_source()};
  def.signature.buffer("x", ElemType::f32).buffer("acc", ElemType::f32).scalar("n", ElemType::i32);
  def.space = std::move(space);
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config&, ArgList) { return LaunchDims{{1, 1, 1}, {64, 1, 1}, 0}; };
  return def;
}

struct AccRig {
  SimDevice dev;
  Buffer x, acc;
  static constexpr int kN = 8;
  // What each execution saw at entry: x[0] and acc[0] (under a mutex: bodies may run anywhere).
  std::mutex mu;
  std::vector<std::pair<float, float>> seen;

  AccRig() {
    const std::vector<float> xs = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<float> zeros(kN, 0.0f);
    x = dev.make_buffer<float>(xs, "x").value();
    acc = dev.make_buffer<float>(zeros, "acc").value();
    dev.set_cost_model(bm_model(64));
    dev.set_kernel_body([this](const Config&, ArgList args, SimDevice&) {
      auto xv = SimDevice::view<float>(args[0]);
      auto av = SimDevice::view<float>(args[1]);
      {
        std::lock_guard lock(mu);
        seen.emplace_back(xv[0], av[0]);
      }
      for (std::size_t i = 0; i < xv.size(); ++i) {
        av[i] += xv[i];
        xv[i] = 2 * xv[i] + 1;
      }
    });
    dev.clear_events();
  }
  std::vector<ArgValue> args() {
    return {ArgValue::buf(*x, ElemType::f32, kN), ArgValue::buf(*acc, ElemType::f32, kN),
            ArgValue(std::int32_t{kN})};
  }
};

}  // namespace tune::testing
