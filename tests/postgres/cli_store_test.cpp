// `tune cache push|pull` and `tune cache list --store` against a real server (pg_server.hpp),
// the tune program run as a real process (tests/tools/tune_process.hpp). Label postgres.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "../tools/tune_process.hpp"
#include "pg_server.hpp"
#include "tune/config.hpp"
#include "tune/sqlite_store.hpp"

namespace {

using nlohmann::json;
using tune::testing::PgServer;
using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;

json run_json(const TuneCli& cli, const std::vector<std::string>& args) {
  ProcessResult r = cli.run(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  return json::parse(r.out);
}

TEST_CASE("tune cache push, list --store and pull move rows through the server") {
  PgServer server;
  // A password in the connection string (the trust setup ignores it): never printed.
  const std::string url = "postgresql://tune:pw-secret@127.0.0.1:" + std::to_string(server.port()) +
                          "/" + server.new_database("cli").substr(server.url("").size());
  ScratchDir a_dir, b_dir;
  TuneCli a(a_dir), b(b_dir);
  {
    auto local = tune::SqliteStore::open(a.db_path().string());
    std::vector<tune::StoredResult> rows;
    for (int bm : {16, 32, 64})
      rows.push_back(
          tune::cache_test::ok_row(tune::Config().set("BM", bm).to_string(), 100.0 * bm));
    local->save(tune::cache_test::test_key("n=1"), rows);
    local->save(tune::cache_test::test_key("n=2"), std::vector{rows[0]});
  }
  json pushed = run_json(a, {"cache", "push", "--store", url, "--json"});
  CHECK(pushed.at("sent") == 4);
  CHECK(pushed.at("keys") == 2);
  pushed = run_json(a, {"cache", "push", "--store", url, "--json"});  // nothing new
  CHECK(pushed.at("sent") == 0);
  CHECK(pushed.at("kept") == 4);

  const json listed = run_json(b, {"cache", "list", "--store", url, "--json"});
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].at("key") == "n=1");
  CHECK(listed[0].at("best_config") == "BM=16");
  CHECK(listed[0].at("rows") == 3);

  b.set_env("TUNE_STORE", url);  // pull's default server
  const json pulled = run_json(b, {"cache", "pull", "--kernel", "vector_add", "--json"});
  CHECK(pulled.at("sent") == 4);
  CHECK(run_json(b, {"cache", "list", "--json"}) == run_json(a, {"cache", "list", "--json"}));

  ProcessResult text = a.run({"cache", "push", "--store", url});
  CHECK_MESSAGE(text.exit_code == 0, text.describe());
  CHECK_MESSAGE(text.out.find("postgresql://tune@127.0.0.1:") != std::string::npos,
                text.describe());
  server.stop();
  ProcessResult down = a.run({"cache", "push", "--store", url});
  CHECK_MESSAGE(down.exit_code != 0, down.describe());
  CHECK_MESSAGE(down.err.find("postgresql://tune@127.0.0.1:") != std::string::npos,
                down.describe());
  for (const ProcessResult& r : {text, down}) CHECK_MESSAGE(!r.has("pw-secret"), r.describe());
}

}  // namespace
