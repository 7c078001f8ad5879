// The matmul workloads' output bound for f16 and bf16 (kernels/src/workloads.cpp): the result
// rounded once in any direction passes (to nearest, toward zero, away from zero: Vulkan does
// not promise round-to-nearest, and NVIDIA's driver truncates the cooperative matrices'
// f32 -> bf16 conversion), three units in the last place off fails, naming the element.
// Runs on the simulated device: the test writes C itself, from the inputs the workload set up.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

namespace {

using namespace tune;

constexpr std::int64_t kM = 8, kN = 16, kK = 32;

double widen(ElemType t, std::uint16_t h) {
  return t == ElemType::bf16 ? kernels::bf16_to_float(h) : kernels::half_to_float(h);
}
std::uint16_t narrow_nearest(ElemType t, double v) {
  const float f = static_cast<float>(v);
  return t == ElemType::bf16 ? kernels::float_to_bf16(f) : kernels::float_to_half(f);
}

enum class Rounding { nearest, toward_zero, away_from_zero };

// `want` rounded to the 16-bit type in direction `r`. The encodings are sign and magnitude:
// one more in the bits is one unit more magnitude.
std::uint16_t rounded(ElemType t, double want, Rounding r) {
  std::uint16_t h = narrow_nearest(t, want);
  const double got = std::fabs(widen(t, h)), mag = std::fabs(want);
  if (r == Rounding::toward_zero && got > mag) --h;
  if (r == Rounding::away_from_zero && got < mag) ++h;
  return h;
}

std::vector<std::uint16_t> download16(Device& dev, const ArgValue& a) {
  std::vector<std::uint16_t> out(a.count);
  REQUIRE(dev.download(*a.buffer, out.data(), out.size() * 2).ok());
  return out;
}

// C = A B in double from the inputs the workload uploaded.
std::vector<double> reference(ElemType t, Device& dev, const ArgList& args) {
  const auto a = download16(dev, args[0]), b = download16(dev, args[1]);
  std::vector<double> c(static_cast<std::size_t>(kM * kN), 0.0);
  for (std::int64_t i = 0; i < kM; ++i)
    for (std::int64_t j = 0; j < kN; ++j)
      for (std::int64_t p = 0; p < kK; ++p)
        c[static_cast<std::size_t>(i * kN + j)] +=
            widen(t, a[static_cast<std::size_t>(i * kK + p)]) *
            widen(t, b[static_cast<std::size_t>(p * kN + j)]);
  return c;
}

}  // namespace

TEST_CASE("matmul outputs rounded once in any direction pass the bound; three units off fail") {
  for (ElemType t : {ElemType::f16, ElemType::bf16}) {
    CAPTURE(to_string(t));
    testing::SimDevice dev;
    auto w = kernels::make_matmul(kM, kN, kK, t);
    REQUIRE(w->setup(dev, 11).ok());
    const ArgList args = w->args();
    const std::vector<double> want = reference(t, dev, args);
    std::vector<std::uint16_t> c(want.size());
    for (Rounding r : {Rounding::nearest, Rounding::toward_zero, Rounding::away_from_zero}) {
      CAPTURE(static_cast<int>(r));
      int moved = 0;  // elements whose directed rounding differs from the nearest
      for (std::size_t i = 0; i < c.size(); ++i) {
        c[i] = rounded(t, want[i], r);
        moved += c[i] != narrow_nearest(t, want[i]);
      }
      if (r != Rounding::nearest) CHECK(moved > static_cast<int>(c.size()) / 4);
      REQUIRE(dev.upload(*args[2].buffer, c.data(), c.size() * 2).ok());
      const Status s = w->check(dev);
      CHECK_MESSAGE(s.ok(), s.to_string());
    }
    // Three units away from the nearest, in magnitude, at an element of magnitude above 1/2.
    std::size_t at = 0;
    while (at < want.size() && std::fabs(want[at]) <= 0.5) ++at;
    REQUIRE(at < want.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = narrow_nearest(t, want[i]);
    c[at] += 3;
    REQUIRE(dev.upload(*args[2].buffer, c.data(), c.size() * 2).ok());
    const Status s = w->check(dev);
    CHECK(s.code() == StatusCode::wrong_output);
    CHECK(s.to_string().find("C[" + std::to_string(at) + "]") != std::string::npos);
  }
}
