// T1's Arguments as a signature and filled buffers. See space_args.hpp.
#include "space_args.hpp"

#include <cstring>
#include <random>

#include "tune/kernels/bundled.hpp"  // float_to_half

namespace tune::cli {
namespace {

using nlohmann::json;

Status bad(std::size_t i, const std::string& field, const std::string& why) {
  return Status(StatusCode::invalid_argument,
                "KernelSpecification.Arguments[" + std::to_string(i) + "]" + field + ": " + why);
}

Result<ElemType> elem_type(const json& arg, std::size_t i) {
  const std::string t = arg.value("Type", "");
  static const std::pair<const char*, ElemType> kTypes[] = {
      {"int8", ElemType::i8},    {"uint8", ElemType::u8},   {"int16", ElemType::i16},
      {"uint16", ElemType::u16}, {"int32", ElemType::i32},  {"uint32", ElemType::u32},
      {"int64", ElemType::i64},  {"uint64", ElemType::u64}, {"half", ElemType::f16},
      {"float", ElemType::f32},  {"double", ElemType::f64}};
  for (const auto& [name, type] : kTypes)
    if (t == name) return type;
  return bad(i, ".Type", "'" + t + "' has no libtune element type (scalar types only)");
}

// One element of type `t` holding `v`, little-endian, in the low size_of(t) bytes.
std::uint64_t element_bits(ElemType t, double v) {
  std::uint64_t bits = 0;
  if (t == ElemType::f32) {
    const float f = static_cast<float>(v);
    std::memcpy(&bits, &f, sizeof f);
  } else if (t == ElemType::f64) {
    std::memcpy(&bits, &v, sizeof v);
  } else if (t == ElemType::f16) {
    bits = kernels::float_to_half(static_cast<float>(v));
  } else {
    bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  }
  return bits;
}

Status check_fill(const json& arg, std::size_t i) {
  const std::string fill = arg.value("FillType", "Constant");
  if (fill != "Constant" && fill != "Random")
    return bad(i, ".FillType", "'" + fill + "' is not supported (Constant and Random are)");
  if (fill == "Constant" && !arg.contains("FillValue"))
    return bad(i, ".FillValue", "missing (a Constant fill needs it)");
  if (arg.contains("FillValue") && !arg.at("FillValue").is_number())
    return bad(i, ".FillValue", "not a number");
  return Status();
}

}  // namespace

std::string argument_name(const json& arg, std::size_t i) {
  const json name = arg.value("Name", json());
  return name.is_string() ? name.get<std::string>() : "arg" + std::to_string(i);
}

Result<KernelSignature> space_signature(const SpaceFile& space) {
  KernelSignature sig;
  for (std::size_t i = 0; i < space.arguments.size(); ++i) {
    const json& arg = space.arguments[i];
    if (!arg.is_object()) return bad(i, "", "not an object");
    TUNE_ASSIGN_OR_RETURN(const ElemType t, elem_type(arg, i));
    TUNE_RETURN_IF_ERROR(check_fill(arg, i));
    const std::string memory = arg.value("MemoryType", "");
    if (memory == "Vector") {
      sig.buffer(argument_name(arg, i), t);
    } else if (memory == "Scalar") {
      sig.scalar(argument_name(arg, i), t);
    } else {
      return bad(i, ".MemoryType", "'" + memory + "' is not supported (Vector and Scalar are)");
    }
  }
  return sig;
}

Result<std::vector<std::uint64_t>> argument_counts(const SpaceFile& space) {
  std::vector<std::uint64_t> counts;
  const PyNames names = size_names(space);
  for (std::size_t i = 0; i < space.arguments.size(); ++i) {
    const json& arg = space.arguments[i];
    if (arg.value("MemoryType", "") != "Vector") {
      counts.push_back(0);
      continue;
    }
    const json size = arg.value("Size", json());
    std::int64_t n = 0;
    if (size.is_number_integer()) {
      n = size.get<std::int64_t>();
    } else if (size.is_string()) {
      auto r = eval_python(size.get<std::string>(), names);
      if (!r.ok()) return bad(i, ".Size", r.status().message());
      if (!std::holds_alternative<std::int64_t>(r->v))
        return bad(i, ".Size", py_repr(*r) + " is not an integer");
      n = std::get<std::int64_t>(r->v);
    } else {
      return bad(i, ".Size", "missing (a Vector needs it)");
    }
    if (n <= 0 || n > (std::int64_t{1} << 34))
      return bad(i, ".Size", std::to_string(n) + " elements is out of range");
    counts.push_back(static_cast<std::uint64_t>(n));
  }
  return counts;
}

Result<SpaceArgs> make_space_args(const SpaceFile& space, Device& dev) {
  TUNE_ASSIGN_OR_RETURN(const KernelSignature sig, space_signature(space));
  TUNE_ASSIGN_OR_RETURN(const std::vector<std::uint64_t> counts, argument_counts(space));
  SpaceArgs out;
  out.buffers.reserve(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const json& arg = space.arguments[i];
    const ElemType t = sig.decls()[i].type;
    const double value = arg.value("FillValue", 0.0);
    if (sig.decls()[i].kind == ArgKind::scalar) {
      ArgValue a;
      a.type = t;
      a.bits = element_bits(t, value);
      out.values.push_back(a);
      continue;
    }
    const std::size_t width = size_of(t);
    std::vector<unsigned char> host(counts[i] * width);
    std::mt19937_64 rng(arg.value("RandomSeed", std::uint64_t{42}));
    const bool random = arg.value("FillType", "Constant") == "Random";
    std::uniform_real_distribution<double> real(0.0, 1.0);
    std::uniform_int_distribution<int> integer(0, 99);
    const bool floating = is_float(t);
    for (std::uint64_t e = 0; e < counts[i]; ++e) {
      const double v = !random ? value : floating ? real(rng) : integer(rng);
      const std::uint64_t bits = element_bits(t, v);
      std::memcpy(host.data() + e * width, &bits, width);
    }
    auto buf = dev.alloc(host.size());
    if (!buf.ok())
      return bad(
          i, "",
          "cannot allocate " + std::to_string(host.size()) + " bytes: " + buf.status().to_string());
    TUNE_RETURN_IF_ERROR(dev.upload(**buf, host.data(), host.size(), 0));
    out.values.push_back(ArgValue::buf(**buf, t, counts[i]));
    out.buffers.push_back(std::move(*buf));
  }
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  return out;
}

}  // namespace tune::cli
