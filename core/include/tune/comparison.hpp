// Comparing a kernel's output with the expected one, element by element: the tolerance rule,
// what a comparison reports, and the host computation of it. Device::compare runs the same
// comparison where the data lives (a comparison kernel on the device, so that only the few
// bytes of a Comparison cross the bus); compare_host is its definition and its fallback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tune/args.hpp"
#include "tune/status.hpp"

namespace tune {

// An element matches when it equals the expected one (the same bits for integers, == for
// floats), or when |actual - expected| <= abs + rel * |expected|. NaN matches nothing.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};
// abs = rel = 1e-5 for f32, 1e-3 for f16, 1e-2 for bf16, 1e-12 for f64; exact for integers.
Tolerance default_tolerance(ElemType t) noexcept;

// What to compare: `count` elements of `type` from the start of both buffers.
struct CompareSpec {
  ElemType type = ElemType::f32;
  std::uint64_t count = 0;
  Tolerance tolerance;
};

// The outcome of one comparison. Errors are over the elements that differ: abs = |a - e|,
// rel = abs / |e| (+inf when e == 0); a NaN on either side counts as +inf.
struct Comparison {
  std::uint64_t count = 0;       // elements compared
  std::uint64_t mismatches = 0;  // elements outside the tolerance
  std::uint64_t first_bad = 0;   // lowest index of a mismatch; meaningful when mismatches > 0
  double max_abs = 0;            // largest absolute error
  double max_rel = 0;            // largest relative error
  bool ok() const noexcept { return mismatches == 0; }
  // "3 of 1024 elements outside the tolerance, first at index 17; max abs error 0.5, max rel
  // error 0.25"
  std::string to_string() const;
};

// The comparison computed on the host over two byte spans of spec.count elements each.
// invalid_argument when a span is shorter than that.
Result<Comparison> compare_host(std::span<const std::byte> actual,
                                std::span<const std::byte> expected, const CompareSpec& spec);

}  // namespace tune
