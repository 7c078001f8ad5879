#include "tune/args.hpp"

#include <array>

namespace tune {
namespace {
struct ElemInfo {
  std::string_view name;
  bool is_float;
};
constexpr std::array<ElemInfo, 12> kElems = {{{"f16", true},
                                              {"bf16", true},
                                              {"f32", true},
                                              {"f64", true},
                                              {"i8", false},
                                              {"u8", false},
                                              {"i16", false},
                                              {"u16", false},
                                              {"i32", false},
                                              {"u32", false},
                                              {"i64", false},
                                              {"u64", false}}};
const ElemInfo& elem(ElemType t) { return kElems[static_cast<std::size_t>(t) % kElems.size()]; }
}  // namespace

std::string_view to_string(ElemType t) noexcept { return elem(t).name; }
bool is_float(ElemType t) noexcept { return elem(t).is_float; }

std::int64_t ArgValue::as_int_other() const noexcept {
  switch (type) {
    case ElemType::i8:
      return static_cast<std::int8_t>(bits);
    case ElemType::i16:
      return static_cast<std::int16_t>(bits);
    case ElemType::i32:
      return static_cast<std::int32_t>(bits);
    case ElemType::f32:
    case ElemType::f64:
      return static_cast<std::int64_t>(as_double());
    default:
      return static_cast<std::int64_t>(bits);
  }
}

double ArgValue::as_double() const noexcept {
  if (type == ElemType::f32) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  if (type == ElemType::f64) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  return static_cast<double>(as_int());
}

int KernelSignature::index_of(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < decls_.size(); ++i)
    if (decls_[i].name == name) return static_cast<int>(i);
  return -1;
}

Status KernelSignature::check(ArgList args) const {
  if (args.size() != decls_.size()) {
    return Status(StatusCode::invalid_argument, "expected " + std::to_string(decls_.size()) +
                                                    " arguments, got " +
                                                    std::to_string(args.size()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& d = decls_[i];
    const auto& a = args[i];
    if (a.kind == d.kind && a.type == d.type && (a.kind != ArgKind::buffer || a.buffer != nullptr))
      continue;  // the hot path: no message is built for valid arguments
    auto where = "argument " + std::to_string(i) + " '" + d.name + "'";
    if (a.kind != d.kind) {
      return Status(StatusCode::invalid_argument,
                    where + " must be a " + (d.kind == ArgKind::buffer ? "buffer" : "scalar"));
    }
    if (a.type != d.type) {
      return Status(StatusCode::invalid_argument, where + " must have type " +
                                                      std::string(to_string(d.type)) + ", got " +
                                                      std::string(to_string(a.type)));
    }
    return Status(StatusCode::invalid_argument, where + " is a null buffer");
  }
  return {};
}

}  // namespace tune
