#include "key_builder.hpp"

#include "tune/backend/hash.hpp"
#include "tuning/user_code.hpp"

namespace tune {

bool TuningKey::push(std::int64_t v) noexcept {
  if (size >= kMaxKeyValues) return false;
  values[size++] = v;
  return true;
}

void TuningKey::rehash() noexcept {
  // In-memory only (stores key on text): one multiply-xor per value, one finishing mix.
  std::uint64_t h = device_hash ^ (static_cast<std::uint64_t>(size) * 0x9e3779b97f4a7c15ULL);
  for (int i = 0; i < size; ++i) {
    h ^= static_cast<std::uint64_t>(values[i]);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  hash = h;
}

bool operator==(const TuningKey& a, const TuningKey& b) noexcept {
  if (a.hash != b.hash || a.size != b.size || a.device_hash != b.device_hash) return false;
  for (int i = 0; i < a.size; ++i)
    if (a.values[i] != b.values[i]) return false;
  return true;
}

Result<KeyBuilder> KeyBuilder::make(const KernelSignature& sig, std::vector<KeySpec> specs) {
  KeyBuilder kb;
  if (specs.size() > static_cast<std::size_t>(kMaxKeyValues - 1)) {
    return Status(StatusCode::invalid_argument, "too many key arguments (" +
                                                    std::to_string(specs.size()) + "; at most " +
                                                    std::to_string(kMaxKeyValues - 1) + ")");
  }
  for (const auto& s : specs) {
    int idx = sig.index_of(s.arg);
    if (idx < 0) {
      std::string names;
      for (const auto& d : sig.decls()) names += (names.empty() ? "" : ", ") + d.name;
      return Status(StatusCode::invalid_argument, "key argument '" + s.arg +
                                                      "' is not an argument of the kernel "
                                                      "(arguments: " +
                                                      names + ")");
    }
    if (s.bucket == Bucket::custom && !s.fn)
      return Status(StatusCode::invalid_argument,
                    "key argument '" + s.arg + "' has a custom bucket but no function");
    kb.arg_index_.push_back(idx);
  }
  for (std::size_t i = 0; i < sig.size(); ++i) {
    if (sig.decls()[i].kind == ArgKind::buffer) kb.buffer_index_.push_back(static_cast<int>(i));
  }
  if (kb.buffer_index_.size() > 16)
    return Status(StatusCode::invalid_argument, "more than 16 buffer arguments");
  kb.specs_ = std::move(specs);
  return kb;
}

TuningKey KeyBuilder::build(ArgList args, std::uint64_t device_hash) const {
  TuningKey k{TuningKey::Unfilled{}};
  k.device_hash = device_hash;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    std::int64_t v = raw_value(args, i);
    switch (specs_[i].bucket) {
      case Bucket::exact:
        break;
      case Bucket::next_pow2:
        v = next_pow2(v);
        break;
      case Bucket::custom:
        try {
          v = specs_[i].fn(v);
        } catch (...) {
          throw Error(detail::callback_failure("key function of '" + specs_[i].arg + "'", nullptr,
                                               detail::describe_current_exception()));
        }
        break;
    }
    k.values[k.size++] = v;
  }
  // Element types of every buffer, 4 bits each (type + 1, so an absent buffer reads 0).
  std::uint64_t types = 0;
  for (std::size_t i = 0; i < buffer_index_.size(); ++i) {
    auto t = static_cast<std::uint64_t>(args[static_cast<std::size_t>(buffer_index_[i])].type);
    types |= (t + 1) << (4 * i);
  }
  k.values[k.size++] = static_cast<std::int64_t>(types);
  k.rehash();
  return k;
}

std::string KeyBuilder::to_string(const TuningKey& key) const {
  std::string s;
  std::size_t n = specs_.size();
  for (std::size_t i = 0; i < n && i < static_cast<std::size_t>(key.size); ++i) {
    if (!s.empty()) s += ',';
    s += specs_[i].arg;
    s += '=';
    s += std::to_string(key.values[i]);
  }
  s += ';';
  if (static_cast<std::size_t>(key.size) > n) {
    auto types = static_cast<std::uint64_t>(key.values[n]);
    for (std::size_t i = 0; i < buffer_index_.size(); ++i) {
      auto t = (types >> (4 * i)) & 0xF;
      if (i > 0) s += ',';
      s += t == 0 ? std::string("?") : std::string(tune::to_string(static_cast<ElemType>(t - 1)));
    }
  }
  for (int i = static_cast<int>(n) + 1; i < key.size; ++i) {
    s += ',';  // appended in steps: GCC 12 -O3 warns falsely (-Wrestrict) on "," + string
    s += std::to_string(key.values[i]);
  }
  return s;
}

}  // namespace tune
