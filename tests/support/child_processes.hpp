// Child programs of a test: started with posix_spawn (a fork of a multi-threaded test process
// hung under ASan), waited for with a limit (a hang is killed and reported), and their wait
// status described.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tune::testing {

// Starts `argv` (argv[0] the program's path) with this process's environment.
inline pid_t spawn(std::vector<std::string> argv) {
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
inline std::vector<int> wait_all(const std::vector<pid_t>& pids, std::chrono::seconds limit) {
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

inline std::string describe(int status) {
  if (status == -1) return "hung (killed)";
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "exit " + std::to_string(WEXITSTATUS(status));
}

}  // namespace tune::testing
