// Bundles: read-only files of tuning decisions that an application ships with itself (docs,
// "Shipping tuned kernels with your application"; `tune bundle create|show|verify|merge`).
//
// A lookup goes through layers: the user's own database (read-write: tune/store.hpp's
// default_store(), or AutotunerOptions::store), then every bundle in order
// (AutotunerOptions::bundles, then the TUNE_BUNDLES path list), then tuning. Layers merge per
// configuration: each configuration's row comes from the first layer that holds one (so a row
// measured or verified on this machine replaces the shipped one), and the winner rule decides
// among the merged rows. Results are written, and claims taken, in the user's database only. A
// bundle is never written, created or moved by the library.
//
// A bundle is an SQLite file of its own kind (PRAGMA application_id "ltbn", user_version the
// bundle format) holding, for each decision (kernel, source hash, key, device fingerprint,
// toolchain fingerprint), every stored row of that key (the same `results` table and row
// checksums as the database), the decision's provenance and margin, and a checksum over its
// whole content. It is read whole when first opened (once per process and file): a
// bundle that cannot be trusted (absent, not a regular file, not a bundle, damaged,
// truncated, of a newer format, content checksum mismatch) is not used, with one warning
// naming the file and the problem; rows that fail the row checks are skipped with one
// warning. Nothing here throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tune/sample_stats.hpp"
#include "tune/status.hpp"
#include "tune/store.hpp"

namespace tune {

// One decision of a bundle: a key's winner by the one winner rule among its rows, with how it
// was made.
struct BundleDecision {
  StoreKey key;  // device and toolchain fingerprints name the device, driver and compilers
  std::string winner;
  std::string runner_up;  // the winner rule's second ok row; empty when only one is ok
  // runner_up's median over the winner's, minus 1 (0.08: the runner-up is 8% slower); NaN
  // when there is no runner-up. Slightly negative when the rule's tolerance preferred the
  // winner by its text among near-equal medians.
  double margin = 0;
  SampleStats winner_stats;        // nanoseconds: how the winner was timed (samples, spread)
  std::int64_t measured_unix = 0;  // when the winner was measured
  bool winner_verified = false;    // its output was checked when it was stored
  std::size_t rows = 0;            // the key's rows carried (every configuration stored)
};

struct BundleInfo {
  std::string path;
  std::string libtune_version;    // the libtune that wrote the bundle
  std::int64_t created_unix = 0;  // when it was written (merge: the newest input's time)
  std::string source;             // what it was made from (the database's file name, or "merge")
  std::vector<BundleDecision> decisions;
  std::size_t rows = 0;               // rows that passed the row checks
  std::vector<std::string> problems;  // rows skipped by the row checks, each with its reason
};

// Which rows of the database a bundle takes. Empty lists take everything; `kernels` match a
// kernel name exactly, `devices` a device fingerprint that contains the text (as CacheFilter).
struct BundleSelection {
  std::vector<std::string> kernels;
  std::vector<std::string> devices;
};

// Reads and checks the bundle at `path` (what `tune bundle show` and `verify` print).
// not_found, invalid_argument (not a regular file, not a bundle), data_loss (damaged,
// truncated, checksum mismatch) or failed_precondition (a newer bundle format), each naming
// the file. Rows that fail the row checks are listed in BundleInfo::problems, not an error.
Result<BundleInfo> read_bundle(const std::string& path);

// Writes a bundle of the decisions of database `from_db` (opened read-only, never modified)
// that `selection` takes: each key with at least one ok row, with all of its rows. The file
// is written beside `out` and renamed over it, so a reader never sees half a bundle. An error
// names the file: `from_db` unusable, nothing selected, `out` a link or special file, or a
// write failure.
Result<BundleInfo> create_bundle(const std::string& from_db, const std::string& out,
                                 const BundleSelection& selection = {});

// Writes `out` holding the rows of every input bundle (each read and checked as
// read_bundle() does; an unusable input is an error and nothing is written). Rows of one
// identity (key and config) keep the one with the better provenance (the database's merge
// rule), so rows of other devices are kept side by side. Idempotent: merging a bundle with
// itself, or the result with its inputs again, gives the same content. `out` may be one of
// the inputs.
Result<BundleInfo> merge_bundles(std::span<const std::string> inputs, const std::string& out);

// TUNE_BUNDLES: bundle paths separated by ':' (empty entries ignored), in lookup order.
std::vector<std::string> bundle_paths_from_env();

// The one composition point of decision layers (what the Autotuner uses): `user` (the
// read-write store; may be null: nothing is written), then `bundles` in order. Returns `user`
// itself when `bundles` is empty. Each bundle file is opened once per process (shared by every
// stack that names it; re-read when the file is replaced).
std::shared_ptr<TuningStore> stack_stores(std::shared_ptr<TuningStore> user,
                                          std::span<const std::string> bundles);

}  // namespace tune
