// The HTML report of tunings (`tune report`, `tune demo --report`): one self-contained page,
// inline CSS, a few lines of inline JavaScript and SVG drawn here. Nothing is fetched: no
// external script, style sheet, font or image, so the page opens offline and in a CI
// artifact. No charting library is vendored: the charts are strips, bars, one polyline and a
// table heat map, each a few SVG elements that this file writes directly.
//
// Per key: the winner and its margin over the runner-up; every configuration's median with
// its p20-p80 band and min-max range on a shared log scale, its state (winner, ok, raced out,
// settled, stored, failed), its output's verification (verified, not checked, wrong output:
// ConfigResult::verification, data-verification) and compile time; failures with their reasons;
// parameter sensitivity (each parameter value's best and typical median); and, for a tuning
// measured in this process, where the wall time went (TuningTimes) and racing against tuning time
// (best so far, configurations compiled, timed and raced out), and for a search (the strategy
// named in TuningReport::strategy) its convergence: best so far against evaluations. The
// cache keeps neither the order of evaluation nor the strategy, so keys read back from it show
// no convergence. Per kernel with more than one key: a
// heat map of each winning configuration's time relative to the best at each key. The page starts
// with the device, driver and toolchain identity. Keys read back from the cache show their
// decision record (margin and confidence over the runner-up, how it was timed, which libtune
// decided and when, its tunings and flips), and each kernel with a record its flip rate: the
// share of re-tunings that picked another winner than the one before.
//
// Elements carry data-* attributes with the numbers they show (nanoseconds, as measured), so
// that tests and scripts can read the page's DOM. Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tune/autotuner.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cli {

// Where a tuning stood at one moment (a TuningProgress event).
struct ProgressPoint {
  double elapsed_ms = 0;
  double best_ns = 0;  // +inf before the first timing
  std::size_t candidates = 0;
  std::size_t compiled = 0;
  std::size_t timed = 0;
  std::size_t raced_out = 0;
};

// One key's tuning as the report shows it.
struct ReportKey {
  TuningReport report;
  std::string toolchain;  // DeviceInfo::toolchain_fingerprint()
  // True for a tuning run in this process: report.times, racing states, compile times and
  // `progress` are known. False for rows read back from the cache, which keeps none of them.
  bool measured = false;
  std::vector<ProgressPoint> progress;
  // The key's latest decision record (StoredResult::decision), for keys read back from the
  // cache; none for a tuning measured here and for rows without one.
  std::optional<DecisionRecord> decision;
};

struct ReportInput {
  std::string title;
  // Device, driver and toolchain identity, in display order ("device", "driver", ...).
  std::vector<std::pair<std::string, std::string>> identity;
  std::vector<ReportKey> keys;
};

// The page.
std::string html_report(const ReportInput& in);

// The identity rows of a report of tunings run on `info` (device, backend, driver, ...).
std::vector<std::pair<std::string, std::string>> report_identity(const DeviceInfo& info);

// One ReportKey per StoreKey of `rows` (in their order): results from the stored rows, the
// winner the fastest ok row (none when none is ok), source disk, measured false, the key's
// latest decision record.
std::vector<ReportKey> report_keys_from_rows(std::span<const CacheRow> rows);

}  // namespace tune::cli
