// Salvage of damaged cache files (label faults): a database truncated at every page boundary
// (and inside pages), damaged at the first and last leaves of its table, or with a broken
// schema entry keeps every row on its intact pages. The bound is derived from the file
// itself: SQLite's dbstat table says how many rows each page of `results` holds before the
// damage, so "the rows on intact pages" is a number, and every row kept must be an original.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cache_test_util.hpp"
#include "tune/config.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

constexpr int kRows = 300;

// A closed cache file of kRows rows spread over a few dozen pages; the original medians by
// canonical config.
struct Original {
  std::string bytes;
  std::map<std::string, double> median;
  std::size_t page_size = 0;
  std::map<std::size_t, std::size_t> rows_on_page;  // page number -> rows of `results` on it
};

Original make_original(const TempDir& dir) {
  Original o;
  const std::string path = dir.file("original.db");
  {
    auto store = SqliteStore::open(path);
    std::vector<StoredResult> rows;
    for (int i = 0; i < kRows; ++i) {
      // Saved in a scattered order, as tuning finishes configs, so the b-tree splits pages.
      const int n = (i * 7919) % kRows;
      auto r = ok_row("BM=" + std::to_string(n) + ",NAME=\"padding-padding-padding-padding\"",
                      1000.0 + n);
      o.median[Config::parse(r.config)->to_string()] = r.stats.median;
      rows.push_back(r);
      if (rows.size() == 10) {
        store->save(test_key(), rows);
        rows.clear();
      }
    }
  }  // closing checkpoints the WAL into the file
  RawDb raw(path, /*readonly=*/true);
  o.page_size = std::stoul(raw.scalar("PRAGMA page_size"));
  REQUIRE(raw.scalar("SELECT count(*) FROM dbstat WHERE name = 'results' AND pagetype = "
                     "'overflow'") == "0");
  // "pageno:ncell,..." for every page of `results`, interior pages included: in a WITHOUT
  // ROWID table their cells are rows too.
  std::istringstream cells(raw.scalar(
      "SELECT group_concat(pageno || ':' || ncell, ' ') FROM dbstat WHERE name = 'results'"));
  for (std::string pc; cells >> pc;)
    o.rows_on_page[std::stoul(pc.substr(0, pc.find(':')))] =
        std::stoul(pc.substr(pc.find(':') + 1));
  std::size_t sum = 0;
  for (const auto& [pg, n] : o.rows_on_page) sum += n;
  REQUIRE(sum == kRows);  // every row lives in one cell of one page (WITHOUT ROWID)
  o.bytes = cache_test::read_bytes(path);
  return o;
}

// Opens `bytes` as tune.db in a fresh directory and returns the rows the store has after
// moving the file aside and salvaging it; checks each is an original row.
std::size_t rows_after_damage(const Original& o, const std::string& bytes, std::string* warning) {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  cache_test::write_bytes(path, bytes);
  LogCapture log;
  auto store = SqliteStore::open(path);
  const auto rows = store->load(test_key());
  *warning = log.all();
  for (const auto& r : rows) {
    auto it = o.median.find(r.config);
    REQUIRE(it != o.median.end());
    CHECK(it->second == r.stats.median);
  }
  return rows.size();
}

TEST_CASE("faults: a database truncated anywhere keeps the rows of its whole pages") {
  TempDir dir;
  const Original o = make_original(dir);
  const std::size_t pages = o.bytes.size() / o.page_size;
  REQUIRE(pages >= 10);
  std::vector<std::size_t> cuts = {16, 100, 1000};
  for (std::size_t p = 1; p < pages; ++p) {
    cuts.push_back(p * o.page_size);
    if (p % 4 == 1) cuts.push_back(p * o.page_size + o.page_size / 2);  // inside a page
    if (p % 4 == 3) cuts.push_back(p * o.page_size + 100);
  }
  std::ostringstream table;
  std::size_t total_kept = 0, total_bound = 0;
  for (std::size_t cut : cuts) {
    CAPTURE(cut);
    // The rows on pages wholly before the cut are intact on disk: at least these come back.
    std::size_t bound = 0;
    for (const auto& [pg, n] : o.rows_on_page)
      if (pg * o.page_size <= cut) bound += n;
    std::string warning;
    const std::size_t kept = rows_after_damage(o, o.bytes.substr(0, cut), &warning);
    INFO(warning);
    CHECK(kept >= bound);
    CHECK(kept <= static_cast<std::size_t>(kRows));
    total_kept += kept;
    total_bound += bound;
    table << " " << cut << ":" << kept << "/" << bound;
  }
  MESSAGE("truncated at byte: rows kept/rows on whole pages (of " << kRows << "):" << table.str());
  MESSAGE("over " << cuts.size() << " truncations: " << total_kept << " rows kept, bound "
                  << total_bound);
}

TEST_CASE("faults: damaged first and last leaves of the table: the pages between are kept") {
  TempDir dir;
  const Original o = make_original(dir);
  // The leaves a forward and a backward scan start from: the table's lowest and highest keys.
  RawDb raw(dir.file("original.db"), /*readonly=*/true);
  const std::size_t first = std::stoul(raw.scalar(
      "SELECT pageno FROM dbstat WHERE name = 'results' AND pagetype = 'leaf' ORDER BY path "
      "LIMIT 1"));
  const std::size_t last = std::stoul(raw.scalar(
      "SELECT pageno FROM dbstat WHERE name = 'results' AND pagetype = 'leaf' ORDER BY path "
      "DESC LIMIT 1"));
  REQUIRE(first != last);
  std::string bytes = o.bytes;
  for (std::size_t pg : {first, last})
    for (std::size_t i = 0; i < o.page_size; ++i) bytes[(pg - 1) * o.page_size + i] = '\xA5';
  const std::size_t bound = kRows - o.rows_on_page.at(first) - o.rows_on_page.at(last);
  std::string warning;
  const std::size_t kept = rows_after_damage(o, bytes, &warning);
  INFO(warning);
  CHECK(warning.find("moved aside") != std::string::npos);
  CHECK(warning.find("salvaged " + std::to_string(kept) + " rows") != std::string::npos);
  CHECK(kept == bound);
  MESSAGE("first and last leaves damaged: " << kept << " rows kept of " << kRows << " (bound "
                                            << bound << ")");
}

TEST_CASE("faults: a broken schema entry of the claims table loses no row") {
  TempDir dir;
  const Original o = make_original(dir);
  const std::string path = dir.file("broken.db");
  cache_test::write_bytes(path, o.bytes);
  {
    RawDb raw(path);
    raw.exec("PRAGMA writable_schema = ON");
    raw.exec("UPDATE sqlite_schema SET sql = 'CREATE TABLE claims(' WHERE name = 'claims'");
  }
  std::string warning;
  const std::size_t kept = rows_after_damage(o, cache_test::read_bytes(path), &warning);
  INFO(warning);
  CHECK(warning.find("malformed database schema") != std::string::npos);
  CHECK(kept == static_cast<std::size_t>(kRows));
  MESSAGE("broken claims schema entry: " << kept << " rows kept of " << kRows);
}

}  // namespace
}  // namespace tune
