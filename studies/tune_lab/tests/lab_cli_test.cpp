// tune-lab's commands refuse what they cannot do, with a message and a non-zero exit, before
// any device work (label core; no device needed). Real processes with a scratch
// TUNE_CACHE_DIR (tests/tools/tune_process.hpp, its program tune-lab here).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace {

using tune::testing::check_mistakes;
using tune::testing::MistakeCase;
using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

TEST_CASE("tune-lab stability, flush-check and turns: user mistakes exit non-zero with a message") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::vector<MistakeCase> cases = {
      {{}, "subcommand is required"},
      // Both open their device as `tune` does (open_cli_device), named as tune-lab's commands.
      {{"stability", "--device", "bogus"},
       "tune-lab stability: not_found: backend 'bogus' is not compiled"},
      {{"stability", "--sustain-ms", "-3"}, "--sustain-ms"},
      {{"stability", "--sustain-pairs", "0"}, "--sustain-pairs"},
      {{"stability", "--reference-passes", "1"}, "--reference-passes"},
      {{"stability", "--judge-pairs", "-1"}, "--judge-pairs"},
      {{"stability", "--judge-each-pairs", "-1"}, "--judge-each-pairs"},
      {{"stability", "--tie-tolerance", "-0.1"}, "--tie-tolerance"},
      {{"stability", "--sizes", "0"}, "--sizes"},
      {{"flush-check", "--device", "nosuchbackend:3"},
       "tune-lab flush-check: not_found: backend 'nosuchbackend' is not compiled"},
      {{"turns", "--device", "bogus"},
       "tune-lab turns: not_found: backend 'bogus' is not compiled"},
      {{"turns", "--samples", "0"}, "--samples"},
      {{"turns", "--size", "0"}, "--size"},
      {{"turns", "--heat-ms", "-1"}, "--heat-ms"},
  };
  check_mistakes(cli, cases);  // and none of them touches the cache
}

TEST_CASE("tune-lab --help lists its three commands") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  const ProcessResult r = cli.run({"--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const char* sub : {"stability", "flush-check", "turns"})
    CHECK_MESSAGE(r.out.find(sub) != std::string::npos, r.describe());
}

}  // namespace
