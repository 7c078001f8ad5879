#include "stored_results.hpp"

#include "cache/cache_validation.hpp"
#include "tune/log.hpp"
#include "user_code.hpp"

namespace tune::detail {

const std::map<std::string, StoredResult>& StoredResults::rows() {
  if (loaded_ || store_ == nullptr) return rows_;
  loaded_ = true;
  std::vector<StoredResult> raw;
  try {
    raw = store_->load(key_);
  } catch (...) {
    log_warning("tuning store load for " + def_.name +
                " failed; tuning as if nothing were "
                "stored: " +
                describe_current_exception());
    return rows_;
  }
  for (auto& v : validate_rows(raw, def_.space, def_.name, &heuristics_))
    rows_.emplace(v.row.config, std::move(v.row));
  return rows_;
}

void StoredResults::apply(const std::vector<Config>& cands, std::vector<ConfigResult>& results,
                          std::vector<bool>& need) {
  const auto& stored = rows();
  if (stored.empty()) return;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    auto it = stored.find(cands[i].to_string());
    if (it == stored.end()) continue;  // never timed, or pruned for this call
    take_stored_row(it->second, results[i]);
    need[i] = false;
  }
}

void take_stored_row(const StoredResult& row, ConfigResult& r) {
  r.from_store = true;
  r.verified = row.verified;
  r.origin = row.origin;
  if (row.status == StatusCode::ok)
    r.stats = row.stats;
  else
    r.status = Status(row.status, row.reason);
}

void StoredResults::save(std::span<const StoredResult> rows) {
  if (store_ == nullptr || rows.empty()) return;
  try {
    store_->save(key_, rows);
  } catch (...) {
    log_warning("tuning store save for " + def_.name +
                " failed; results kept in memory only: " + describe_current_exception());
  }
}

bool StoredResults::claim(std::chrono::milliseconds ttl) {
  if (store_ == nullptr) return true;
  try {
    const bool granted = store_->try_claim(key_, ttl);
    if (granted) claimed_ = true;
    return granted;
  } catch (...) {
    log_warning("tuning store claim for " + def_.name +
                " failed; tuning without it: " + describe_current_exception());
    return true;
  }
}

void StoredResults::release_claim() {
  if (store_ == nullptr || !claimed_) return;
  claimed_ = false;
  try {
    store_->release_claim(key_);
  } catch (...) {
    log_warning("tuning store release_claim for " + def_.name +
                " failed: " + describe_current_exception());
  }
}

}  // namespace tune::detail
