// Runs the real `tune` executable as a child process, in a scratch directory, with an
// environment the test controls, and captures its exit status, stdout and stderr.
//
// The child never sees the user's cache: TUNE_CACHE_DIR points into the scratch directory,
// HOME is the scratch "home" folder and XDG_CACHE_HOME, TUNE_CACHE, TUNE_DISABLE and
// TUNE_PRINT_AUTOTUNING are removed. Device selection variables (TUNE_DEVICE,
// TUNE_VULKAN_DEVICE, VK_ICD_FILENAMES, ...) are passed through, so the Vulkan tests follow
// tests/support/vulkan_env.hpp (lavapipe unless a device is asked for).
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "program_paths.hpp"

extern char** environ;

namespace tune::testing {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE_MESSAGE(out.good(), "cannot write " << p);
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tune-cli-test-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    REQUIRE_MESSAGE(made != nullptr, "mkdtemp " << templ << ": " << std::strerror(errno));
    path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
  std::string command;
  // What doctest prints when an assertion about this run fails.
  std::string describe() const {
    return "$ " + command + "\n[exit " + std::to_string(exit_code) + "]\n--- stdout ---\n" + out +
           "--- stderr ---\n" + err;
  }
  bool has(const std::string& text) const {
    return out.find(text) != std::string::npos || err.find(text) != std::string::npos;
  }
};

// The `tune` program with its own cache directory (<scratch>/cache) and home (<scratch>/home),
// without bucket edge checks (TUNE_BUCKET_EDGES=0; set_env turns them back on): these tests
// check the CLI, and on a loaded machine an edge check may split a bucket after the tuning,
// so that the next process meets a key with no rows and tunes again (the edges' own tests:
// label decisions). Edge checks are on when the variable is unset.
class TuneCli {
 public:
  explicit TuneCli(const ScratchDir& scratch)
      : scratch_(scratch.path()), cache_dir_(scratch.path() / "cache") {
    fs::create_directories(scratch_ / "home");
    for (char** e = environ; *e != nullptr; ++e) {
      std::string kv = *e;
      const auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      env_[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const char* v : {"TUNE_CACHE", "TUNE_DISABLE", "TUNE_PRINT_AUTOTUNING",
                          "TUNE_BUCKET_EDGES", "XDG_CACHE_HOME"})
      env_.erase(v);
    env_["TUNE_CACHE_DIR"] = cache_dir_.string();
    env_["HOME"] = (scratch_ / "home").string();
    env_["TUNE_BUCKET_EDGES"] = "0";
  }

  const fs::path& cache_dir() const noexcept { return cache_dir_; }
  fs::path db_path() const { return cache_dir_ / "tune.db"; }
  fs::path home() const { return scratch_ / "home"; }
  void set_env(const std::string& name, const std::string& value) { env_[name] = value; }
  void unset_env(const std::string& name) { env_.erase(name); }

  // Runs `tune args...` with stdin from /dev/null; waits for it (killing it after
  // `limit` so that a hang fails the test instead of stalling CTest).
  ProcessResult run(const std::vector<std::string>& args,
                    std::chrono::seconds limit = std::chrono::seconds(300)) const {
    return run_program(tune_test_programs::tune_exe, args, limit);
  }

  // The same for another program (`exe`: a path), in the same environment: a helper that
  // runs `tune` under a pseudo-terminal, a schema validator.
  ProcessResult run_program(const std::string& exe, const std::vector<std::string>& args,
                            std::chrono::seconds limit = std::chrono::seconds(300)) const {
    ProcessResult r;
    r.command = exe;
    for (const auto& a : args) r.command += " " + a;
    const fs::path out = scratch_ / "stdout.txt";
    const fs::path err = scratch_ / "stderr.txt";

    std::vector<std::string> argv_s{exe};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (const auto& [k, v] : env_) env_s.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    REQUIRE_MESSAGE(rc == 0, "posix_spawn " << exe << ": " << std::strerror(rc));

    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    bool killed = false;
    for (;;) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      REQUIRE_MESSAGE(w == 0, "waitpid: " << std::strerror(errno));
      if (!killed && std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        killed = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_text(out);
    r.err = read_text(err);
    REQUIRE_MESSAGE(!killed, "killed after " << limit.count() << " s\n" << r.describe());
    return r;
  }

 private:
  fs::path scratch_;
  fs::path cache_dir_;
  std::map<std::string, std::string> env_;
};

// A command line that must fail, and text its stderr must contain.
struct MistakeCase {
  std::vector<std::string> args;
  std::string message;
};

// Every case exits non-zero with its message on stderr, and none of them writes the cache.
inline void check_mistakes(const TuneCli& cli, const std::vector<MistakeCase>& cases) {
  for (const MistakeCase& c : cases) {
    const ProcessResult r = cli.run(c.args);
    CAPTURE(r.command);
    CHECK_MESSAGE(r.exit_code != 0, r.describe());
    CHECK_MESSAGE(r.err.find(c.message) != std::string::npos, r.describe());
  }
  CHECK_FALSE(fs::exists(cli.db_path()));
}

}  // namespace tune::testing
