#include "argument_binding.hpp"

#include <algorithm>
#include <cstring>

namespace tune::vk {
namespace {

// A scalar as a push constant: its size, bits and kind.
struct Packed {
  std::uint32_t size = 4;
  std::uint64_t bits = 0;
  bool is_float = false;
};

// A scalar that is not a 16-bit float (checked by the caller).
Packed pack(const ArgValue& a) {
  Packed p;
  p.bits = a.bits;
  switch (a.type) {
    case ElemType::f32:
      p.is_float = true;
      break;
    case ElemType::f64:
      p.is_float = true;
      p.size = 8;
      break;
    case ElemType::i64:
    case ElemType::u64:
      p.size = 8;
      break;
    case ElemType::i8:
    case ElemType::i16:
      p.bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(a.as_int()));
      break;
    default:
      break;
  }
  return p;
}

// How an argument is named in messages: "argument 2 (f32)". Built on error paths only.
std::string where(const ArgValue& a, std::size_t i) {
  return "argument " + std::to_string(i) + " (" + std::string(to_string(a.type)) + ")";
}

// The state of one binding: arguments are added in call order, into `out`.
class Binder {
 public:
  Binder(const SpirvInfo& si, const BufferLookup& lookup, BoundArgs* out)
      : si_(si), lookup_(lookup), out_(*out) {
    out_.buffers.clear();
    out_.push.assign(si.push_bytes, 0);
  }

  Status add(const ArgValue& a, std::size_t i) {
    return a.kind == ArgKind::buffer ? add_buffer(a, i) : add_scalar(a, i);
  }

  Status finish() {
    if (!si_.bindings.empty() && si_.bindings.back() >= nbuffer_) {
      return Status(StatusCode::invalid_argument,
                    "the shader binds storage buffer " + std::to_string(si_.bindings.back()) +
                        " (buffer argument " + std::to_string(si_.bindings.back()) +
                        ") but the call passes " + std::to_string(nbuffer_) + " buffer arguments");
    }
    if (!si_.push.empty() && nscalar_ != si_.push.size()) {
      return Status(StatusCode::invalid_argument,
                    "the shader's push-constant block has " + std::to_string(si_.push.size()) +
                        " members but the call passes " + std::to_string(nscalar_) +
                        " scalar arguments");
    }
    return Status::ok_status();
  }

 private:
  Status add_buffer(const ArgValue& a, std::size_t i) {
    if (a.buffer == nullptr)
      return Status(StatusCode::invalid_argument, where(a, i) + ": null buffer");
    const std::optional<VkDescriptorBufferInfo> b = lookup_(*a.buffer);
    if (!b) {
      return Status(StatusCode::invalid_argument,
                    where(a, i) + ": the buffer was not allocated by this Vulkan device");
    }
    const std::uint64_t need = a.count * size_of(a.type);
    if (need > a.buffer->size_bytes()) {
      return Status(StatusCode::invalid_argument, where(a, i) + ": " + std::to_string(a.count) +
                                                      " elements need " + std::to_string(need) +
                                                      " bytes but the buffer holds " +
                                                      std::to_string(a.buffer->size_bytes()));
    }
    if (std::binary_search(si_.bindings.begin(), si_.bindings.end(), nbuffer_))
      out_.buffers.emplace_back(nbuffer_, *b);
    ++nbuffer_;
    return Status::ok_status();
  }

  Status add_scalar(const ArgValue& a, std::size_t i) {
    if (a.type == ElemType::f16 || a.type == ElemType::bf16) {
      return Status(StatusCode::invalid_argument,
                    where(a, i) + ": 16-bit float scalars cannot be push constants; pass f32");
    }
    const Packed p = pack(a);
    if (si_.push.empty()) return Status::ok_status();  // no scalar is used by this variant
    offset_ = (offset_ + p.size - 1) / p.size * p.size;
    if (nscalar_ >= si_.push.size()) {
      return Status(StatusCode::invalid_argument,
                    where(a, i) + ": the shader's push-constant block has " +
                        std::to_string(si_.push.size()) + " members, fewer than the scalar " +
                        "arguments given");
    }
    const PushMember& m = si_.push[nscalar_];
    if (m.bytes != p.size || m.is_float != p.is_float || m.offset != offset_) {
      return Status(StatusCode::invalid_argument,
                    where(a, i) + " is scalar #" + std::to_string(nscalar_) + ", packed as " +
                        std::to_string(p.size) + "-byte " + (p.is_float ? "float" : "integer") +
                        " at offset " + std::to_string(offset_) + ", but the shader declares a " +
                        std::to_string(m.bytes) + "-byte " + (m.is_float ? "float" : "integer") +
                        " at offset " + std::to_string(m.offset));
    }
    std::memcpy(out_.push.data() + offset_, &p.bits, p.size);  // little-endian hosts
    offset_ += p.size;
    ++nscalar_;
    return Status::ok_status();
  }

  const SpirvInfo& si_;
  const BufferLookup& lookup_;
  BoundArgs& out_;
  std::size_t nscalar_ = 0;
  std::uint32_t nbuffer_ = 0;
  std::uint32_t offset_ = 0;
};

}  // namespace

Status bind_arguments(const SpirvInfo& si, ArgList args, const BufferLookup& lookup,
                      BoundArgs* out) {
  Binder binder(si, lookup, out);
  for (std::size_t i = 0; i < args.size(); ++i) TUNE_RETURN_IF_ERROR(binder.add(args[i], i));
  return binder.finish();
}

std::string interface_mismatch(const SpirvInfo& si, const KernelSignature& sig) {
  // Placeholder arguments of the declared kinds and types: what a launch would bind.
  class Placeholder final : public DeviceBuffer {
   public:
    std::uint64_t size_bytes() const noexcept override { return 0; }
  } placeholder;
  std::vector<ArgValue> args;
  std::uint32_t buffers = 0;
  std::size_t scalars = 0;
  for (const ArgDecl& d : sig.decls()) {
    if (d.kind == ArgKind::buffer) {
      args.push_back(ArgValue::buf(placeholder, d.type, 0));
      ++buffers;
    } else {
      ArgValue v;
      v.type = d.type;
      args.push_back(v);
      ++scalars;
    }
  }
  BoundArgs bound;
  const Status st = bind_arguments(
      si, args,
      [](const DeviceBuffer&) -> std::optional<VkDescriptorBufferInfo> {
        return VkDescriptorBufferInfo{};
      },
      &bound);
  if (!st.ok()) return st.message();
  if (si.bindings.size() != buffers) {
    return "the module binds " + std::to_string(si.bindings.size()) +
           " storage buffers but the kernel has " + std::to_string(buffers) + " buffer arguments";
  }
  if (scalars != 0 && si.push.size() != scalars) {
    return "the module has no push-constant block but the kernel has " + std::to_string(scalars) +
           " scalar arguments";
  }
  return {};
}

}  // namespace tune::vk
