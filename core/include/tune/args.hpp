// Kernel arguments: a kernel declares a signature (names and types, in order); each call
// passes positional ArgValues that match it. ArgValue is a small trivially-copyable value so
// that building an argument list on every call costs no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tune/status.hpp"

namespace tune {

enum class ElemType : std::uint8_t { f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64 };
// Bytes per element. Inline: backends call it for every buffer argument of every launch.
constexpr std::size_t size_of(ElemType t) noexcept {
  switch (t) {
    case ElemType::i8:
    case ElemType::u8:
      return 1;
    case ElemType::f16:
    case ElemType::bf16:
    case ElemType::i16:
    case ElemType::u16:
      return 2;
    case ElemType::f32:
    case ElemType::i32:
    case ElemType::u32:
      return 4;
    case ElemType::f64:
    case ElemType::i64:
    case ElemType::u64:
      return 8;
  }
  return 1;  // not an ElemType (a corrupted value): the smallest, never a zero divisor
}
std::string_view to_string(ElemType t) noexcept;  // "f32"
bool is_float(ElemType t) noexcept;

class DeviceBuffer;  // device.hpp

enum class ArgKind : std::uint8_t { buffer, scalar };

// One argument of a call. Buffers carry their element type and count; scalars their type
// and raw bits (little-endian, zero-extended to 64 bits).
struct ArgValue {
  ArgKind kind = ArgKind::scalar;
  ElemType type = ElemType::i32;
  DeviceBuffer* buffer = nullptr;  // borrowed, buffers only
  std::uint64_t count = 0;         // elements, buffers only
  std::uint64_t bits = 0;          // scalars only

  ArgValue() = default;
  ArgValue(std::int32_t v) : type(ElemType::i32), bits(static_cast<std::uint32_t>(v)) {}  // NOLINT
  ArgValue(std::uint32_t v) : type(ElemType::u32), bits(v) {}                             // NOLINT
  ArgValue(std::int64_t v) : type(ElemType::i64), bits(static_cast<std::uint64_t>(v)) {}  // NOLINT
  ArgValue(std::uint64_t v) : type(ElemType::u64), bits(v) {}                             // NOLINT
  ArgValue(float v) : type(ElemType::f32) { std::memcpy(&bits, &v, sizeof v); }           // NOLINT
  ArgValue(double v) : type(ElemType::f64) { std::memcpy(&bits, &v, sizeof v); }          // NOLINT

  static ArgValue buf(DeviceBuffer& b, ElemType t, std::uint64_t n) {
    ArgValue a;
    a.kind = ArgKind::buffer;
    a.type = t;
    a.buffer = &b;
    a.count = n;
    return a;
  }

  // A scalar as a signed integer (sign-extending i32/i16/i8), or a float truncated. The
  // common integer types are inline: keys read them on every call.
  std::int64_t as_int() const noexcept {
    if (type == ElemType::i32) return static_cast<std::int32_t>(bits);
    if (type == ElemType::i64 || type == ElemType::u64 || type == ElemType::u32)
      return static_cast<std::int64_t>(bits);
    return as_int_other();
  }
  double as_double() const noexcept;
  // Size in bytes of a scalar's value as the kernel sees it (4 for i32/f32, 8 for i64/f64).
  std::size_t scalar_size() const noexcept { return size_of(type); }

 private:
  std::int64_t as_int_other() const noexcept;
};

using ArgList = std::span<const ArgValue>;

struct ArgDecl {
  std::string name;
  ArgKind kind = ArgKind::buffer;
  ElemType type = ElemType::f32;
};

// The declared arguments of a kernel, in call order.
class KernelSignature {
 public:
  KernelSignature() = default;
  KernelSignature(std::initializer_list<ArgDecl> decls) : decls_(decls) {}

  KernelSignature& buffer(std::string name, ElemType t) {
    decls_.push_back({std::move(name), ArgKind::buffer, t});
    return *this;
  }
  KernelSignature& scalar(std::string name, ElemType t) {
    decls_.push_back({std::move(name), ArgKind::scalar, t});
    return *this;
  }

  const std::vector<ArgDecl>& decls() const noexcept { return decls_; }
  std::size_t size() const noexcept { return decls_.size(); }
  // Position of `name`, or -1.
  int index_of(std::string_view name) const noexcept;

  // Checks count, kinds and types of `args`; the message names the first culprit.
  Status check(ArgList args) const;

 private:
  std::vector<ArgDecl> decls_;
};

}  // namespace tune
