// Fault injection on `tune cache import` at the library level (label faults): every field of
// an imported row, failed or ok, passes the same checks as a stored row, and the streaming
// import keeps its promises (all or nothing, bounded values, bounded problem list).
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cache/cache_json.hpp"
#include "cache_test_util.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

// One row of the export format, its members given as raw JSON text; `stats` likewise.
using Members = std::map<std::string, std::string>;

std::string object_json(const Members& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) {
    if (s.size() > 1) s += ",";
    s += "\"" + k + "\":" + v;
  }
  return s + "}";
}

std::string doc(const std::string& rows) {
  return R"({"format":"libtune-cache","version":1,"rows":[)" + rows + "]}";
}

// A plausible row of either kind: an ok row with ordered statistics, or a failed one as the
// tuner stores it (no samples, zeros, a median of +inf exported as null).
Members good_row(bool ok, const std::string& config) {
  Members row = {{"kernel", R"("vector_add")"},
                 {"source_hash", R"("0xfeedfacecafebeef")"},
                 {"key", R"("n=1024|f32")"},
                 {"device", R"("simulated|sim|s1|1.0")"},
                 {"toolchain", R"("simc 1|libtune 0.1.0")"},
                 {"config", "\"" + config + "\""},
                 {"status", ok ? R"("ok")" : R"("compile_error")"},
                 {"reason", ok ? R"("")" : R"("error: BM too large")"},
                 {"unix_time", "1700000000"}};
  Members stats =
      ok ? Members{{"count", "10"}, {"min", "900"},  {"p20", "950"},  {"median", "1000"},
                   {"p80", "1050"}, {"max", "1200"}, {"mean", "1010"}}
         : Members{{"count", "0"}, {"min", "0"}, {"p20", "0"}, {"median", "null"},
                   {"p80", "0"},   {"max", "0"}, {"mean", "0"}};
  row["stats"] = object_json(stats);
  return row;
}

struct BadValue {
  std::string field;  // "kernel", "stats.min", ...
  std::string value;  // raw JSON
  bool ok_only;       // invalid only in an ok row (a failed row has no measurements)
};

// For every field a row has, values it must never be stored with.
std::vector<BadValue> bad_values() {
  std::vector<BadValue> v = {
      {"kernel", R"("")", false},
      {"kernel", "5", false},
      {"source_hash", R"("feed")", false},
      {"source_hash", "-1", false},
      {"key", "5", false},
      {"device", R"("")", false},
      {"device", "null", false},
      {"toolchain", R"("")", false},
      {"toolchain", "[]", false},
      {"config", R"("BM=64,,")", false},
      {"config", "{}", false},
      {"status", R"("boom")", false},
      {"status", "1", false},
      {"reason", "7", false},
      {"unix_time", "-1", false},
      {"unix_time", "99999999999", false},  // the year 5138
      {"unix_time", R"("yesterday")", false},
      {"stats", R"("fast")", false},
      {"stats.count", "-1", false},
      {"stats.count", "200000000", false},
      {"stats.count", "0", true},
  };
  for (const char* s : {"min", "p20", "median", "p80", "max", "mean"}) {
    const std::string f = std::string("stats.") + s;
    v.push_back({f, "-5", false});
    v.push_back({f, R"("12")", false});
    v.push_back({f, "null", true});
    v.push_back({f, "0.5", true});  // below 1 ns
  }
  return v;
}

// Sets `field` ("stats.min" inside "stats") of `row` to `value`.
void set_field(Members& row, bool ok, const std::string& field, const std::string& value) {
  if (field.rfind("stats.", 0) != 0) {
    row[field] = value;
    return;
  }
  Members stats =
      ok ? Members{{"count", "10"}, {"min", "900"},  {"p20", "950"},  {"median", "1000"},
                   {"p80", "1050"}, {"max", "1200"}, {"mean", "1010"}}
         : Members{{"count", "0"}, {"min", "0"}, {"p20", "0"}, {"median", "null"},
                   {"p80", "0"},   {"max", "0"}, {"mean", "0"}};
  stats[field.substr(6)] = value;
  row["stats"] = object_json(stats);
}

TEST_CASE("faults: every field of an imported row, failed or ok, is checked and named") {
  int cases = 0, rejected_naming_field = 0;
  for (bool ok : {true, false}) {
    for (const BadValue& bad : bad_values()) {
      if (bad.ok_only && !ok) continue;
      CAPTURE(ok);
      CAPTURE(bad.field);
      CAPTURE(bad.value);
      Members row = good_row(ok, "BM=1");
      set_field(row, ok, bad.field, bad.value);
      auto store = SqliteStore::open(":memory:");
      auto st = store->import_json(doc(object_json(row) + "," + object_json(good_row(ok, "BM=2"))));
      REQUIRE(st.ok());
      ++cases;
      CHECK(st->added == 1);  // the good row beside it
      CHECK(st->rejected == 1);
      REQUIRE(st->problems.size() == 1);
      INFO(st->problems[0]);
      // The reason names the field as the format spells it ("stats.min"; a stats member's
      // parent "stats" for the object itself).
      const std::string& why = st->problems[0];
      const bool named = why.rfind("row 0: ", 0) == 0 && why.find(bad.field) != std::string::npos;
      CHECK(named);
      if (st->rejected == 1 && named) ++rejected_naming_field;
      auto rows = store->rows();
      REQUIRE(rows.ok());
      REQUIRE(rows->size() == 1);
      CHECK(rows->front().result.config == "BM=2");
    }
  }
  MESSAGE("imported rows with one bad field: " << rejected_naming_field << " of " << cases
                                               << " rejected with a reason naming the field");
  CHECK(rejected_naming_field == cases);
}

TEST_CASE("faults: the plausible failed rows the tuner stores are still imported") {
  // +inf, NaN (null) and measured values are all a failed row's statistics may be.
  Members measured = good_row(false, "BM=3");
  measured["stats"] = object_json({{"count", "5"},
                                   {"min", "10"},
                                   {"p20", "11"},
                                   {"median", "12"},
                                   {"p80", "13"},
                                   {"max", "14"},
                                   {"mean", "12"}});
  Members no_stats = good_row(false, "BM=4");
  no_stats.erase("stats");
  const std::string rows = object_json(good_row(false, "BM=1")) + "," +
                           object_json(good_row(false, "BM=2")) + "," + object_json(measured) +
                           "," + object_json(no_stats);
  auto store = SqliteStore::open(":memory:");
  auto st = store->import_json(doc(rows));
  REQUIRE(st.ok());
  INFO((st->problems.empty() ? std::string() : st->problems[0]));
  CHECK(st->added == 4);
  CHECK(st->rejected == 0);
}

TEST_CASE("faults: a stored failed row with a negative time is dropped like an imported one") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(), std::vector{cache_test::ok_row("BM=1", 100.0)});
  {
    // Written behind the store's back, without a checksum (as a libtune before checksums).
    const StoreKey k = test_key();
    RawDb raw(path);
    raw.exec(
        "INSERT INTO results (kernel, source_hash, key, device, toolchain, config, status, "
        "reason, count, min, p20, median, p80, max, mean, unix_time) VALUES ('" +
        k.kernel + "', " + std::to_string(static_cast<std::int64_t>(k.source_hash)) + ", '" +
        k.key + "', '" + k.device + "', '" + k.toolchain +
        "', 'BM=2', 'compile_error', 'x', 0, -5, 0, NULL, 0, 0, 0, 1700000000)");
  }
  LogCapture log;
  auto store = SqliteStore::open(path);
  const auto loaded = store->load(test_key());
  REQUIRE(loaded.size() == 1);
  CHECK(loaded.front().config == "BM=1");
  CHECK(log.any_contains("'stats.min' = -5"));
}

TEST_CASE("faults: import is all or nothing: a bad document after its rows writes nothing") {
  TempDir dir;
  auto store = SqliteStore::open(dir.file("tune.db"));
  const std::string rows =
      object_json(good_row(true, "BM=1")) + "," + object_json(good_row(true, "BM=2"));
  struct Case {
    std::string text;
    StatusCode code;
    std::string says;
  };
  const std::vector<Case> cases = {
      // The version comes after the rows, as in libtune's own exports (keys sorted).
      {R"({"format":"libtune-cache","rows":[)" + rows + R"(],"version":2})",
       StatusCode::invalid_argument, "format version 2"},
      {R"({"format":"libtune-cache","rows":[)" + rows + "]}", StatusCode::invalid_argument,
       "missing integer 'version'"},
      {R"({"rows":[)" + rows + R"(],"version":1})", StatusCode::invalid_argument, "'format'"},
      {doc(rows).substr(0, doc(rows).size() - 2), StatusCode::data_loss, "not a JSON document"},
      {doc(rows) + " trailing", StatusCode::data_loss, "not a JSON document"},
      {doc(rows + R"(,{"reason":")" + std::string(kMaxJsonStringBytes + 1, 'x') + R"("})"),
       StatusCode::invalid_argument, "a string longer than 4 MiB"},
      {doc(rows + "," + std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']')),
       StatusCode::invalid_argument, "nested deeper than 64 levels"},
      {doc(rows + "," + std::string(kMaxJsonTokenBytes + 1, '1')), StatusCode::invalid_argument,
       "a number or literal longer than"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.says);
    auto st = store->import_json(c.text);
    REQUIRE_FALSE(st.ok());
    CHECK(st.status().code() == c.code);
    CHECK(st.status().message().find(c.says) != std::string::npos);
    INFO(st.status().to_string());
    CHECK(store->rows()->empty());  // rolled back
  }
  // The same rows in a good document are written (the store was left usable).
  auto good = store->import_json(doc(rows));
  REQUIRE(good.ok());
  CHECK(good->added == 2);
}

TEST_CASE("faults: a stream import matches a text import; rejections beyond 1000 are counted") {
  constexpr std::size_t kBad = ImportStats::kMaxListedProblems + 234;
  std::string rows;
  for (std::size_t i = 0; i < kBad; ++i) {
    Members bad = good_row(false, "BM=" + std::to_string(i));
    bad["status"] = R"("boom")";
    rows += object_json(bad) + ",";
  }
  // A row too large to build is rejected as a row; the document goes on.
  rows += R"({"kernel":"k",)";
  for (std::size_t i = 0; i <= kMaxJsonRowMembers; ++i) rows += "\"m" + std::to_string(i) + "\":1,";
  rows += R"("config":"BM=1"},)";
  rows += object_json(good_row(true, "BM=1"));
  const std::string text = doc(rows);
  auto a = SqliteStore::open(":memory:");
  auto b = SqliteStore::open(":memory:");
  std::istringstream in(text);
  auto from_text = a->import_json(text);
  auto from_stream = b->import_json(in);
  REQUIRE(from_text.ok());
  REQUIRE(from_stream.ok());
  for (const ImportStats* st : {&*from_text, &*from_stream}) {
    CHECK(st->added == 1);
    CHECK(st->rejected == kBad + 1);
    CHECK(st->problems.size() == ImportStats::kMaxListedProblems);
    CHECK(st->problems_not_listed == kBad + 1 - ImportStats::kMaxListedProblems);
  }
  CHECK(from_text->problems == from_stream->problems);
}

}  // namespace
}  // namespace tune
