#include "dtypes.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace tune::python {
namespace {

struct Name {
  std::string_view name;
  ElemType type;
};
constexpr std::array kNames = {
    Name{"f16", ElemType::f16},     Name{"float16", ElemType::f16},   Name{"half", ElemType::f16},
    Name{"bf16", ElemType::bf16},   Name{"bfloat16", ElemType::bf16}, Name{"f32", ElemType::f32},
    Name{"float32", ElemType::f32}, Name{"float", ElemType::f32},     Name{"f64", ElemType::f64},
    Name{"float64", ElemType::f64}, Name{"double", ElemType::f64},    Name{"i8", ElemType::i8},
    Name{"int8", ElemType::i8},     Name{"u8", ElemType::u8},         Name{"uint8", ElemType::u8},
    Name{"i16", ElemType::i16},     Name{"int16", ElemType::i16},     Name{"u16", ElemType::u16},
    Name{"uint16", ElemType::u16},  Name{"i32", ElemType::i32},       Name{"int32", ElemType::i32},
    Name{"int", ElemType::i32},     Name{"u32", ElemType::u32},       Name{"uint32", ElemType::u32},
    Name{"i64", ElemType::i64},     Name{"int64", ElemType::i64},     Name{"u64", ElemType::u64},
    Name{"uint64", ElemType::u64},
};

constexpr std::string_view kSupported =
    "supported: float16, bfloat16, float32, float64, int8, uint8, int16, uint16, int32, uint32, "
    "int64, uint64";

[[noreturn]] void unsupported(const std::string& what, const std::string& type) {
  throw py::type_error(what + ": unsupported dtype '" + type + "' (" + std::string(kSupported) +
                       ")");
}

}  // namespace

ElemType parse_elem_type(py::handle h, const std::string& what) {
  if (py::isinstance<py::str>(h)) {
    const auto s = h.cast<std::string>();
    for (const auto& n : kNames)
      if (n.name == s) return n.type;
    unsupported(what, s);
  }
  // numpy.float32 (a type), np.dtype('float32'), or an array-like's dtype.
  py::object dt = py::module_::import("numpy").attr("dtype")(h);
  const auto name = dt.attr("name").cast<std::string>();
  for (const auto& n : kNames)
    if (n.name == name) return n.type;
  unsupported(what, name);
}

ElemType elem_type_of_typestr(const std::string& typestr, const std::string& what) {
  // "<f4": byte order, kind, size. '|' (not applicable) for single bytes.
  if (typestr.size() < 3 || typestr[0] == '>') unsupported(what, typestr);
  const char kind = typestr[1];
  const std::string size = typestr.substr(2);
  if (kind == 'f' && size == "2") return ElemType::f16;
  if (kind == 'f' && size == "4") return ElemType::f32;
  if (kind == 'f' && size == "8") return ElemType::f64;
  if (kind == 'i' && size == "1") return ElemType::i8;
  if (kind == 'i' && size == "2") return ElemType::i16;
  if (kind == 'i' && size == "4") return ElemType::i32;
  if (kind == 'i' && size == "8") return ElemType::i64;
  if (kind == 'u' && size == "1") return ElemType::u8;
  if (kind == 'u' && size == "2") return ElemType::u16;
  if (kind == 'u' && size == "4") return ElemType::u32;
  if (kind == 'u' && size == "8") return ElemType::u64;
  unsupported(what, typestr);
}

ElemType elem_type_of_dlpack(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes,
                             const std::string& what) {
  // DLDataTypeCode: 0 int, 1 uint, 2 float, 4 bfloat.
  const std::string text = "dlpack(code=" + std::to_string(code) +
                           ", bits=" + std::to_string(bits) + ", lanes=" + std::to_string(lanes) +
                           ")";
  if (lanes != 1) unsupported(what, text);
  std::pair<std::uint8_t, std::uint8_t> k{code, bits};
  using P = std::pair<std::uint8_t, std::uint8_t>;
  if (k == P{2, 16}) return ElemType::f16;
  if (k == P{2, 32}) return ElemType::f32;
  if (k == P{2, 64}) return ElemType::f64;
  if (k == P{4, 16}) return ElemType::bf16;
  if (k == P{0, 8}) return ElemType::i8;
  if (k == P{0, 16}) return ElemType::i16;
  if (k == P{0, 32}) return ElemType::i32;
  if (k == P{0, 64}) return ElemType::i64;
  if (k == P{1, 8}) return ElemType::u8;
  if (k == P{1, 16}) return ElemType::u16;
  if (k == P{1, 32}) return ElemType::u32;
  if (k == P{1, 64}) return ElemType::u64;
  unsupported(what, text);
}

std::string numpy_name(ElemType t) {
  switch (t) {
    case ElemType::f16:
      return "float16";
    case ElemType::bf16:
      return "bfloat16";
    case ElemType::f32:
      return "float32";
    case ElemType::f64:
      return "float64";
    case ElemType::i8:
      return "int8";
    case ElemType::u8:
      return "uint8";
    case ElemType::i16:
      return "int16";
    case ElemType::u16:
      return "uint16";
    case ElemType::i32:
      return "int32";
    case ElemType::u32:
      return "uint32";
    case ElemType::i64:
      return "int64";
    case ElemType::u64:
      return "uint64";
  }
  return "unknown";
}

py::dtype numpy_dtype(ElemType t) {
  return py::dtype(t == ElemType::bf16 ? std::string("float32") : numpy_name(t));
}

}  // namespace tune::python
