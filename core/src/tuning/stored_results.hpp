// StoredResults: the tuning's only contact with the TuningStore. Reads a key's rows once,
// validated against the kernel's space (cache_validation.hpp), and writes new outcomes.
// A store that throws (a user's own TuningStore) is treated as empty and logged, as a store
// that cannot read: persistence never fails a tuning. Not thread-safe; one tuning uses it.
#pragma once

#include <chrono>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::detail {

class StoredResults {
 public:
  // `store` may be null (nothing persists).
  StoredResults(TuningStore* store, const StoreKey& key, const KernelDef& def,
                const Config& heuristics)
      : store_(store), key_(key), def_(def), heuristics_(heuristics) {}

  // Valid stored rows by canonical config text (read from the store at the first call).
  const std::map<std::string, StoredResult>& rows();
  // Fills the results of candidates that stored rows cover (timing or failure, whether their
  // output was verified, from_store) and clears their `need` flag.
  void apply(const std::vector<Config>& cands, std::vector<ConfigResult>& results,
             std::vector<bool>& need);
  void save(std::span<const StoredResult> rows);
  // Forgets what was read, so that the next rows() reads the store again.
  void reload() noexcept {
    loaded_ = false;
    rows_.clear();
  }
  // Cross-process claim on the key (TuningStore::try_claim): true when this process may tune
  // it now (always without a store). Renews a claim already held.
  bool claim(std::chrono::milliseconds ttl);
  // Gives the claim up, if this process holds it.
  void release_claim();
  bool has_store() const noexcept { return store_ != nullptr; }

 private:
  TuningStore* store_;
  const StoreKey& key_;
  const KernelDef& def_;
  const Config& heuristics_;
  bool loaded_ = false;
  bool claimed_ = false;
  std::map<std::string, StoredResult> rows_;
};

// `r` as a stored `row` says: from the store, checked or not, and its timing or its failure.
void take_stored_row(const StoredResult& row, ConfigResult& r);

}  // namespace tune::detail
