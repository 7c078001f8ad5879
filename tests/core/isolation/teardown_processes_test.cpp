// Several processes tuning on one cache directory, each exiting at once with compiles its last
// calls left running (tuning_budget_ms = 1): none may crash at exit (SimDevice aborts when a
// kernel outlives it), none may hang, and every key of every process is in the shared store.
// The processes are teardown_child programs started with posix_spawn: a fork of this
// multi-threaded test process hung under ASan.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "child_processes.hpp"
#include "program_paths.hpp"
#include "temp_dir.hpp"
#include "tune/sqlite_store.hpp"

using tune::testing::describe;
using tune::testing::spawn;
using tune::testing::wait_all;

TEST_CASE("teardown: 4 processes x 6 keys on one cache directory exit cleanly, nothing lost") {
  constexpr int kProcesses = 4, kKeys = 6, kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    tune::testing::TempDir dir;
    std::vector<pid_t> pids;
    for (int p = 0; p < kProcesses; ++p)
      pids.push_back(
          spawn({tune_test_programs::teardown_child, dir.path.string(), std::to_string(kKeys)}));
    const std::vector<int> status = wait_all(pids, std::chrono::seconds(120));
    for (int p = 0; p < kProcesses; ++p) {
      CAPTURE(p);
      INFO(describe(status[p]));
      CHECK((status[p] != -1 && WIFEXITED(status[p]) && WEXITSTATUS(status[p]) == 0));
    }
    auto store = tune::SqliteStore::open((dir.path / "tune.db").string());
    REQUIRE(store != nullptr);
    auto entries = store->list_entries();
    REQUIRE(entries.ok());
    std::set<std::string> keys;
    for (const auto& e : *entries) {
      CHECK(e.rows > 0);
      keys.insert(e.key.key);
    }
    CHECK(keys.size() == kKeys);
  }
}
