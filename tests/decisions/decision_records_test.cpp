// Decision records (StoredResult::decision) on the simulated device and in the SQLite store:
// a tuning stores its winner's margin and confidence over the runner-up, how it was timed and
// which libtune decided, on the winner's row only; a re-tuning that picks another winner counts
// a flip and moves the record, one that keeps it does not, one served wholly from the store
// records nothing; the flip rate in `tune report`'s page and in list_entries; a version-2
// database keeps opening (read-only as it is, migrated on a readwrite open); the JSON export
// round-trips the record and a malformed one is refused with the reason; a bundle leaves it out.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "../core/sim_fixture.hpp"
#include "cache/cache_json.hpp"
#include "cache/store_schema.hpp"
#include "decision_text.hpp"
#include "html_report.hpp"
#include "tune/bundle.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/version.hpp"
#include "tuning/decision_record.hpp"

using namespace tune;
using namespace tune::testing;

namespace {

AutotunerOptions with_store(std::shared_ptr<TuningStore> store) {
  AutotunerOptions o = quiet_options();
  o.store = std::move(store);
  return o;
}

// Tunes n=1000 of sim_kernel over `space` on a fresh simulated device whose best BM is `best`.
TuningReport tune_once(const std::string& db, ConfigSpace space, std::int64_t best) {
  SimRig rig;
  rig.dev.set_cost_model(bm_model(best));
  auto tuner = make_tuner(sim_kernel(std::move(space)), with_store(SqliteStore::open(db)));
  auto args = rig.args(1000);
  REQUIRE(tuner->run(rig.dev, args).ok());
  auto report = tuner->last_report(rig.dev, args);
  REQUIRE(report.has_value());
  return *report;
}

// The stored rows of the one key, and the rows among them that carry a record.
std::vector<CacheRow> stored_rows(const std::string& db) {
  auto rows = SqliteStore::open(db, {CacheMode::readonly})->rows();
  REQUIRE(rows.ok());
  return *rows;
}
std::vector<const StoredResult*> with_record(const std::vector<CacheRow>& rows) {
  std::vector<const StoredResult*> out;
  for (const CacheRow& r : rows)
    if (r.result.decision) out.push_back(&r.result);
  return out;
}
// The pointers point into `rows`: a temporary would leave them dangling.
std::vector<const StoredResult*> with_record(std::vector<CacheRow>&&) = delete;
const StoredResult& row_of(const std::vector<CacheRow>& rows, const std::string& config) {
  for (const CacheRow& r : rows)
    if (r.result.config == config) return r.result;
  FAIL("no row of " << config);
  throw;
}
const StoredResult& row_of(std::vector<CacheRow>&&, const std::string&) = delete;

DecisionRecord sample_record() {
  DecisionRecord d;
  d.runner_up = "BM=32";
  d.margin = 0.125;
  d.confidence = 0.97;
  d.timing = "rotate";
  d.sustained_turns = 6;
  d.library_version = "0.1.0";
  d.unix_time = 1'780'000'123;
  d.tunings = 3;
  d.flips = 1;
  return d;
}

// The test key's rows: BM=64 with sample_record(), BM=32 without a record.
void save_decided_key(TuningStore& store) {
  StoredResult decided = cache_test::ok_row("BM=64", 100.0);
  decided.decision = sample_record();
  store.save(cache_test::test_key(), std::vector{decided, cache_test::ok_row("BM=32", 120.0)});
}

void check_same(const DecisionRecord& a, const DecisionRecord& b) {
  CHECK(a.runner_up == b.runner_up);
  CHECK(a.margin == b.margin);
  CHECK(a.confidence == b.confidence);
  CHECK(a.timing == b.timing);
  CHECK(a.sustained_turns == b.sustained_turns);
  CHECK(a.library_version == b.library_version);
  CHECK(a.unix_time == b.unix_time);
  CHECK(a.tunings == b.tunings);
  CHECK(a.flips == b.flips);
}

}  // namespace

TEST_CASE("a tuning stores its decision record on the winner's row only") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  const TuningReport report = tune_once(db, bm_space({16, 32, 64}), 32);
  CHECK(report.winner.to_string() == "BM=32");

  const auto rows = stored_rows(db);
  REQUIRE(rows.size() == 3);
  const auto recorded = with_record(rows);
  REQUIRE(recorded.size() == 1);
  const StoredResult& w = *recorded.front();
  CHECK(w.config == "BM=32");
  const DecisionRecord& d = *w.decision;
  // BM=16 and BM=64 tie at 1160 ns: the runner-up is the first in canonical order.
  CHECK(d.runner_up == "BM=16");
  const StoredResult& r = row_of(rows, d.runner_up);
  CHECK(d.margin == doctest::Approx(r.stats.median / w.stats.median - 1));
  CHECK(d.margin > 0.1);
  CHECK(d.confidence >= 0.5);
  CHECK(d.confidence <= 1.0);
  CHECK(d.timing == to_string(report.timing_cache));
  CHECK(d.sustained_turns == report.showdown.sustained_turns);
  CHECK(d.library_version == kVersion);
  CHECK(d.unix_time >= w.unix_time - 1);
  CHECK(d.tunings == 1);
  CHECK(d.flips == 0);
}

TEST_CASE("re-tunings count flips, the record follows the winner, a stored key records nothing") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  CHECK(tune_once(db, bm_space({16, 32}), 64).winner.to_string() == "BM=32");
  auto rows = stored_rows(db);
  REQUIRE(with_record(rows).size() == 1);

  // The space grew: BM=64 is timed now and wins: a flip, the record moves to its row.
  CHECK(tune_once(db, bm_space({16, 32, 64}), 64).winner.to_string() == "BM=64");
  rows = stored_rows(db);
  auto recorded = with_record(rows);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded.front()->config == "BM=64");
  CHECK(recorded.front()->decision->runner_up == "BM=32");
  CHECK(recorded.front()->decision->tunings == 2);
  CHECK(recorded.front()->decision->flips == 1);

  // Grew again with a slower BM=128: timed, BM=64 kept: a re-tuning without a flip.
  CHECK(tune_once(db, bm_space({16, 32, 64, 128}), 64).winner.to_string() == "BM=64");
  rows = stored_rows(db);
  recorded = with_record(rows);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded.front()->config == "BM=64");
  CHECK(recorded.front()->decision->tunings == 3);
  CHECK(recorded.front()->decision->flips == 1);
  const std::int64_t decided = recorded.front()->decision->unix_time;

  // Every candidate stored: nothing timed, no new decision.
  CHECK(tune_once(db, bm_space({16, 32, 64, 128}), 64).winner.to_string() == "BM=64");
  rows = stored_rows(db);
  recorded = with_record(rows);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded.front()->decision->tunings == 3);
  CHECK(recorded.front()->decision->unix_time == decided);

  // The flip rate: list_entries carries the key's record, the report page the kernel's rate.
  auto entries = SqliteStore::open(db, {CacheMode::readonly})->list_entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  REQUIRE(entries->front().decision.has_value());
  CHECK(entries->front().decision->flips == 1);
  cli::ReportInput in;
  in.title = "t";
  const auto all = stored_rows(db);
  in.keys = cli::report_keys_from_rows(all);
  REQUIRE(in.keys.size() == 1);
  REQUIRE(in.keys.front().decision.has_value());
  const std::string page = cli::html_report(in);
  CHECK(page.find("<tr data-kernel=\"sim_kernel\" data-flips=\"1\" data-retunings=\"2\" "
                  "data-flip-rate=\"0.5\">") != std::string::npos);
  CHECK(page.find("class=\"decision\" data-runner-up=\"BM=32\"") != std::string::npos);
  CHECK(page.find("1 flip in 2 re-tunings") != std::string::npos);
}

TEST_CASE("a winner's row stored again without a new decision keeps its record") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  CHECK(tune_once(db, bm_space({16, 32, 64}), 32).winner.to_string() == "BM=32");
  {
    const auto first = stored_rows(db);
    REQUIRE(with_record(first).size() == 1);
  }

  {  // Every candidate stored, the stored winner no longer compiles: its row is stored again
     // as failed, nothing was timed, so no new decision: the record stays on that row.
    SimRig rig;
    rig.dev.set_cost_model(bm_model(32));
    rig.dev.fail_compile_if([](const Config& c) { return c.get_int("BM") == 32; }, "gone");
    auto tuner = make_tuner(sim_kernel(bm_space({16, 32, 64})), with_store(SqliteStore::open(db)));
    auto args = rig.args(1000);
    REQUIRE(tuner->run(rig.dev, args).ok());
  }
  auto rows = stored_rows(db);
  CHECK(row_of(rows, "BM=32").status == StatusCode::compile_error);
  auto recorded = with_record(rows);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded.front()->config == "BM=32");
  CHECK(recorded.front()->decision->tunings == 1);

  // The next decision continues the counts: a second tuning, a flip away from BM=32.
  const std::string winner = tune_once(db, bm_space({16, 32, 64, 128}), 32).winner.to_string();
  CHECK(winner != "BM=32");
  rows = stored_rows(db);
  recorded = with_record(rows);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded.front()->config == winner);
  CHECK(recorded.front()->decision->tunings == 2);
  CHECK(recorded.front()->decision->flips == 1);
}

TEST_CASE("a record that cannot be attached to a bundle's winner row moves nothing") {
  std::map<std::string, StoredResult> stored;
  stored["BM=32"] = cache_test::ok_row("BM=32", 120.0);
  stored["BM=32"].decision = sample_record();
  stored["BM=64"] = cache_test::ok_row("BM=64", 100.0);
  stored["BM=64"].origin = "bundle.json";
  std::vector<StoredResult> rows;
  CHECK_FALSE(detail::attach_decision(sample_record(), "BM=64", stored, rows));
  CHECK(rows.empty());
  // The user's own row takes it, and the old record leaves BM=32's row.
  stored["BM=64"].origin.clear();
  CHECK(detail::attach_decision(sample_record(), "BM=64", stored, rows));
  REQUIRE(rows.size() == 2);
  for (const StoredResult& r : rows) CHECK(r.decision.has_value() == (r.config == "BM=64"));
}

TEST_CASE("a version-2 database keeps opening: read-only as it is, migrated on readwrite") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  SqliteStore::open(db)->save(
      cache_test::test_key(),
      std::vector{cache_test::ok_row("BM=64", 100.0), cache_test::ok_row("BM=32", 120.0)});
  {  // What a version-2 libtune wrote: no decision column, user_version 2.
    cache_test::RawDb raw(db);
    raw.exec("ALTER TABLE results DROP COLUMN decision");
    raw.exec("PRAGMA user_version = 2");
  }
  const std::string before = cache_test::read_bytes(db);
  {
    cache_test::LogCapture log;
    auto rows = SqliteStore::open(db, {CacheMode::readonly})->load(cache_test::test_key());
    REQUIRE(rows.size() == 2);
    for (const auto& r : rows) CHECK_FALSE(r.decision.has_value());
    CHECK(log.warnings().empty());
  }
  CHECK(cache_test::read_bytes(db) == before);

  cache_test::LogCapture log;
  auto store = SqliteStore::open(db);
  CHECK(log.warnings().empty());
  CHECK(cache_test::files_starting(dir.path(), "tune.db.corrupt-").empty());
  {
    cache_test::RawDb raw(db, /*readonly=*/true);
    CHECK(raw.scalar("PRAGMA user_version") == std::to_string(kCacheSchemaVersion));
    CHECK(raw.scalar("SELECT count(*) FROM results WHERE decision = ''") == "2");
  }
  CHECK(store->load(cache_test::test_key()).size() == 2);
  StoredResult decided = cache_test::ok_row("BM=64", 100.0);
  decided.decision = sample_record();
  store->save(cache_test::test_key(), std::vector{decided});
  auto rows = store->load(cache_test::test_key());
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) {
    CHECK(r.decision.has_value() == (r.config == "BM=64"));
    if (r.decision) check_same(*r.decision, sample_record());
  }
  CHECK(log.warnings().empty());
  CHECK(kCacheSchemaVersion == 3);
}

TEST_CASE("a record altered in the file is refused like any altered row") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  save_decided_key(*SqliteStore::open(db));
  {
    cache_test::RawDb raw(db);
    raw.exec(
        "UPDATE results SET decision = replace(decision, '\"flips\":1', '\"flips\":0') "
        "WHERE config = 'BM=64'");
  }
  cache_test::LogCapture log;
  auto rows = SqliteStore::open(db, {CacheMode::readonly})->load(cache_test::test_key());
  REQUIRE(rows.size() == 1);
  CHECK(rows.front().config == "BM=32");
  CHECK(log.any_contains("checksum mismatch"));
}

TEST_CASE("the JSON export round-trips records; a malformed one is refused with the reason") {
  cache_test::TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  save_decided_key(*store);
  DecisionRecord alone;  // no runner-up: NaN margin and confidence
  alone.timing = "flush";
  StoredResult single = cache_test::ok_row("BM=8", 50.0);
  single.decision = alone;
  store->save(cache_test::test_key("n=2|f32"), std::vector{single});
  auto text = store->export_json();
  REQUIRE(text.ok());
  auto back = cache_rows_from_json(*text);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 3);
  int records = 0;
  for (const CacheRow& r : *back) {
    if (!r.result.decision) continue;
    ++records;
    if (r.result.config == "BM=64") check_same(*r.result.decision, sample_record());
    if (r.result.config == "BM=8") {
      CHECK(std::isnan(r.result.decision->margin));
      CHECK(std::isnan(r.result.decision->confidence));
      CHECK(r.result.decision->timing == "flush");
    }
  }
  CHECK(records == 2);

  std::string bad = *text;
  const auto at = bad.find("\"flips\": 1");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 10, "\"flips\": \"one\"");
  std::vector<std::string> problems;
  back = cache_rows_from_json(bad, &problems);
  REQUIRE(back.ok());
  CHECK(back->size() == 2);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().find("decision 'flips' is not a count") != std::string::npos);

  // Counts no tuning writes: no tuning at all, or as many flips as tunings.
  for (const auto& [from, to, reason] :
       {std::tuple{"\"tunings\": 3", "\"tunings\": 0", "decision 'tunings' is 0"},
        std::tuple{"\"tunings\": 3", "\"tunings\": 1", "1 flips in 1 tunings"}}) {
    bad = *text;
    const auto t = bad.find(from);
    REQUIRE(t != std::string::npos);
    bad.replace(t, std::string(from).size(), to);
    problems.clear();
    back = cache_rows_from_json(bad, &problems);
    REQUIRE(back.ok());
    CHECK(back->size() == 2);
    REQUIRE(problems.size() == 1);
    CHECK(problems.front().find(reason) != std::string::npos);
  }
}

TEST_CASE("a record's summary without a margin says so") {
  DecisionRecord d = sample_record();
  CHECK(cli::decision_summary(d).find("margin +12.5% over BM=32") != std::string::npos);
  d.margin = std::nan("");
  const std::string text = cli::decision_summary(d);
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("runner-up BM=32") != std::string::npos);
}

TEST_CASE("import brings a newer record onto the same measurement and never erases one") {
  cache_test::TempDir dir;
  auto from = SqliteStore::open(dir.file("from.db"));
  save_decided_key(*from);
  auto text = from->export_json();
  REQUIRE(text.ok());

  // The same measurements without a record: the export's record comes in.
  auto bare = SqliteStore::open(dir.file("bare.db"));
  bare->save(cache_test::test_key(),
             std::vector{cache_test::ok_row("BM=64", 100.0), cache_test::ok_row("BM=32", 120.0)});
  REQUIRE(bare->import_json(*text).ok());
  auto rows = bare->load(cache_test::test_key());
  REQUIRE(rows.size() == 2);
  for (const StoredResult& r : rows) {
    CHECK(r.decision.has_value() == (r.config == "BM=64"));
    if (r.decision) check_same(*r.decision, sample_record());
  }

  // A newer record stays; an export without records erases nothing.
  auto newer = SqliteStore::open(dir.file("newer.db"));
  StoredResult decided = cache_test::ok_row("BM=64", 100.0);
  decided.decision = sample_record();
  decided.decision->unix_time += 60;
  newer->save(cache_test::test_key(), std::vector{decided});
  REQUIRE(newer->import_json(*text).ok());
  auto plain = SqliteStore::open(dir.file("plain.db"));
  plain->save(cache_test::test_key(), std::vector{cache_test::ok_row("BM=64", 100.0)});
  auto plain_text = plain->export_json();
  REQUIRE(plain_text.ok());
  REQUIRE(newer->import_json(*plain_text).ok());
  rows = newer->load(cache_test::test_key());
  REQUIRE(rows.size() == 2);
  for (const StoredResult& r : rows)
    if (r.config == "BM=64") {
      REQUIRE(r.decision.has_value());
      CHECK(r.decision->unix_time == sample_record().unix_time + 60);
    }
}

TEST_CASE("a bundle ships decisions without their records") {
  cache_test::TempDir dir;
  const std::string db = dir.file("tune.db");
  save_decided_key(*SqliteStore::open(db));
  const std::string path = dir.file("app.tunebundle");
  auto written = create_bundle(db, path);
  REQUIRE_MESSAGE(written.ok(), written.status().to_string());
  const std::vector<std::string> bundles{path};
  auto served = stack_stores(nullptr, bundles)->load(cache_test::test_key());
  REQUIRE(served.size() == 2);
  for (const auto& r : served) CHECK_FALSE(r.decision.has_value());
}
