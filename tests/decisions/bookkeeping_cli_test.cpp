// A split bucket's record (key text "#bucket-splits", bookkeeping: core/src/cache/
// cache_entries.hpp) through the real `tune` program: `tune cache list`, `show`, `export`,
// `tune report` and `tune distill` never show it, and it stays in the database.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stored_row.hpp"
#include "tune/sqlite_store.hpp"
#include "tune_process.hpp"

namespace {

using namespace tune;
using namespace tune::testing;

const StoreKey kBucket{"mm", 1, "n=8192;f32", "lavapipe|test", "tool|1"};
const StoreKey kMember{"mm", 1, "n=5000;f32;split", "lavapipe|test", "tool|1"};
const StoreKey kSplits{"mm", 1, "#bucket-splits", "lavapipe|test", "tool|1"};

// What an Autotuner leaves after a bucket split: the bucket's rows, a member's, the record.
void fill_store(const fs::path& db) {
  auto store = SqliteStore::open(db.string());
  store->save(kBucket, std::vector<StoredResult>{stored("BM=64", 1000), stored("BM=32", 1200)});
  store->save(kMember, std::vector<StoredResult>{stored("BM=64", 900), stored("BM=32", 1100)});
  store->save(kSplits,
              std::vector<StoredResult>{stored("n=8192", 0, StatusCode::failed_precondition,
                                               "{BM=64} failed at n=8191: launch_failed")});
}

}  // namespace

TEST_CASE("tune cache list/show/export, report and distill leave a split's record out") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  fill_store(cli.db_path());
  const fs::path report = scratch.path() / "report.html";
  const std::vector<std::vector<std::string>> commands = {
      {"cache", "list"},
      {"cache", "list", "--json"},
      {"cache", "show", "mm"},
      {"cache", "show", "mm", "--json"},
      {"cache", "export", "-"},
      {"report", "--out", report.string()},
      {"distill", "mm", "--single"},
  };
  for (const auto& args : commands) {
    const ProcessResult r = cli.run(args);
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
    CHECK_MESSAGE(!r.has("bucket-splits"), r.describe());
    if (args[0] == "cache") CHECK_MESSAGE(r.has("n=5000"), r.describe());
    if (args[0] == "distill") CHECK_MESSAGE(r.has("2 keys, 2 configurations"), r.describe());
  }
  const std::string html = read_text(report);
  CHECK(html.find("bucket-splits") == std::string::npos);
  CHECK(html.find("n=8192") != std::string::npos);
  // `cache list` counts two keys, neither of them with no configuration ok.
  const ProcessResult list = cli.run({"cache", "list"});
  CHECK_MESSAGE(!list.has("(none ok)"), list.describe());
  // Still stored, for the Autotuners that read it.
  CHECK(SqliteStore::open(cli.db_path().string())->load(kSplits).size() == 1);
}
