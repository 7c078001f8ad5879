// Several "machines" (pg_tune_child processes, each with its own local cache directory) meet
// the same new key at once through one server: the key is tuned once, by the claim's owner;
// the others wait for its rows and use them. The children are started with posix_spawn (a fork
// of this multi-threaded test process can hang under a sanitizer).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "child_processes.hpp"
#include "pg_server.hpp"
#include "program_paths.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"
#include "tune/sqlite_store.hpp"

namespace {

using tune::testing::describe;
using tune::testing::PgServer;
using tune::testing::spawn;
using tune::testing::TempDir;
using tune::testing::wait_all;

TEST_CASE("four machines meeting one new key through the server tune it once") {
  PgServer server;
  const std::string url = server.new_database("fleet");
  TempDir dir;
  const std::string go = (dir.path / "go").string();
  constexpr int kMachines = 4, kConfigs = 12;
  std::vector<pid_t> pids;
  std::vector<std::string> outs;
  for (int m = 0; m < kMachines; ++m) {
    const auto local = dir.path / ("machine" + std::to_string(m));
    std::filesystem::create_directories(local);
    outs.push_back((local / "out.txt").string());
    pids.push_back(
        spawn({tune_test_programs::pg_tune_child, local.string(), url, go, outs.back()}));
  }
  std::ofstream(go) << "go\n";
  const std::vector<int> status = wait_all(pids, std::chrono::seconds(120));
  int tuners = 0;
  for (int m = 0; m < kMachines; ++m) {
    const int st = status[static_cast<std::size_t>(m)];
    const bool exited_ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    REQUIRE_MESSAGE(exited_ok, "machine " << m << ": " << describe(st));
    std::ifstream in(outs[static_cast<std::size_t>(m)]);
    std::string compiles_word, timings_word;
    int compiles = -1, timings = -1;
    in >> compiles_word >> compiles >> timings_word >> timings;
    REQUIRE(timings_word == "timings");
    INFO("machine " << m << ": " << compiles << " compiles, " << timings << " timings");
    if (timings > 0) {
      ++tuners;  // the claim's owner: every configuration compiled, the winner among them
      CHECK(compiles == kConfigs);
    } else {
      CHECK(compiles == 1);  // only the winner it read from the server, to launch it
    }
  }
  CHECK(tuners == 1);
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "fleet") == std::to_string(kConfigs));
  CHECK(server.scalar("SELECT count(*) FROM tune_claims", "fleet") == "0");  // all released
}

}  // namespace

TEST_CASE("TUNE_STORE=postgresql://... puts the server behind the default store") {
  PgServer server;
  const std::string url = server.new_database("env");
  TempDir dir;
  const std::string go = (dir.path / "go").string();
  std::ofstream(go) << "go\n";
  const std::string out = (dir.path / "out.txt").string();
  tune::testing::ScopedEnv store("TUNE_STORE", url.c_str());
  tune::testing::ScopedEnv cache("TUNE_CACHE_DIR", dir.path.c_str());
  const std::vector<int> status =
      wait_all({spawn({tune_test_programs::pg_tune_child, "-", "default", go, out})},
               std::chrono::seconds(120));
  const bool exited_ok = status[0] != -1 && WIFEXITED(status[0]) && WEXITSTATUS(status[0]) == 0;
  REQUIRE_MESSAGE(exited_ok, describe(status[0]));
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "env") == "12");
  auto local = tune::SqliteStore::open((dir.path / "tune.db").string());
  auto rows = local->rows();
  REQUIRE(rows.ok());
  CHECK(rows->size() == 12);  // the local file in front holds them too
}

TEST_CASE("a machine tunes with the server down, exits, and a later process sends its rows") {
  PgServer server;
  const std::string url = server.new_database("later");
  TempDir dir;
  const std::string go = (dir.path / "go").string();
  std::ofstream(go) << "go\n";
  const std::string out = (dir.path / "out.txt").string();
  server.stop();
  auto run_child = [&] {
    const std::vector<int> status =
        wait_all({spawn({tune_test_programs::pg_tune_child, dir.path.string(), url, go, out})},
                 std::chrono::seconds(120));
    const bool exited_ok = status[0] != -1 && WIFEXITED(status[0]) && WEXITSTATUS(status[0]) == 0;
    REQUIRE_MESSAGE(exited_ok, describe(status[0]));
  };
  run_child();  // tunes from the local file alone: no hang, exit 0
  CHECK(std::filesystem::exists(dir.path / "tune.db.pg-outbox"));
  server.start();
  run_child();  // reads its rows from the local file; sends the queue before it exits
  CHECK(server.scalar("SELECT count(*) FROM tune_results", "later") == "12");
  CHECK_FALSE(std::filesystem::exists(dir.path / "tune.db.pg-outbox"));
}
