// Four real processes (fork + exec of cache_worker) tune the same kernel and keys into one
// database at once: no errors, no lost or duplicated rows, the same winner everywhere.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cache_test_util.hpp"
#include "program_paths.hpp"
#include "tune/config.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

struct Worker {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::string out, err;
  int status = 0;
};

std::string drain(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return s;
}

void run_workers(const std::string& db, int n, int configs, int keys, std::vector<Worker>* ws) {
  int start[2];
  REQUIRE(::pipe(start) == 0);
  for (int i = 0; i < n; ++i) {
    int out[2], err[2];
    REQUIRE(::pipe(out) == 0);
    REQUIRE(::pipe(err) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(start[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      for (int fd : {start[0], start[1], out[0], out[1], err[0], err[1]}) ::close(fd);
      for (const Worker& w : *ws) {
        ::close(w.out_fd);
        ::close(w.err_fd);
      }
      std::string id = std::to_string(i), c = std::to_string(configs), k = std::to_string(keys);
      ::execl(tune_test_programs::cache_worker, tune_test_programs::cache_worker, db.c_str(),
              id.c_str(), c.c_str(), k.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    Worker w;
    w.pid = pid;
    w.out_fd = out[0];
    w.err_fd = err[0];
    ws->push_back(w);
  }
  ::close(start[0]);
  ::close(start[1]);  // every worker sees EOF now: they start together
  // Outputs are small (well under a pipe buffer): read them after the exits.
  for (Worker& w : *ws) {
    ::waitpid(w.pid, &w.status, 0);
    w.out = drain(w.out_fd);
    w.err = drain(w.err_fd);
  }
}

TEST_CASE("four processes tune the same kernel and keys into one database") {
  cache_test::TempDir dir;
  std::string db = dir.file("tune.db");  // does not exist yet: creation races too
  constexpr int kWorkers = 4, kConfigs = 24, kKeys = 6;
  std::vector<Worker> ws;
  run_workers(db, kWorkers, kConfigs, kKeys, &ws);

  // The winner every process must report: the config of lowest cost per key.
  std::string expected;
  for (int k = 0; k < kKeys; ++k) {
    int best = 0;
    for (int c = 0; c < kConfigs; ++c)
      if ((c * 7 + k * 3) % kConfigs < (best * 7 + k * 3) % kConfigs) best = c;
    Config cfg;
    cfg.set("BM", 16 * (best + 1)).set("UNROLL", best % 4);
    expected += std::to_string(k) + " " + cfg.to_string() + "\n";
  }
  for (const Worker& w : ws) {
    INFO("worker stderr: " << w.err);
    REQUIRE(WIFEXITED(w.status));
    CHECK(WEXITSTATUS(w.status) == 0);
    CHECK(w.err.empty());
    CHECK(w.out == expected);
  }

  cache_test::RawDb raw(db);
  CHECK(raw.scalar("SELECT count(*) FROM results") == std::to_string(kConfigs * kKeys));
  CHECK(raw.scalar("SELECT count(*) FROM (SELECT DISTINCT kernel, source_hash, key, device, "
                   "toolchain, config FROM results)") == std::to_string(kConfigs * kKeys));
  CHECK(raw.scalar("PRAGMA integrity_check") == "ok");
  CHECK(raw.scalar("PRAGMA journal_mode") == "wal");
}

}  // namespace
}  // namespace tune
