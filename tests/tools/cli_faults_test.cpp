// Fault injection on `tune cache` (label faults): inputs that are not regular files are
// refused before anything is read, a huge file is read as a stream in bounded memory, and a
// special file or link as the database never hangs `tune cache list`. Each run is bounded, so
// a hang fails the test.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "program_paths.hpp"
#include "sanitized.hpp"
#include "skip.hpp"
#include "tune_process.hpp"

namespace {

using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

constexpr std::chrono::seconds kLimit(60);

TEST_CASE("faults: tune cache import refuses a directory, a device and a FIFO") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const fs::path fifo = scratch.path() / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  struct Case {
    std::string file;
    std::string says;
  };
  const std::vector<Case> cases = {
      {scratch.path().string(), "it is a directory, not a regular file"},
      {"/dev/zero", "it is a device, not a regular file"},
      {fifo.string(), "it is a FIFO, not a regular file"},
  };
  int refused = 0;
  for (const Case& c : cases) {
    CAPTURE(c.file);
    const ProcessResult r = cli.run({"cache", "import", c.file}, kLimit);
    INFO(r.describe());
    CHECK(r.exit_code == 1);  // a clean refusal: neither an abort (134) nor a kill
    CHECK(r.err.find(c.file) != std::string::npos);
    CHECK(r.err.find(c.says) != std::string::npos);
    if (r.exit_code == 1) ++refused;
  }
  CHECK(refused == 3);
  CHECK_FALSE(fs::exists(cli.db_path()));  // refused before the cache was opened
}

TEST_CASE("faults: a huge file that is not an export is refused after its first bytes") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const fs::path huge = scratch.path() / "huge.json";
  { std::ofstream(huge.string()).put('{'); }
  fs::resize_file(huge, 4ull << 30);  // sparse: costs no disk
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = cli.run({"cache", "import", huge.string()}, kLimit);
  INFO(r.describe());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("not a JSON document") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

// A run of `tune` measured by the kernel: its exit code and peak resident memory (wait4's
// ru_maxrss), in the scratch cache of `cli`'s layout.
struct Measured {
  int exit_code = -1;
  long max_rss_kib = 0;
  std::string err;
};

Measured run_measured(const ScratchDir& scratch, const TuneCli& cli,
                      const std::vector<std::string>& args) {
  const fs::path err = scratch.path() / "measured-stderr.txt";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("TUNE_CACHE_DIR", cli.cache_dir().c_str(), 1);
    ::setenv("HOME", cli.home().c_str(), 1);
    ::unsetenv("TUNE_CACHE");
    ::unsetenv("XDG_CACHE_HOME");
    const int out_fd = ::open("/dev/null", O_WRONLY);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) _exit(126);
    std::vector<std::string> argv_s{tune_test_programs::tune_exe};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(tune_test_programs::tune_exe, argv.data());
    _exit(127);
  }
  Measured m;
  int status = 0;
  struct rusage ru {};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  for (;;) {
    const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
    REQUIRE(w >= 0);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.max_rss_kib = ru.ru_maxrss;
  m.err = tune::testing::read_text(err);
  return m;
}

// Writes a valid export of `rows` rows, shaped like `tune cache export`'s output (indented,
// members sorted), over 10 keys; returns its size in bytes.
std::uintmax_t write_export(const fs::path& file, std::size_t rows) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << "{\n  \"format\": \"libtune-cache\",\n  \"rows\": [";
  std::string buf;
  char row[1024];
  for (std::size_t i = 0; i < rows; ++i) {
    const double median = 1000.0 + static_cast<double>(i % 997);
    const int n = std::snprintf(
        row, sizeof row,
        "%s\n    {\n      \"config\": \"BM=%zu,NAME=\\\"padding-padding\\\"\",\n"
        "      \"device\": \"simulated|sim|s1|1.0\",\n      \"kernel\": \"stream_kernel\",\n"
        "      \"key\": \"n=%zu|f32\",\n      \"reason\": \"\",\n"
        "      \"source_hash\": \"0xfeedfacecafebeef\",\n      \"stats\": {\n"
        "        \"count\": 40,\n        \"max\": %.17g,\n        \"mean\": %.17g,\n"
        "        \"median\": %.17g,\n        \"min\": %.17g,\n        \"p20\": %.17g,\n"
        "        \"p80\": %.17g\n      },\n      \"status\": \"ok\",\n"
        "      \"toolchain\": \"simc 1|libtune 0.1.0\",\n      \"unix_time\": 1700000000\n    }",
        i == 0 ? "" : ",", i / 10, i % 10, median * 1.31, median * 1.01, median, median * 0.91,
        median * 0.95, median * 1.07);
    REQUIRE(n > 0);
    buf.append(row, static_cast<std::size_t>(n));
    if (buf.size() > (1u << 20)) {
      out << buf;
      buf.clear();
    }
  }
  out << buf << "\n  ],\n  \"version\": 1\n}\n";
  out.close();
  REQUIRE(out.good());
  return fs::file_size(file);
}

TEST_CASE("faults: tune cache import streams: peak memory does not grow with the file") {
#if defined(TUNE_TEST_SANITIZED)
  TUNE_SKIP(
      "built with a sanitizer: its allocator (AddressSanitizer's quarantine) holds freed memory, "
      "so the peak says nothing about the import's own (measured in the other presets)");
#endif
  ScratchDir scratch;
  TuneCli cli(scratch);
  // A valid export of kLargeRows rows (the size of a 100 MB export), imported whole; and a
  // small one, whose peak is the baseline of a process that imports anything.
  const std::size_t kSmallRows = 1000;
  const std::size_t kLargeRows = TUNE_IMPORT_TEST_ROWS;
  const fs::path small = scratch.path() / "small.json";
  const fs::path large = scratch.path() / "large.json";
  const std::uintmax_t small_bytes = write_export(small, kSmallRows);
  const std::uintmax_t large_bytes = write_export(large, kLargeRows);
  const Measured s = run_measured(scratch, cli, {"cache", "import", small.string()});
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  fs::remove_all(cli.cache_dir());
  const auto start = std::chrono::steady_clock::now();
  const Measured l = run_measured(scratch, cli, {"cache", "import", large.string()});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(l.err);
  REQUIRE(l.exit_code == 0);
  const long growth_kib = l.max_rss_kib - s.max_rss_kib;
  MESSAGE("import peak RSS: " << s.max_rss_kib / 1024 << " MiB for " << small_bytes / 1024
                              << " KiB (" << kSmallRows << " rows), " << l.max_rss_kib / 1024
                              << " MiB for " << large_bytes / (1024 * 1024) << " MiB ("
                              << kLargeRows << " rows, " << seconds << " s)");
  CHECK(large_bytes > 64ull << 20);  // beyond the former 64 MiB cap
  CHECK(growth_kib < 32 * 1024);     // not 130 bytes per byte: a bound of its own
  // Every row is there.
  const ProcessResult list = cli.run({"cache", "list", "--json"}, kLimit);
  REQUIRE(list.exit_code == 0);
  const nlohmann::json entries = nlohmann::json::parse(list.out);
  std::size_t stored = 0;
  for (const auto& e : entries) stored += e.at("rows").get<std::size_t>();
  CHECK(entries.size() == 10);
  CHECK(stored == kLargeRows);
}

TEST_CASE("faults: tune cache list on a FIFO or a dangling link as the database") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  fs::create_directories(cli.cache_dir());
  REQUIRE(::mkfifo(cli.db_path().c_str(), 0644) == 0);
  ProcessResult r = cli.run({"cache", "list"}, kLimit);
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find(cli.db_path().string() + " is a FIFO") != std::string::npos);
  fs::remove(cli.db_path());
  const fs::path target = scratch.path() / "not-created";
  fs::create_symlink(target, cli.db_path());
  r = cli.run({"cache", "list"}, kLimit);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("symbolic link") != std::string::npos);
  CHECK_FALSE(fs::exists(target));
}

}  // namespace
