// An imported Kernel Tuner T1 problem tuned for real on Vulkan (label vulkan; lavapipe unless a
// device is asked for): t1_vector_add.json's GLSL kernel, its arguments filled from the T1
// Arguments, the winner's output checked against a CPU reference, and `tune run-space` doing
// the same from the command line with its HTML report.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "space_files.hpp"
#include "space_run.hpp"
#include "tune_process.hpp"
#include "vulkan_test_device.hpp"

namespace {

using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;

}  // namespace

TEST_CASE("a T1 vector add tunes on Vulkan and the winner's output is a + b") {
  auto dev = tune::testing::open_vulkan_or_skip();
  ScratchDir scratch;
  TuneCli cli(scratch);
  const tune::cli::SpaceFile space =
      tune::testing::load_example(cli, scratch, "t1_vector_add.json");
  tune::Config chosen;
  const auto host = tune::testing::tune_and_read(space, *dev, /*poisoned=*/0, &chosen);
  MESSAGE("chosen: " << chosen.to_string());
  REQUIRE(host.size() == 3);
  const auto& c = host[0];
  const auto& a = host[1];
  const auto& b = host[2];
  REQUIRE(c.size() == 100003);
  // The Random fills are in [0, 1) and differ between the two seeds.
  CHECK(a != b);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] >= 0.0f && a[i] < 1.0f && b[i] >= 0.0f && b[i] < 1.0f)) FAIL("fill at " << i);
    if (c[i] != a[i] + b[i]) FAIL("c[" << i << "] = " << c[i] << ", CPU " << a[i] + b[i]);
  }
}

TEST_CASE("tune run-space tunes the T1 vector add on Vulkan and writes the report") {
  (void)tune::testing::open_vulkan_or_skip();
  ScratchDir scratch;
  TuneCli cli(scratch);
  const std::string space = tune::testing::import_example(cli, scratch, "t1_vector_add.json");
  const std::string report = (scratch.path() / "report.html").string();
  const ProcessResult r = cli.run(
      {"run-space", space, "--device", "vulkan", "--quick", "--no-cache", "--report", report});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("chosen: block_size_x="), r.describe());
  CHECK_MESSAGE(r.has("* block_size_x="), r.describe());  // the winner's row
  const std::string page = tune::testing::read_text(report);
  CHECK(page.find("<html") != std::string::npos);
  CHECK(page.find("vector_add") != std::string::npos);
}

TEST_CASE("tune run-space --effort quick searches a larger space and shows its convergence") {
  (void)tune::testing::open_vulkan_or_skip();
  ScratchDir scratch;
  TuneCli cli(scratch);
  // t1_vector_add.json over 16 block sizes and 4 element counts: 33 valid points, more than
  // the quick effort's 30.
  nlohmann::json doc = nlohmann::json::parse(
      tune::testing::read_text(tune::testing::t1_example("t1_vector_add.json")));
  auto& params = doc["ConfigurationSpace"]["TuningParameters"];
  params[0]["Values"] = "[32*i for i in range(1, 16+1)]";
  params[1]["Values"] = "list(range(1, 5))";
  const auto t1 = scratch.path() / "wide_vector_add.json";
  tune::testing::write_text(t1, doc.dump(2));
  std::filesystem::copy_file(tune::testing::t1_example("vector_add.comp"),
                             scratch.path() / "vector_add.comp");
  const std::string space = (scratch.path() / "wide.space.json").string();
  ProcessResult r = cli.run({"import-space", t1.string(), "--out", space});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_MESSAGE(r.has("64 points, 33 valid"), r.describe());

  const std::string report = (scratch.path() / "report.html").string();
  r = cli.run({"run-space", space, "--device", "vulkan", "--quick", "--effort", "quick",
               "--no-cache", "--report", report});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  // The text keeps the last kShownSteps improvements only, so whether "#1" is printed depends
  // on how often timing noise improved the best; the page draws every step.
  CHECK_MESSAGE(r.has("search model, 30 evaluations; best so far: "), r.describe());
  const std::string page = tune::testing::read_text(report);
  CHECK(page.find("<svg class=\"convergence\"") != std::string::npos);
  CHECK(page.find("data-evaluations=\"30\"") != std::string::npos);
  CHECK(page.find("class=\"improvement\" data-evaluation=\"1\"") != std::string::npos);

  // An effort that is not one of the three is refused by the parser, naming them.
  r = cli.run({"run-space", space, "--effort", "huge", "--list"});
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(r.has("quick"), r.describe());
}
