// Fault injection on `tune cache` (issue #12; label faults): inputs that are not regular
// files or are too large are refused before anything is read, and a special file or link as
// the database never hangs `tune cache list`. Each run is bounded, so a hang fails the test.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace {

using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

constexpr std::chrono::seconds kLimit(60);

TEST_CASE("faults: tune cache import refuses a directory, a device, a FIFO and a huge file") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const fs::path fifo = scratch.path() / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const fs::path huge = scratch.path() / "huge.json";
  { std::ofstream(huge.string()).put('{'); }
  fs::resize_file(huge, (64ull << 20) + 1);  // sparse: costs no disk
  struct Case {
    std::string file;
    std::string says;
  };
  const std::vector<Case> cases = {
      {scratch.path().string(), "it is a directory, not a regular file"},
      {"/dev/zero", "it is a device, not a regular file"},
      {fifo.string(), "it is a FIFO, not a regular file"},
      {huge.string(), "larger than the import limit of 64 MiB"},
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
  CHECK(refused == 4);
  CHECK_FALSE(fs::exists(cli.db_path()));  // refused before the cache was opened
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
