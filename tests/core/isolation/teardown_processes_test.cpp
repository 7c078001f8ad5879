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

#include "temp_dir.hpp"
#include "tune/sqlite_store.hpp"

extern char** environ;

namespace {

// Starts `argv` (argv[0] the program's path) with this process's environment.
pid_t spawn(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ);
  REQUIRE_MESSAGE(rc == 0, "posix_spawn " << argv[0] << ": " << std::strerror(rc));
  return pid;
}

// Waits for every child until `limit`, then kills those left (a hang) and says so. Returns
// each child's wait status (-1 for one killed as hung).
std::vector<int> wait_all(const std::vector<pid_t>& pids, std::chrono::seconds limit) {
  std::vector<int> status(pids.size(), 0);
  std::vector<bool> done(pids.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (std::size_t left = pids.size(); left > 0;) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      const pid_t w = ::waitpid(pids[i], &status[i], WNOHANG);
      REQUIRE_MESSAGE(w >= 0, "waitpid: " << std::strerror(errno));
      if (w == pids[i]) done[i] = true, --left;
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        ::kill(pids[i], SIGKILL);
        (void)::waitpid(pids[i], nullptr, 0);
        status[i] = -1, done[i] = true, --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

std::string describe(int status) {
  if (status == -1) return "hung (killed)";
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "exit " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

TEST_CASE("teardown: 4 processes x 6 keys on one cache directory exit cleanly, nothing lost") {
  constexpr int kProcesses = 4, kKeys = 6, kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    CAPTURE(round);
    tune::testing::TempDir dir;
    std::vector<pid_t> pids;
    for (int p = 0; p < kProcesses; ++p)
      pids.push_back(spawn({TUNE_TEARDOWN_CHILD, dir.path.string(), std::to_string(kKeys)}));
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
