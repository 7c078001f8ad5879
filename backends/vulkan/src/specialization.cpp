#include "specialization.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>

namespace tune::vk {
namespace {

Status bad_value(const SpecConstant& c, const std::string& value, const char* as) {
  return Status(StatusCode::invalid_argument, "specialization constant " + c.name + " (id " +
                                                  std::to_string(c.spec_id) + ") takes " + as +
                                                  ", not '" + value + "'");
}

// `text` as `c`'s type into `out` (c.bytes bytes): the whole text, no spaces or '+'
// (std::from_chars: locale-independent), in the type's range; floats finite.
Status parse_value(const SpecConstant& c, const std::string& text, std::uint8_t out[8]) {
  const char* first = text.data();
  const char* last = first + text.size();
  const auto whole = [&](std::from_chars_result r) {
    return !text.empty() && r.ec == std::errc() && r.ptr == last;
  };
  switch (c.kind) {
    case SpecConstant::Kind::boolean: {
      const bool yes = text == "1" || text == "true";
      if (!yes && text != "0" && text != "false") return bad_value(c, text, "a boolean");
      const VkBool32 b = yes ? VK_TRUE : VK_FALSE;
      std::memcpy(out, &b, 4);
      return Status::ok_status();
    }
    case SpecConstant::Kind::floating: {
      double d = 0;
      const bool fits = whole(std::from_chars(first, last, d)) && std::isfinite(d) &&
                        (c.bytes == 8 || std::fabs(d) <= std::numeric_limits<float>::max());
      if (!fits) return bad_value(c, text, c.bytes == 8 ? "a finite double" : "a finite float");
      const float f = static_cast<float>(d);
      std::memcpy(out, c.bytes == 8 ? static_cast<const void*>(&d) : &f, c.bytes);
      return Status::ok_status();
    }
    case SpecConstant::Kind::signed_int: {
      std::int64_t v = 0;
      const bool fits = whole(std::from_chars(first, last, v)) &&
                        (c.bytes == 8 || (v >= std::numeric_limits<std::int32_t>::min() &&
                                          v <= std::numeric_limits<std::int32_t>::max()));
      if (!fits) return bad_value(c, text, c.bytes == 8 ? "a 64-bit integer" : "a 32-bit integer");
      const auto v32 = static_cast<std::int32_t>(v);
      std::memcpy(out, c.bytes == 8 ? static_cast<const void*>(&v) : &v32, c.bytes);
      return Status::ok_status();
    }
    case SpecConstant::Kind::unsigned_int: {
      std::uint64_t v = 0;  // from_chars refuses a '-' for an unsigned type
      const bool fits = whole(std::from_chars(first, last, v)) &&
                        (c.bytes == 8 || v <= std::numeric_limits<std::uint32_t>::max());
      if (!fits)
        return bad_value(
            c, text, c.bytes == 8 ? "an unsigned 64-bit integer" : "an unsigned 32-bit integer");
      const auto v32 = static_cast<std::uint32_t>(v);
      std::memcpy(out, c.bytes == 8 ? static_cast<const void*>(&v) : &v32, c.bytes);
      return Status::ok_status();
    }
    case SpecConstant::Kind::unsupported:
      return bad_value(c, text, "a value libtune can set (it sets 32- and 64-bit types only)");
  }
  return Status(StatusCode::internal, "unknown specialization constant kind");
}

}  // namespace

const VkSpecializationInfo* Specialization::info() {
  if (entries_.empty()) return nullptr;
  info_.mapEntryCount = static_cast<std::uint32_t>(entries_.size());
  info_.pMapEntries = entries_.data();
  info_.dataSize = data_.size();
  info_.pData = data_.data();
  return &info_;
}

void Specialization::set(std::uint32_t spec_id, const void* value, std::uint32_t bytes) {
  const auto offset = static_cast<std::uint32_t>(data_.size());
  entries_.push_back({spec_id, offset, bytes});
  const auto* p = static_cast<const std::uint8_t*>(value);
  data_.insert(data_.end(), p, p + bytes);
}

std::optional<std::uint32_t> Specialization::u32(std::uint32_t spec_id) const {
  for (const VkSpecializationMapEntry& e : entries_) {
    if (e.constantID != spec_id || e.size != 4) continue;
    std::uint32_t v = 0;
    std::memcpy(&v, data_.data() + e.offset, 4);
    return v;
  }
  return std::nullopt;
}

Result<Specialization> make_specialization(const SpirvInfo& si, const Dim3& block,
                                           const std::vector<Definition>& defs, bool named) {
  Specialization out;
  const bool sized = block.any_set() && si.local_size_is_spec;
  if (sized) {
    const std::uint32_t size[3] = {block.x, block.y, block.z};
    for (int d = 0; d < 3; ++d) {
      const std::uint32_t id = si.local_size_spec_id[d];
      // Each id once (a hand-written module may feed two dimensions from one constant).
      if (id != SpirvInfo::kFixed && std::find(si.local_size_spec_id, si.local_size_spec_id + d,
                                               id) == si.local_size_spec_id + d)
        out.set(id, &size[d], 4);
    }
  }
  if (!named) return out;
  for (const SpecConstant& c : si.spec_constants) {
    if (c.name.empty()) continue;
    for (const Definition& d : defs) {
      if (d.name != c.name) continue;
      const auto* sets_size =
          std::find(std::begin(si.local_size_spec_id), std::end(si.local_size_spec_id), c.spec_id);
      if (sized && sets_size != std::end(si.local_size_spec_id)) {
        return Status(StatusCode::invalid_argument,
                      "specialization constant " + c.name + " (id " + std::to_string(c.spec_id) +
                          ") is the workgroup size, which the configuration's block sets");
      }
      std::uint8_t bytes[8] = {};
      TUNE_RETURN_IF_ERROR(parse_value(c, d.value, bytes));
      out.set(c.spec_id, bytes, c.bytes);
      break;
    }
  }
  return out;
}

Dim3 module_block(const SpirvInfo& si, const Specialization& spec) {
  std::uint32_t size[3] = {si.local_size[0], si.local_size[1], si.local_size[2]};
  for (int d = 0; d < 3; ++d) {
    if (si.local_size_spec_id[d] == SpirvInfo::kFixed) continue;
    if (const auto v = spec.u32(si.local_size_spec_id[d])) size[d] = *v;
  }
  return Dim3{size[0], size[1], size[2]};
}

}  // namespace tune::vk
