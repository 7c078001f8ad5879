#include "bucket_splits.hpp"

#include <limits>
#include <span>
#include <vector>

#include "cache/cache_entries.hpp"
#include "tune/log.hpp"

namespace tune::detail {

namespace {

// Bookkeeping, not a decision (cache::is_bookkeeping): stored and read, never listed.
constexpr const char* kSplitKeyText = "#bucket-splits";
static_assert(kSplitKeyText[0] == cache::kBookkeepingMark);

// The splits stored under `of`'s split key, as (key argument, bucket value).
std::set<std::pair<std::string, std::int64_t>> read_splits(TuningStore* store, const StoreKey& of) {
  std::set<std::pair<std::string, std::int64_t>> out;
  std::vector<StoredResult> rows;
  try {
    rows = store->load(split_key(of));
  } catch (const std::exception& ex) {
    log_warning("bucket splits of " + of.kernel + " not read: " + ex.what());
  }
  for (const auto& r : rows) {
    const auto eq = r.config.find('=');
    try {
      if (eq == std::string::npos) throw std::invalid_argument("no '='");
      out.emplace(r.config.substr(0, eq), std::stoll(r.config.substr(eq + 1)));
    } catch (const std::exception&) {
      log_warning("bucket split row '" + r.config + "' of " + of.kernel + " ignored");
    }
  }
  return out;
}

}  // namespace

StoreKey split_key(const StoreKey& of) {
  StoreKey k = of;
  k.key = kSplitKeyText;
  return k;
}

void BucketSplits::load_once(const Device* device, TuningStore* store, const StoreKey& of) {
  {
    std::lock_guard lock(mu_);
    if (loaded_.count(device) != 0) return;
  }
  auto read = store == nullptr ? Set{} : read_splits(store, of);
  std::lock_guard lock(mu_);
  if (!loaded_.insert(device).second) return;
  splits_[device].insert(read.begin(), read.end());
}

void BucketSplits::forget(const Device* device) {
  std::lock_guard lock(mu_);
  splits_.erase(device);
  loaded_.erase(device);
}

bool BucketSplits::loaded(const Device* device) const {
  std::lock_guard lock(mu_);
  return loaded_.count(device) != 0;
}

void BucketSplits::add(const Device* device, TuningStore* store, const StoreKey& of,
                       const std::string& arg, std::int64_t bucket, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    splits_[device].emplace(arg, bucket);
  }
  if (store == nullptr) return;
  StoredResult row;
  row.config = arg + "=" + std::to_string(bucket);
  row.status = StatusCode::failed_precondition;
  row.reason = why;
  row.stats.median = std::numeric_limits<double>::infinity();
  try {
    store->save(split_key(of), std::span<const StoredResult>(&row, 1));
  } catch (const std::exception& ex) {
    log_warning("bucket split of " + of.kernel + " not stored: " + ex.what());
  }
}

TuningKey exact_member_key(const KeyBuilder& kb, ArgList args, const TuningKey& key,
                           std::uint32_t specs) noexcept {
  if (specs == 0) return key;
  TuningKey out = key;
  for (std::size_t i = 0; i < kb.specs().size(); ++i)
    if ((specs & (std::uint32_t{1} << i)) != 0) out.values[i] = kb.raw_value(args, i);
  if (!out.push(kExactMember)) return key;
  out.rehash();
  return out;
}

std::uint32_t BucketSplits::split_specs(const Device* device, const KeyBuilder& kb,
                                        const TuningKey& key) const {
  std::lock_guard lock(mu_);
  auto it = splits_.find(device);
  if (it == splits_.end() || it->second.empty() || is_exact_member(key)) return 0;
  std::uint32_t specs = 0;
  for (std::size_t i = 0; i < kb.specs().size(); ++i) {
    const KeySpec& spec = kb.specs()[i];
    if (spec.bucket == Bucket::next_pow2 && it->second.count({spec.arg, key.values[i]}) != 0)
      specs |= std::uint32_t{1} << i;
  }
  return specs;
}

TuningKey BucketSplits::exact_where_split(const Device* device, const KeyBuilder& kb, ArgList args,
                                          const TuningKey& key) const {
  return exact_member_key(kb, args, key, split_specs(device, kb, key));
}

}  // namespace tune::detail
