// Decision records (StoredResult::decision) through the real `tune` program: `tune cache list`
// shows a key's flips over re-tunings, `show` its record, both with `--json` as an object (null
// for a key without one), and `tune report` the record and the kernel's flip rate.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stored_row.hpp"
#include "tune/sqlite_store.hpp"
#include "tune_process.hpp"

namespace {

using namespace tune;
using namespace tune::testing;

const StoreKey kDecided{"mm", 1, "n=4096;f32", "lavapipe|test", "tool|1"};
const StoreKey kOld{"mm", 1, "n=64;f32", "lavapipe|test", "tool|1"};

// A key decided three times with one flip (BM=64 over BM=32 by 20%), and a key stored by a
// libtune without records.
void fill_store(const fs::path& db) {
  auto store = SqliteStore::open(db.string());
  StoredResult winner = stored("BM=64", 1000);
  DecisionRecord d;
  d.runner_up = "BM=32";
  d.margin = 0.2;
  d.confidence = 0.99;
  d.timing = "flush";
  d.library_version = "0.1.0";
  d.unix_time = 1'760'000'000;
  d.tunings = 3;
  d.flips = 1;
  winner.decision = d;
  store->save(kDecided, std::vector<StoredResult>{winner, stored("BM=32", 1200)});
  store->save(kOld, std::vector<StoredResult>{stored("BM=64", 90), stored("BM=32", 80)});
}

}  // namespace

TEST_CASE("tune cache list/show and tune report show decision records and the flip rate") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  fill_store(cli.db_path());

  ProcessResult r = cli.run({"cache", "list"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("FLIPS/RETUNES"), r.describe());
  CHECK_MESSAGE(r.has(" 1/2 "), r.describe());

  r = cli.run({"cache", "list", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("\"flips\": 1"), r.describe());
  CHECK_MESSAGE(r.has("\"decision\": null"), r.describe());  // the key without a record

  r = cli.run({"cache", "show", "mm"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("decision: margin +20.0% over BM=32, confidence 0.99, flush, libtune 0.1.0, "
                      "decided 2025-10-09, 1 flip in 2 re-tunings"),
                r.describe());

  r = cli.run({"cache", "show", "mm", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("\"runner_up\": \"BM=32\""), r.describe());
  CHECK_MESSAGE(r.has("\"tunings\": 3"), r.describe());

  const fs::path report = scratch.path() / "report.html";
  r = cli.run({"report", "--out", report.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const std::string html = read_text(report);
  CHECK(html.find("data-kernel=\"mm\" data-flips=\"1\" data-retunings=\"2\" "
                  "data-flip-rate=\"0.5\"") != std::string::npos);
  CHECK(html.find("1 flip in 2 re-tunings") != std::string::npos);
}
