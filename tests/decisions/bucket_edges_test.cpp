// Sound buckets (AutotunerOptions::check_bucket_edges) on the simulated device: a winner tuned
// at one member of a pow2 bucket is launched, verified and timed against the runner-up at the
// bucket's edges; a winner that fails or loses there splits the bucket, and the split persists
// in the store for another Autotuner with its own connection to it; a loss splits only when an
// interleaved confirmation holds it (a one-off slow timing keeps the bucket), a failure at
// once; a winner that holds keeps the bucket; edges whose arguments cannot be rebuilt are skipped
// with the reason; the option turns it all off.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "allocation_counter.hpp"
#include "bucketed_kernel.hpp"
#include "log_capture.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

// Best at BM=64 for every n; BM=64 fails to launch above `fails_above`.
SimDevice::CostModel fails_above(std::int64_t limit) {
  return [limit](const Config& c, ArgList args) {
    const std::int64_t bm = c.get_int("BM");
    if (bm == 64 && args[1].as_int() > limit) return std::numeric_limits<double>::infinity();
    return 1000.0 + 10.0 * static_cast<double>(std::llabs(bm - 64));
  };
}

// BM=64 best up to `limit`, BM=16 best (by 2x) above it.
SimDevice::CostModel best_changes_above(std::int64_t limit) {
  return [limit](const Config& c, ArgList args) {
    const std::int64_t best = args[1].as_int() > limit ? 16 : 64;
    return 1000.0 + 30.0 * static_cast<double>(std::llabs(c.get_int("BM") - best));
  };
}

// The timings the device made (SimDevice::time calls) per (BM, n), counted by a cost model
// wrapped around `model`.
using TimedCalls = std::map<std::pair<std::int64_t, std::int64_t>, int>;
SimDevice::CostModel counting(std::shared_ptr<TimedCalls> calls, SimDevice::CostModel model) {
  return [calls, model](const Config& c, ArgList args) {
    ++(*calls)[{c.get_int("BM"), args[1].as_int()}];
    return model(c, args);
  };
}

// A device and an x buffer of `count` f32 elements, with n.
struct Rig {
  SimDevice dev;
  Buffer x;
  std::uint64_t count;
  explicit Rig(std::uint64_t n) : count(n) {
    x = dev.alloc(n * sizeof(float)).value();
    SimDevice::set_name(*x, "x");
  }
  std::vector<ArgValue> args(std::int32_t n) {
    return {ArgValue::buf(*x, ElemType::f32, static_cast<std::uint64_t>(n)), ArgValue(n)};
  }
  std::vector<ArgValue> args_with_count(std::int32_t n, std::uint64_t c) {
    return {ArgValue::buf(*x, ElemType::f32, c), ArgValue(n)};
  }
};

AutotunerOptions with_store(std::shared_ptr<TuningStore> store) {
  AutotunerOptions o = quiet_options();
  o.store = std::move(store);
  o.check_bucket_edges = true;
  return o;
}

}  // namespace

TEST_CASE("a winner that fails at a bucket edge splits the bucket, and the split persists") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  Rig rig(8192);
  rig.dev.set_cost_model(fails_above(6000));
  auto tuner = make_tuner(bucketed_kernel(), with_store(SqliteStore::open(db)));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=64");
  CHECK(report->bucket.split);
  CHECK(report->bucket.range == "n=4097..8192");
  REQUIRE(report->bucket.edges.size() == 3);  // 4097, 8191, 8192
  CHECK(report->bucket.edges[0].value == 4097);
  CHECK_FALSE(report->bucket.edges[0].broke);
  CHECK(report->bucket.edges[1].value == 8191);
  CHECK(report->bucket.edges[1].broke);
  CHECK(report->bucket.edges[1].winner.code() == StatusCode::launch_failed);
  CHECK(report->bucket.edges[2].broke);

  // This process: another member of the bucket gets a decision of its own.
  REQUIRE(tuner->run(rig.dev, rig.args(8000)).ok());
  CHECK(best_of(*tuner, rig.dev, rig.args(8000)) == "BM=32");
  CHECK(best_of(*tuner, rig.dev, rig.args(5000)) == "BM=64");

  // Another Autotuner on its own connection to the store: the bucket is split there too, so
  // n=7000 is tuned for itself rather than served the bucket's BM=64 (which fails there).
  Rig other(8192);
  other.dev.set_cost_model(fails_above(6000));
  auto second = make_tuner(bucketed_kernel(), with_store(SqliteStore::open(db)));
  REQUIRE(second->run(other.dev, other.args(7000)).ok());
  CHECK(best_of(*second, other.dev, other.args(7000)) == "BM=32");
  auto r7000 = second->last_report(other.dev, other.args(7000));
  REQUIRE(r7000.has_value());
  CHECK(r7000->key.find("n=7000") != std::string::npos);
  CHECK(r7000->bucket.edges.empty());  // an exact member: no bucket left to check
}

TEST_CASE("a winner that loses beyond the race tolerance at an edge splits the bucket") {
  Rig rig(8192);
  rig.dev.set_cost_model(best_changes_above(6000));
  auto tuner = make_tuner(bucketed_kernel(), with_store(std::make_shared<MemoryStore>()));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK(report->bucket.split);
  CHECK(report->bucket.edges.back().winner.ok());
  CHECK(report->bucket.edges.back().winner_ns > report->bucket.edges.back().runner_up_ns);
  REQUIRE(tuner->run(rig.dev, rig.args(7000)).ok());
  CHECK(best_of(*tuner, rig.dev, rig.args(7000)) == "BM=16");
}

TEST_CASE("a winner that holds at every edge keeps its bucket") {
  Rig rig(8192);
  rig.dev.set_cost_model(bm_model(64));
  auto tuner = make_tuner(bucketed_kernel(), with_store(std::make_shared<MemoryStore>()));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK_FALSE(report->bucket.split);
  CHECK(report->bucket.edges.size() == 3);
  for (const auto& e : report->bucket.edges) {
    CHECK(e.skipped.empty());
    CHECK(e.winner.ok());
    CHECK_FALSE(e.broke);
  }
  const auto timed = rig.dev.time_calls();
  REQUIRE(tuner->run(rig.dev, rig.args(7000)).ok());  // the same bucket: a hit
  CHECK(rig.dev.time_calls() == timed);
  CHECK(best_of(*tuner, rig.dev, rig.args(7000)) == "BM=64");
}

TEST_CASE("an edge whose buffers cannot be sized for it is skipped with the reason") {
  Rig rig(8192);
  rig.dev.set_cost_model(bm_model(64));
  auto tuner = make_tuner(bucketed_kernel(), with_store(std::make_shared<MemoryStore>()));
  // x holds 1000 elements, not a multiple of n=5000: its size at n=8192 is not known.
  REQUIRE(tuner->run(rig.dev, rig.args_with_count(5000, 1000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args_with_count(5000, 1000));
  REQUIRE(report.has_value());
  REQUIRE(report->bucket.edges.size() == 3);
  CHECK(report->bucket.edges[0].skipped.empty());  // 4097 <= 5000: x keeps its size
  CHECK(report->bucket.edges[2].skipped.find("buffer argument 0 holds 1000 elements") !=
        std::string::npos);
  CHECK_FALSE(report->bucket.split);
}

TEST_CASE("an edge whose measuring fails as a whole is skipped with the reason, never a split") {
  // The device's kernel body throws at the upper edges (the whole measurement fails, as when a
  // user callback throws or the device is lost): that says nothing of the winner.
  Rig rig(8192);
  rig.dev.set_cost_model(bm_model(64));
  rig.dev.set_kernel_body([](const Config&, ArgList args, SimDevice&) {
    if (args[1].as_int() > 6000) throw std::runtime_error("device lost at n > 6000");
  });
  auto tuner = make_tuner(bucketed_kernel(), with_store(std::make_shared<MemoryStore>()));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  REQUIRE(report->bucket.edges.size() == 3);
  CHECK(report->bucket.edges[0].skipped.empty());  // 4097
  for (int i : {1, 2}) {
    const EdgeCheck& e = report->bucket.edges[static_cast<std::size_t>(i)];
    CAPTURE(e.value);
    CHECK_FALSE(e.broke);
    CHECK(e.skipped.find("measuring the edge failed") != std::string::npos);
    CHECK(e.skipped.find("device lost at n > 6000") != std::string::npos);
  }
  CHECK_FALSE(report->bucket.split);
}

TEST_CASE("check_bucket_edges = false checks no edge") {
  Rig rig(8192);
  rig.dev.set_cost_model(fails_above(6000));
  AutotunerOptions o = with_store(std::make_shared<MemoryStore>());
  o.check_bucket_edges = false;
  auto tuner = make_tuner(bucketed_kernel(), o);
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK(report->bucket.edges.empty());
  CHECK_FALSE(report->bucket.split);
}

TEST_CASE("the progress listener hears the tuning, never the edge checks at other sizes") {
  Rig rig(8192);
  // Time proportional to n: every edge's timings differ from the call's.
  rig.dev.set_cost_model([](const Config& c, ArgList args) {
    return static_cast<double>(args[1].as_int()) *
           (1.0 + static_cast<double>(std::llabs(c.get_int("BM") - 64)) / 64.0);
  });
  AutotunerOptions o = with_store(std::make_shared<MemoryStore>());
  std::vector<TuningProgress> heard;
  o.progress = [&](const TuningProgress& p) { heard.push_back(p); };
  auto tuner = make_tuner(bucketed_kernel(), o);
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK(report->bucket.edges.size() == 3);
  REQUIRE_FALSE(heard.empty());
  CHECK(heard.back().done);
  CHECK(heard.back().best == report->winner);
  std::size_t done = 0;
  for (const TuningProgress& p : heard) done += p.done ? 1 : 0;
  CHECK(done == 1);
  for (const ConfigResult& r : report->results)
    if (r.config == report->winner) CHECK(heard.back().best_ns == r.stats.median);
}

TEST_CASE(
    "a winner slow at an edge in one timing only, as under a burst of load, keeps its bucket") {
  // BM=64 is best at every n, but its first `burst` timings at n=8192 run 3x slower: the edge's
  // first timing (3 device timings of each contestant with these budgets) sees it lose by far;
  // the interleaved confirmation sees it as it is.
  constexpr int burst = 3;
  auto calls = std::make_shared<TimedCalls>();
  Rig rig(8192);
  rig.dev.set_cost_model(counting(calls, [calls](const Config& c, ArgList args) {
    const double ns = 1000.0 + 10.0 * static_cast<double>(std::llabs(c.get_int("BM") - 64));
    const bool loaded =
        c.get_int("BM") == 64 && args[1].as_int() == 8192 && (*calls)[{64, 8192}] <= burst;
    return loaded ? 3 * ns : ns;
  }));
  tune::testing::LogCapture said;
  auto tuner = make_tuner(bucketed_kernel(), with_store(std::make_shared<MemoryStore>()));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK(report->winner.to_string() == "BM=64");
  CHECK_FALSE(report->bucket.split);
  REQUIRE(report->bucket.edges.size() == 3);
  for (const auto& e : report->bucket.edges) CHECK_FALSE(e.broke);
  // The first timing did see the loss, and only the confirmation kept the bucket.
  CHECK(said.count(LogLevel::info, "lost at n=8192") == 1);
  CHECK(said.count(LogLevel::info, "not confirmed in interleaved rounds") == 1);
  CHECK((*calls)[{64, 8192}] > (*calls)[{64, 4097}]);
  CHECK(report->bucket.edges[2].winner_ns < report->bucket.edges[2].runner_up_ns);
  // Still one decision for the bucket: another member is a hit.
  const auto timed = rig.dev.time_calls();
  REQUIRE(tuner->run(rig.dev, rig.args(7000)).ok());
  CHECK(rig.dev.time_calls() == timed);
}

TEST_CASE("a loss confirmed in interleaved rounds splits, and a failure with no confirmation") {
  auto calls = std::make_shared<TimedCalls>();
  Rig rig(8192);
  // BM=64 best up to 6000 and fails to launch at 8191; BM=16 best by far at 8192.
  rig.dev.set_cost_model(counting(calls, [](const Config& c, ArgList args) {
    const std::int64_t n = args[1].as_int(), bm = c.get_int("BM");
    if (n == 8191 && bm == 64) return std::numeric_limits<double>::infinity();
    const std::int64_t best = n == 8192 ? 16 : 64;
    return 1000.0 + 30.0 * static_cast<double>(std::llabs(bm - best));
  }));
  tune::testing::LogCapture said;
  auto tuner = make_tuner(bucketed_kernel(), with_store(std::make_shared<MemoryStore>()));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  auto report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(report.has_value());
  CHECK(report->bucket.split);
  REQUIRE(report->bucket.edges.size() == 3);
  CHECK_FALSE(report->bucket.edges[0].broke);                                 // 4097
  CHECK(report->bucket.edges[1].winner.code() == StatusCode::launch_failed);  // 8191
  CHECK(report->bucket.edges[1].broke);
  CHECK(report->bucket.edges[2].winner.ok());  // 8192
  CHECK(report->bucket.edges[2].broke);
  CHECK(report->bucket.edges[2].winner_ns > report->bucket.edges[2].runner_up_ns);
  // The loss at 8192 was timed again (confirmed); the failure at 8191 was not.
  CHECK((*calls)[{32, 8192}] > (*calls)[{32, 4097}]);
  CHECK((*calls)[{32, 8191}] <= (*calls)[{32, 4097}]);
  CHECK(said.count(LogLevel::info, "not confirmed") == 0);
}

#ifndef TUNE_TEST_SANITIZED
TEST_CASE("a split bucket's members are hits that allocate nothing, here and in another process") {
  constexpr int kHits = 50;
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  Rig rig(8192);
  rig.dev.set_fast_launch(true);  // the simulated launch itself records nothing
  rig.dev.set_cost_model(fails_above(6000));
  auto tuner = make_tuner(bucketed_kernel(), with_store(SqliteStore::open(db)));
  const auto at5000 = rig.args(5000), at7000 = rig.args(7000);
  REQUIRE(tuner->run(rig.dev, at5000).ok());  // tunes and splits
  const auto split_report = tuner->last_report(rig.dev, at5000);
  REQUIRE(split_report.has_value());
  REQUIRE(split_report->bucket.split);
  REQUIRE(tuner->run(rig.dev, at7000).ok());  // a member of its own: tuned
  REQUIRE(tuner->run(rig.dev, at5000).ok());  // first calls after the split may allocate
  REQUIRE(tuner->run(rig.dev, at7000).ok());
  bool all_ok = true;
  // Alternating: each call misses its thread's memo of the previous arguments, so it finds
  // the bucket's marker and then the member's own entry.
  std::size_t n = allocations_of([&] {
    for (int i = 0; i < kHits; ++i) all_ok &= tuner->run(rig.dev, i % 2 ? at7000 : at5000).ok();
  });
  CHECK(all_ok);
  CHECK_MESSAGE(n == 0, n << " allocations in " << kHits << " hits of a split bucket's members");
  n = allocations_of([&] {
    for (int i = 0; i < kHits; ++i) all_ok &= tuner->run(rig.dev, at7000).ok();
  });
  CHECK(all_ok);
  CHECK_MESSAGE(n == 0, n << " allocations in " << kHits << " repeated hits of one member");
  CHECK(best_of(*tuner, rig.dev, at7000) == "BM=32");
  CHECK(best_of(*tuner, rig.dev, at5000) == "BM=64");
  // Hits, not misses served without allocating: a miss makes the device's queue wait for the
  // call's target (and a real backend allocates there: vulkan_interop_tests), a hit does not.
  rig.dev.set_fast_launch(false);
  const LaunchTarget stream = LaunchTarget::stream(reinterpret_cast<void*>(std::uintptr_t{0x7}));
  rig.dev.clear_events();
  for (int i = 0; i < 10; ++i) all_ok &= tuner->run(rig.dev, i % 2 ? at7000 : at5000, stream).ok();
  CHECK(all_ok);
  int waits = 0, launches = 0;
  for (const std::string& ev : rig.dev.events()) {
    waits += ev.find("waits for") != std::string::npos ? 1 : 0;
    launches += ev.rfind("launch BM=", 0) == 0 ? 1 : 0;
  }
  CHECK(waits == 0);
  CHECK(launches == 10);

  // Another Autotuner on its own connection: the split comes from the store.
  Rig other(8192);
  other.dev.set_fast_launch(true);
  other.dev.set_cost_model(fails_above(6000));
  auto second = make_tuner(bucketed_kernel(), with_store(SqliteStore::open(db)));
  const auto at6500 = other.args(6500);
  REQUIRE(second->run(other.dev, at6500).ok());
  REQUIRE(second->run(other.dev, at6500).ok());
  n = allocations_of([&] {
    for (int i = 0; i < kHits; ++i) all_ok &= second->run(other.dev, at6500).ok();
  });
  CHECK(all_ok);
  CHECK_MESSAGE(n == 0, n << " allocations in " << kHits << " hits of a member split elsewhere");
  const auto other_report = second->last_report(other.dev, at6500);
  REQUIRE(other_report.has_value());
  CHECK(other_report->key.find("n=6500") != std::string::npos);
}
#endif

TEST_CASE("a split's bookkeeping row is stored and honoured, never listed") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  Rig rig(8192);
  rig.dev.set_cost_model(fails_above(6000));
  auto store = SqliteStore::open(db);
  auto tuner = make_tuner(bucketed_kernel(), with_store(store));
  REQUIRE(tuner->run(rig.dev, rig.args(5000)).ok());
  const auto split_report = tuner->last_report(rig.dev, rig.args(5000));
  REQUIRE(split_report.has_value());
  REQUIRE(split_report->bucket.split);
  REQUIRE(tuner->run(rig.dev, rig.args(7000)).ok());

  // Listed: the bucket's and the members' decisions, never the split's record.
  auto rows = store->rows();
  REQUIRE(rows.ok());
  REQUIRE_FALSE(rows->empty());
  for (const CacheRow& r : *rows) CHECK(r.key.key.find("#bucket-splits") == std::string::npos);
  auto entries = store->list_entries();
  REQUIRE(entries.ok());
  CHECK(entries->size() == 2);  // the bucket (tuned at n=5000) and n=7000;split
  for (const CacheEntry& e : *entries) CHECK(e.key.key.front() != '#');
  auto json = store->export_json();
  REQUIRE(json.ok());
  CHECK(json->find("#bucket-splits") == std::string::npos);
  CHECK(json->find("n=7000") != std::string::npos);

  // Stored: read by key, and kept by a merge into another database.
  StoreKey split = (*rows)[0].key;
  split.key = "#bucket-splits";
  const auto stored = store->load(split);
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].config == "n=8192");
  const std::string copy = dir.file("copy.db");
  auto merged = SqliteStore::open(copy);
  REQUIRE(merged->merge_database(db).ok());
  CHECK(merged->load(split).size() == 1);

  // Honoured: an Autotuner on the merged copy keys n=6000 exactly.
  Rig other(8192);
  other.dev.set_cost_model(fails_above(6000));
  auto second = make_tuner(bucketed_kernel(), with_store(merged));
  REQUIRE(second->run(other.dev, other.args(6000)).ok());
  const auto other_report = second->last_report(other.dev, other.args(6000));
  REQUIRE(other_report.has_value());
  CHECK(other_report->key.find("n=6000") != std::string::npos);
}
