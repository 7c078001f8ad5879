#include "tune/comparison.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace tune {
namespace {

template <class T>
T load(const std::byte* p, std::uint64_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

double half_to_double(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m != 0 ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(1024 + m, e - 25);
}

double bf16_to_double(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// Element i of `p` as a double.
double value(ElemType t, const std::byte* p, std::uint64_t i) {
  switch (t) {
    case ElemType::f16:
      return half_to_double(load<std::uint16_t>(p, i));
    case ElemType::bf16:
      return bf16_to_double(load<std::uint16_t>(p, i));
    case ElemType::f32:
      return load<float>(p, i);
    case ElemType::f64:
      return load<double>(p, i);
    case ElemType::i8:
      return load<std::int8_t>(p, i);
    case ElemType::u8:
      return load<std::uint8_t>(p, i);
    case ElemType::i16:
      return load<std::int16_t>(p, i);
    case ElemType::u16:
      return load<std::uint16_t>(p, i);
    case ElemType::i32:
      return load<std::int32_t>(p, i);
    case ElemType::u32:
      return load<std::uint32_t>(p, i);
    case ElemType::i64:
      return static_cast<double>(load<std::int64_t>(p, i));
    case ElemType::u64:
      return static_cast<double>(load<std::uint64_t>(p, i));
  }
  return 0;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

Tolerance default_tolerance(ElemType t) noexcept {
  switch (t) {
    case ElemType::f32:
      return {1e-5, 1e-5};
    case ElemType::f16:
      return {1e-3, 1e-3};
    case ElemType::bf16:
      return {1e-2, 1e-2};
    case ElemType::f64:
      return {1e-12, 1e-12};
    default:
      return {};
  }
}

std::string Comparison::to_string() const {
  if (mismatches == 0) return "all " + std::to_string(count) + " elements within the tolerance";
  return std::to_string(mismatches) + " of " + std::to_string(count) +
         " elements outside the tolerance, first at index " + std::to_string(first_bad) +
         "; max abs error " + number(max_abs) + ", max rel error " + number(max_rel);
}

Result<Comparison> compare_host(std::span<const std::byte> actual,
                                std::span<const std::byte> expected, const CompareSpec& spec) {
  const std::size_t size = size_of(spec.type);
  if (actual.size() / size < spec.count || expected.size() / size < spec.count) {
    return Status(StatusCode::invalid_argument,
                  "comparing " + std::to_string(spec.count) + " " +
                      std::string(to_string(spec.type)) + " elements: the actual data holds " +
                      std::to_string(actual.size()) + " bytes, the expected " +
                      std::to_string(expected.size()));
  }
  Comparison out;
  out.count = spec.count;
  const bool floating = is_float(spec.type);
  for (std::uint64_t i = 0; i < spec.count; ++i) {
    const std::byte* a = actual.data() + i * size;
    const std::byte* e = expected.data() + i * size;
    const double av = value(spec.type, actual.data(), i);
    const double ev = value(spec.type, expected.data(), i);
    const bool same = floating ? av == ev : std::memcmp(a, e, size) == 0;
    if (same) continue;
    double abs_err = std::fabs(av - ev);
    if (std::isnan(abs_err)) abs_err = INFINITY;
    const double mag = std::fabs(ev);
    const double rel_err = mag > 0 && std::isfinite(mag) ? abs_err / mag : INFINITY;
    out.max_abs = std::max(out.max_abs, abs_err);
    out.max_rel = std::max(out.max_rel, rel_err);
    if (std::isfinite(abs_err) && abs_err <= spec.tolerance.abs + spec.tolerance.rel * mag)
      continue;
    if (out.mismatches == 0) out.first_bad = i;
    ++out.mismatches;
  }
  return out;
}

}  // namespace tune
