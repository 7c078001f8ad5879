// Servers named by a host name: looked up within the connect deadline, every address tried,
// the name kept; a host whose DNS never answers (pg_lookup_child, in namespaces of its own)
// costs one connect timeout and one warning (the child is waited for 60 s, a hang would last
// minutes; nothing else is timed). The address cases are in postgres_store_test.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cache/cache_test_util.hpp"
#include "child_processes.hpp"
#include "pg_server.hpp"
#include "program_paths.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"
#include "tune/postgres_store.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

using testing::TempDir;

TEST_CASE("a server named by a host name is reached at one of its addresses, the name kept") {
  testing::PgServer server;  // listens on 127.0.0.1 only: localhost's ::1, if any, is refused
  server.sql("CREATE DATABASE named");
  PostgresOptions o;
  o.conninfo = "postgresql://tune@localhost:" + std::to_string(server.port()) + "/named";
  auto store = PostgresStore::open(o);
  const StoreKey key = cache_test::test_key("n=1");
  REQUIRE(store->put(key, std::vector{cache_test::ok_row("BM=64", 10)}).ok());
  CHECK(store->fetch(key)->size() == 1);
  CHECK(store->where() ==
        "postgresql://tune@localhost:" + std::to_string(server.port()) + "/named");
}

TEST_CASE("a host name whose DNS never answers costs one connect timeout, one warning") {
  const char* unshare = "/usr/bin/unshare";
  if (!std::filesystem::exists(unshare)) testing::skip_test("no /usr/bin/unshare (util-linux)");
  TempDir dir;
  const std::vector<int> status =
      testing::wait_all({testing::spawn({unshare, "--user", "--map-root-user", "--net", "--mount",
                                         tune_test_programs::pg_lookup_child, dir.path.string()})},
                        std::chrono::seconds(60));  // the resolver alone would retry for 150 s
  std::ifstream in(dir.path / "report.txt");
  const std::string report((std::istreambuf_iterator<char>(in)), {});
  const bool exited = status[0] != -1 && WIFEXITED(status[0]);
  if (exited && (WEXITSTATUS(status[0]) == 4 || (WEXITSTATUS(status[0]) == 1 && report.empty())))
    testing::skip_test("no user, network and mount namespaces here: " +
                       (report.empty() ? std::string("unshare refused") : report));
  REQUIRE_MESSAGE((exited && WEXITSTATUS(status[0]) == 0), testing::describe(status[0]) << "\n"
                                                                                        << report);
  CAPTURE(report);
  std::istringstream line(report);
  std::string w, l, q, lo, s;
  int warnings = -1, lookup = -1, queued = -1, local = -1, secret = -1;
  line >> w >> warnings >> l >> lookup >> q >> queued >> lo >> local >> s >> secret;
  CHECK(warnings == 1);
  CHECK(lookup == 1);  // the warning names the host whose lookup did not finish
  CHECK(queued == 1);  // the result waits for the server
  CHECK(local == 1);   // and is served from the local file
  CHECK(secret == 0);
  CHECK(report.find("connect timeout") != std::string::npos);
}

}  // namespace
}  // namespace tune
