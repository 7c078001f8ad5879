// Export / import: the JSON format, its validation, and the provenance rule of import.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cache/row_rules.hpp"
#include "cache_test_util.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

std::string doc(const std::string& rows) {
  return R"({"format": "libtune-cache", "version": 1, "rows": [)" + rows + "]}";
}

std::string row_json(const std::string& config, double median, int count,
                     std::int64_t when = 1700000000, const std::string& status = "ok") {
  return R"({"kernel": "vector_add", "source_hash": "0xfeedfacecafebeef", "key": "n=1024|f32",
             "device": "simulated|sim|s1|1.0", "toolchain": "simc 1|libtune 0.1.0",
             "config": ")" +
         config + R"(", "status": ")" + status + R"(", "reason": "", "unix_time": )" +
         std::to_string(when) + R"(, "stats": {"count": )" + std::to_string(count) +
         R"(, "min": 1, "p20": 2, "median": )" + std::to_string(median) +
         R"(, "p80": 1e9, "max": 1e9, "mean": 3}})";
}

TEST_CASE("export then import into another file reproduces every row") {
  TempDir dir;
  auto a = SqliteStore::open(dir.file("a.db"));
  StoredResult fail;
  fail.config = "BM=256";
  fail.status = StatusCode::timeout;
  fail.reason = "took \"forever\"\n\xff";  // quotes, newline, invalid UTF-8
  fail.stats.median = std::numeric_limits<double>::infinity();
  fail.unix_time = 5;
  a->save(test_key(), std::vector{ok_row("BM=64", 100.5, 33), fail});
  StoreKey big = test_key();
  big.source_hash = ~0ULL;  // above 2^53: travels as a hex string
  a->save(big, std::vector{ok_row("LAYOUT=\"tn\"", 7.0)});
  auto text = a->export_json();
  REQUIRE(text.ok());

  auto b = SqliteStore::open(dir.file("b.db"));
  auto stats = b->import_json(*text);
  REQUIRE(stats.ok());
  CHECK(stats->added == 3);
  CHECK(stats->rejected == 0);
  auto back = b->load(test_key());
  REQUIRE(back.size() == 2);
  CHECK(back[1].config == "BM=64");
  CHECK(back[1].stats.median == 100.5);
  CHECK(back[1].stats.count == 33);
  CHECK(back[0].status == StatusCode::timeout);
  CHECK(back[0].reason.rfind("took \"forever\"\n", 0) == 0);
  CHECK(std::isinf(back[0].stats.median));
  auto big_back = b->load(big);
  REQUIRE(big_back.size() == 1);
  CHECK(big_back[0].config == "LAYOUT=\"tn\"");

  // Importing the same file again changes nothing: every row is a full tie.
  stats = b->import_json(*text);
  REQUIRE(stats.ok());
  CHECK(stats->kept == 3);
  CHECK(stats->added + stats->replaced == 0);
}

TEST_CASE("import never replaces a row with one of worse provenance") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  store->save(test_key(),
              std::vector{ok_row("BM=64", 100.0, 40, 1000), ok_row("BM=32", 50.0, 10, 1000)});
  StoredResult failed;
  failed.config = "BM=16";
  failed.status = StatusCode::compile_error;
  failed.stats.median = std::numeric_limits<double>::infinity();
  failed.unix_time = 1000;
  store->save(test_key(), std::vector{failed});

  auto stats = store->import_json(
      doc(row_json("BM=64", 1.5, 10, 2000) + "," +          // fewer samples, newer: kept out
          row_json("BM=32", 2.5, 20, 10) + "," +            // more samples, older: replaces
          row_json("BM=64", 3.5, 40, 999) + "," +           // same samples, older: kept out
          row_json("BM=16", 4.5, 5, 1) + "," +              // a measurement replaces a failure
          row_json("BM=8", 5.5, 5, 1) + "," +               // new: added
          row_json("BM=8", 0, 0, 5000, "launch_failed")));  // a failure never replaces ok
  REQUIRE(stats.ok());
  CHECK(stats->added == 1);
  CHECK(stats->replaced == 2);
  CHECK(stats->kept == 3);
  CHECK(stats->rejected == 0);
  std::map<std::string, StoredResult> by;
  for (auto& r : store->load(test_key())) by[r.config] = r;
  CHECK(by["BM=64"].stats.median == 100.0);
  CHECK(by["BM=32"].stats.median == 2.5);
  CHECK(by["BM=16"].status == StatusCode::ok);
  CHECK(by["BM=8"].status == StatusCode::ok);

  StoredResult a = ok_row("X=1", 1.0, 5, 10), b = ok_row("X=1", 1.0, 5, 10);
  CHECK_FALSE(has_better_provenance(a, b));  // a full tie keeps the stored row
  b.unix_time = 9;
  CHECK(has_better_provenance(a, b));
}

TEST_CASE("malformed documents are errors; malformed rows are rejected one by one") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  CHECK(store->import_json("not json").status().code() == StatusCode::data_loss);
  CHECK_FALSE(store->import_json("[]").ok());
  CHECK_FALSE(store->import_json(R"({"format": "other", "version": 1, "rows": []})").ok());
  auto newer = store->import_json(R"({"format": "libtune-cache", "version": 2, "rows": []})");
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().message().find("version 2") != std::string::npos);

  std::string bad_rows =
      row_json("BM=64", 1.0, 3) + "," +            // fine
      row_json("BM=64,,", 1.0, 3) + "," +          // config does not parse
      row_json("BM=1", 1.0, 3, 1, "boom") + "," +  // unknown status
      row_json("BM=2", -1.0, 3) + "," +            // negative time
      row_json("BM=3", 1.0, 0) + "," +             // ok without samples
      R"({"kernel": 5})" + "," + R"("a string")" + "," +
      R"({"kernel": "k", "source_hash": "feed", "key": "", "device": "", "toolchain": "",
          "config": "", "status": "ok"})";
  auto stats = store->import_json(doc(bad_rows));
  REQUIRE(stats.ok());
  CHECK(stats->added == 1);
  CHECK(stats->rejected == 7);
  REQUIRE(stats->problems.size() == 7);
  CHECK(stats->problems[0].rfind("row 1: config does not parse", 0) == 0);
  CHECK(stats->problems[1] == "row 2: unknown status 'boom'");
  CHECK(stats->problems[6].find("source_hash") != std::string::npos);
  CHECK(store->load(test_key()).size() == 1);
}

TEST_CASE("import checks configs against a known kernel's space") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  ConfigSpace space;
  space.param("BM", {32, 64});
  ImportOptions opts;
  opts.space_for = [&](const StoreKey& k) -> const ConfigSpace* {
    return k.kernel == "vector_add" ? &space : nullptr;
  };
  auto stats = store->import_json(
      doc(row_json("BM=64", 1.0, 3) + "," + row_json("EVIL=\\\"x\\\"", 1.0, 3)), opts);
  REQUIRE(stats.ok());
  CHECK(stats->added == 1);
  CHECK(stats->rejected == 1);
  REQUIRE(stats->problems.size() == 1);
  CHECK(stats->problems[0].find("'EVIL' is not declared") != std::string::npos);
}

}  // namespace
}  // namespace tune
