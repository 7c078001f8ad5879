// Device::compare checked against compare_host (the CPU computation of the same metrics) on
// random inputs with planted mismatches, for a backend's test suite: f32, f16, bf16, i32 and
// u32 (the types a comparison kernel covers), odd counts and more elements than one pass of
// the kernel's grid covers, plus a type that falls back to the host (f64).
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tune/device.hpp"

namespace tune::testing {

namespace detail_compare {

inline std::uint16_t to_half(float f) {  // round toward zero; normal range only
  const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (b >> 16) & 0x8000u;
  const int e = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  if (e <= 0) return static_cast<std::uint16_t>(sign);
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(e) << 10) |
                                    ((b >> 13) & 0x3ffu));
}

// `count` random elements of `type` as bytes, and a copy with mismatches planted at `bad`
// (far outside any tolerance) and small errors within the default tolerance elsewhere.
inline void make_pair(ElemType type, std::uint64_t count, const std::vector<std::uint64_t>& bad,
                      std::uint32_t seed, std::vector<std::byte>* expected,
                      std::vector<std::byte>* actual) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  const std::size_t size = size_of(type);
  expected->assign(count * size, std::byte{0});
  for (std::uint64_t i = 0; i < count; ++i) {
    const float v = u(rng);
    std::byte* p = expected->data() + i * size;
    if (type == ElemType::f32) {
      std::memcpy(p, &v, 4);
    } else if (type == ElemType::f64) {
      const double d = v;
      std::memcpy(p, &d, 8);
    } else if (type == ElemType::f16) {
      const std::uint16_t h = to_half(v);
      std::memcpy(p, &h, 2);
    } else if (type == ElemType::bf16) {
      const auto h = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16);
      std::memcpy(p, &h, 2);
    } else {
      const auto k = static_cast<std::int32_t>(v * 1000);
      std::memcpy(p, &k, 4);
    }
  }
  *actual = *expected;
  for (std::uint64_t i : bad) {
    std::byte* p = actual->data() + i * size;
    if (type == ElemType::f32) {
      float v;
      std::memcpy(&v, p, 4);
      v = v * 3 + 1;
      std::memcpy(p, &v, 4);
    } else if (type == ElemType::f64) {
      double v;
      std::memcpy(&v, p, 8);
      v = v * 3 + 1;
      std::memcpy(p, &v, 8);
    } else if (size == 2) {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      h ^= 0x4000;  // flips the exponent's top bit: far off (or inf/NaN)
      std::memcpy(p, &h, 2);
    } else {
      std::uint32_t k;
      std::memcpy(&k, p, 4);
      k += 7;
      std::memcpy(p, &k, 4);
    }
  }
  if (type == ElemType::f32 && count > 10) {  // a tiny error within the tolerance
    float v;
    std::memcpy(&v, actual->data() + 9 * size, 4);
    v = std::nextafter(v, 100.0f);
    std::memcpy(actual->data() + 9 * size, &v, 4);
  }
}

}  // namespace detail_compare

// Runs every case on `dev`; each is reported with its type and count.
inline void check_device_compare(Device& dev) {
  struct Case {
    ElemType type;
    std::uint64_t count;
    std::vector<std::uint64_t> bad;
  };
  const std::vector<Case> cases = {
      {ElemType::f32, 1000, {}},
      {ElemType::f32, 1000, {0, 999}},
      {ElemType::f32, 3'000'001, {5, 777'777, 1'500'000, 3'000'000}},  // > one grid pass
      {ElemType::f16, 4096, {1, 2, 4095}},
      {ElemType::f16, 1001, {1000}},  // odd count: a half-word at the end
      {ElemType::bf16, 2048, {3, 1024}},
      {ElemType::i32, 5000, {4999}},
      {ElemType::u32, 5000, {0, 1, 2}},
      {ElemType::f64, 600, {599}},  // no kernel variant: the host fallback
  };
  std::uint32_t seed = 1;
  for (const Case& c : cases) {
    CAPTURE(to_string(c.type));
    CAPTURE(c.count);
    std::vector<std::byte> expected, actual;
    detail_compare::make_pair(c.type, c.count, c.bad, seed++, &expected, &actual);
    // Buffers rounded up to whole words, as allocations of 16-bit data usually are.
    const std::uint64_t bytes = (expected.size() + 3) / 4 * 4;
    auto a = dev.alloc(bytes);
    auto e = dev.alloc(bytes);
    REQUIRE(a.ok());
    REQUIRE(e.ok());
    REQUIRE(dev.upload(**a, actual.data(), actual.size()).ok());
    REQUIRE(dev.upload(**e, expected.data(), expected.size()).ok());
    const CompareSpec spec{c.type, c.count, default_tolerance(c.type)};
    auto want = compare_host(actual, expected, spec);
    REQUIRE(want.ok());
    auto got = dev.compare(**a, **e, spec);
    REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    CHECK(got->count == c.count);
    CHECK(got->mismatches == c.bad.size());
    CHECK(got->mismatches == want->mismatches);
    if (!c.bad.empty()) {
      CHECK(got->first_bad == c.bad.front());
    }
    // The kernel computes in f32: its errors agree with the host's to f32 precision.
    const auto near = [](double x, double y) {
      if (std::isinf(x) || std::isinf(y)) return x == y;
      return std::fabs(x - y) <= 1e-6 * std::max(1.0, std::fabs(y));
    };
    CHECK_MESSAGE(near(got->max_abs, want->max_abs), got->max_abs << " vs " << want->max_abs);
    CHECK_MESSAGE(near(got->max_rel, want->max_rel), got->max_rel << " vs " << want->max_rel);
  }
}

}  // namespace tune::testing
