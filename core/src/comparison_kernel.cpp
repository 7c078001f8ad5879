#include "tune/backend/comparison_kernel.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

namespace tune {
namespace {

// The kernel's ELEM_KIND for `t`, or -1 when it has none.
int kind_of(ElemType t) noexcept {
  switch (t) {
    case ElemType::f32:
      return 0;
    case ElemType::f16:
      return 1;
    case ElemType::bf16:
      return 2;
    case ElemType::i32:
      return 3;
    case ElemType::u32:
      return 4;
    default:
      return -1;
  }
}

constexpr std::uint32_t kNoIndex = 0xffffffffu;
constexpr std::uint32_t kMaxGroups = 4096;  // each block strides over the rest

}  // namespace

Result<Comparison> compare_by_download(Device& dev, const DeviceBuffer& actual,
                                       const DeviceBuffer& expected, const CompareSpec& spec) {
  const std::uint64_t bytes = spec.count * size_of(spec.type);
  if (actual.size_bytes() < bytes || expected.size_bytes() < bytes) {
    return Status(StatusCode::invalid_argument,
                  "comparing " + std::to_string(spec.count) + " " +
                      std::string(to_string(spec.type)) + " elements (" + std::to_string(bytes) +
                      " bytes): the actual buffer holds " + std::to_string(actual.size_bytes()) +
                      " bytes, the expected " + std::to_string(expected.size_bytes()));
  }
  std::vector<std::byte> a(bytes), e(bytes);
  if (bytes > 0) {
    TUNE_RETURN_IF_ERROR(dev.download(actual, a.data(), bytes));
    TUNE_RETURN_IF_ERROR(dev.download(expected, e.data(), bytes));
  }
  return compare_host(a, e, spec);
}

void ComparisonKernel::release() {
  std::lock_guard lock(mu_);
  variants_.clear();
}

Result<const CompiledKernel*> ComparisonKernel::variant(Device& dev, int kind) {
  std::lock_guard lock(mu_);
  auto& slot = variants_[kind];
  if (!slot) {
    Config c;
    c.set("ELEM_KIND", kind);
    c.launch().block = Dim3{kComparisonBlock, 1, 1};
    auto k = dev.compile(source_, c);
    if (!k.ok()) return k.status().with_context("compiling libtune's comparison kernel");
    slot = std::move(*k);
  }
  return slot.get();
}

Result<Comparison> ComparisonKernel::compare(Device& dev, const DeviceBuffer& actual,
                                             const DeviceBuffer& expected,
                                             const CompareSpec& spec) {
  const int kind = kind_of(spec.type);
  const std::uint64_t bytes = spec.count * size_of(spec.type);
  const bool whole_words = bytes % 4 == 0 || (actual.size_bytes() >= (bytes + 3) / 4 * 4 &&
                                              expected.size_bytes() >= (bytes + 3) / 4 * 4);
  if (kind < 0 || spec.count >= kNoIndex || !whole_words || spec.count == 0 ||
      actual.size_bytes() < bytes || expected.size_bytes() < bytes)
    return compare_by_download(dev, actual, expected, spec);
  auto kernel = variant(dev, kind);
  if (!kernel.ok()) return kernel.status();
  auto result = dev.alloc(4 * sizeof(std::uint32_t));
  if (!result.ok()) return result.status().with_context("the comparison's result buffer");
  const std::array<std::uint32_t, 4> init = {0, 0, 0, kNoIndex};
  TUNE_RETURN_IF_ERROR(dev.upload(**result, init.data(), sizeof init));
  const auto n = static_cast<std::uint32_t>(spec.count);
  const auto words = static_cast<std::uint32_t>((bytes + 3) / 4);
  const std::array<ArgValue, 6> args = {
      ArgValue::buf(const_cast<DeviceBuffer&>(actual), ElemType::u32, words),
      ArgValue::buf(const_cast<DeviceBuffer&>(expected), ElemType::u32, words),
      ArgValue::buf(**result, ElemType::u32, 4),
      ArgValue(n),
      ArgValue(static_cast<float>(spec.tolerance.abs)),
      ArgValue(static_cast<float>(spec.tolerance.rel))};
  LaunchDims dims;
  dims.block = Dim3{kComparisonBlock, 1, 1};
  dims.grid = Dim3{std::min(kMaxGroups, (n + kComparisonBlock - 1) / kComparisonBlock), 1, 1};
  TUNE_RETURN_IF_ERROR(
      dev.launch(**kernel, dims, args).with_context("launching libtune's comparison kernel"));
  std::array<std::uint32_t, 4> out{};
  TUNE_RETURN_IF_ERROR(dev.download(**result, out.data(), sizeof out));
  Comparison c;
  c.count = spec.count;
  c.max_abs = std::bit_cast<float>(out[0]);
  c.max_rel = std::bit_cast<float>(out[1]);
  c.mismatches = out[2];
  c.first_bad = out[3] == kNoIndex ? 0 : out[3];
  return c;
}

}  // namespace tune
