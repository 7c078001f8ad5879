// tune-lab's research commands on the Vulkan backend (label vulkan): `stability --quality` on
// lavapipe (unless a device is asked for, see tests/support/vulkan_env.hpp), in JSON and in text.
// Every run is a real process with a scratch TUNE_CACHE_DIR (tests/tools/tune_process.hpp, its
// program tune-lab here).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "skip.hpp"
#include "tune/registry.hpp"
#include "tune_process.hpp"
#include "vulkan_env.hpp"

namespace {

using nlohmann::json;
using tune::testing::ProcessResult;
using tune::testing::ScratchDir;
using tune::testing::TuneCli;
namespace fs = std::filesystem;

// Set before any child is spawned, so every child inherits it.
const bool kOnLavapipe = tune::testing::use_lavapipe_unless_asked();

// The smallest bundled kernel: one size with --quick, 24 configs, about 1.5 s on lavapipe.
const char* const kKernel = "vector_add";

// Skips (fails in CI) when no Vulkan device opens here, as the child would see it.
void require_vulkan() {
  if (kOnLavapipe && !fs::exists(tune::testing::kLavapipeIcd)) {
    const std::string why =
        std::string("lavapipe is not installed (") + tune::testing::kLavapipeIcd + ")";
    if (tune::testing::in_ci()) FAIL(why << " (CI runs the Vulkan tests on lavapipe)");
    TUNE_SKIP(why);
  }
  const auto devices = tune::list_devices("vulkan");
  if (!devices.ok() || devices->empty()) {
    const std::string why =
        devices.ok() ? std::string("no Vulkan device") : devices.status().to_string();
    if (tune::testing::in_ci()) FAIL(why);
    TUNE_SKIP(why);
  }
}

TEST_CASE("tune-lab stability --quality: every pick compared with an exhaustive reference") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan();
  const ProcessResult r = cli.run({"stability",
                                   "--device",
                                   "vulkan",
                                   "--kernel",
                                   kKernel,
                                   "--quick",
                                   "--runs",
                                   "2",
                                   "--quality",
                                   "--heat-ms",
                                   "20",
                                   "--json",
                                   "--reference-passes",
                                   "3",
                                   "--judge-pairs",
                                   "2",
                                   "--judge-each-pairs",
                                   "2",
                                   "--seed",
                                   "18446744073709551557"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const json j = json::parse(r.out);
  // The orders' seed, as given, as text (a JSON reader may round numbers above 2^53).
  CHECK(j["seed"] == "18446744073709551557");
  REQUIRE(j["keys"].size() == 1);
  const json& key = j["keys"][0];
  CHECK(key["kernel"] == kKernel);
  // The reference timed every candidate (24 for vector_add), each with a positive median.
  CHECK(key["reference_ns"].size() == 24);
  double fastest = 1e300;
  for (const auto& ref : key["reference_ns"].items()) {
    const double ns = ref.value().get<double>();
    CHECK(ns > 0);
    fastest = std::min(fastest, ns);
  }
  // Each median is the mean of its passes (3 asked for, rounded up to whole pairs: 4); the
  // spread is the largest difference between a candidate's slowest and fastest pass over its
  // mean among those within 5% of the fastest.
  REQUIRE(key["reference_passes_ns"].size() == 24);
  double spread = 0;
  for (const auto& ref : key["reference_passes_ns"].items()) {
    const std::vector<double> passes = ref.value().get<std::vector<double>>();
    REQUIRE(passes.size() == 4);
    const double mean = key["reference_ns"][ref.key()].get<double>();
    CHECK(mean == doctest::Approx((passes[0] + passes[1] + passes[2] + passes[3]) / 4));
    const double lo = *std::min_element(passes.begin(), passes.end());
    const double hi = *std::max_element(passes.begin(), passes.end());
    if (mean <= 1.05 * fastest) spread = std::max(spread, (hi - lo) / mean);
  }
  CHECK(key["reference_pass_spread"].get<double>() == doctest::Approx(spread));
  // One ratio per run, each the pick's reference median over the fastest: at least 1.
  REQUIRE(key["pick_ratios"].size() == 2);
  int wrong = 0;
  for (const auto& ratio : key["pick_ratios"]) {
    CHECK(ratio.get<double>() >= 1.0);
    wrong += ratio.get<double>() > 1.02 ? 1 : 0;
  }
  CHECK(key["wrong_picks"] == wrong);  // lavapipe's noise may make picks wrong; the count is right
  // Each run's tuning time; no sustained turns on a CPU device (DeviceInfo::power_settle_ms 0).
  REQUIRE(key["tune_ms"].size() == 2);
  for (const auto& ms : key["tune_ms"]) CHECK(ms.get<double>() > 0);
  CHECK(key["sustained_runs"] == 0);
  CHECK(key["sustained_turns"] == nlohmann::json::array({0, 0}));
  // No structured bindings here: clang cannot capture them in CHECK_MESSAGE's lambda.
  for (const auto& winner : key["winners"].items())
    CHECK_MESSAGE(key["reference_ns"].contains(winner.key()), winner.key());
  // The judge: every pick and the reference's three fastest, each in 2 x 2 rounds; its time the
  // mean of its pair means; each run's pick over the fastest of them.
  const json& judge = key["judge"];
  std::set<std::string> expected;
  std::vector<std::pair<double, std::string>> by_time;
  for (const auto& ref : key["reference_ns"].items())
    by_time.emplace_back(ref.value().get<double>(), ref.key());
  std::sort(by_time.begin(), by_time.end());
  for (std::size_t i = 0; i < 3 && i < by_time.size(); ++i) expected.insert(by_time[i].second);
  for (const auto& winner : key["winners"].items()) expected.insert(winner.key());
  std::set<std::string> contenders;
  for (const auto& c : judge["rounds_ns"].items()) contenders.insert(c.key());
  CHECK(contenders == expected);
  double judged_fastest = 1e300;
  for (const auto& c : judge["rounds_ns"].items()) {
    const json& rounds = c.value();
    REQUIRE(rounds.size() == 4);
    const double mean = (rounds[0].get<double>() + rounds[1].get<double>() +
                         rounds[2].get<double>() + rounds[3].get<double>()) /
                        4;
    CHECK(judge["ns"][c.key()].get<double>() == doctest::Approx(mean));
    judged_fastest = std::min(judged_fastest, mean);
  }
  std::vector<double> want_ratios, got_ratios;
  for (const auto& winner : key["winners"].items())
    for (int n = 0; n < winner.value().get<int>(); ++n)
      want_ratios.push_back(judge["ns"][winner.key()].get<double>() / judged_fastest);
  int judged_wrong = 0;
  for (const auto& ratio : judge["pick_ratios"]) {
    got_ratios.push_back(ratio.get<double>());
    judged_wrong += ratio.get<double>() > 1.02 ? 1 : 0;
  }
  std::sort(want_ratios.begin(), want_ratios.end());
  std::sort(got_ratios.begin(), got_ratios.end());
  REQUIRE(got_ratios.size() == want_ratios.size());
  for (std::size_t i = 0; i < got_ratios.size(); ++i)
    CHECK(got_ratios[i] == doctest::Approx(want_ratios[i]));
  CHECK(judge["wrong_picks"] == judged_wrong);
  CHECK(judge["pair_spread"].get<double>() >= 0);
  REQUIRE(judge["pick_ratios_lower"].size() == 2);
  // The judges right after each run: that run's pick and the reference's three fastest, each
  // in 2 x 2 rounds; the pick's mean over the fastest mean, and a lower bound below it.
  REQUIRE(key["picks"].size() == 2);
  const json& each = key["judge_each"];
  REQUIRE(each["rounds_ns"].size() == 2);
  REQUIRE(each["pick_ratios"].size() == 2);
  REQUIRE(each["pick_ratios_lower"].size() == 2);
  int each_wrong = 0, each_shown = 0;
  for (std::size_t run = 0; run < 2; ++run) {
    const std::string pick = key["picks"][run].get<std::string>();
    std::set<std::string> want = {pick};
    for (std::size_t i = 0; i < 3 && i < by_time.size(); ++i) want.insert(by_time[i].second);
    std::set<std::string> got;
    double fastest_mean = 1e300;
    for (const auto& c : each["rounds_ns"][run].items()) {
      got.insert(c.key());
      REQUIRE(c.value().size() == 4);
      double sum = 0;
      for (const auto& ns : c.value()) sum += ns.get<double>();
      fastest_mean = std::min(fastest_mean, sum / 4);
    }
    CHECK(got == want);
    double pick_sum = 0;
    for (const auto& ns : each["rounds_ns"][run][pick]) pick_sum += ns.get<double>();
    const double ratio = each["pick_ratios"][run].get<double>();
    CHECK(ratio == doctest::Approx(pick_sum / 4 / fastest_mean));
    CHECK(each["pick_ratios_lower"][run].get<double>() <= ratio + 1e-12);
    each_wrong += ratio > 1.02 ? 1 : 0;
    each_shown += each["pick_ratios_lower"][run].get<double>() > 1.02 ? 1 : 0;
  }
  CHECK(each["wrong_picks"] == each_wrong);
  CHECK(each["shown_wrong"] == each_shown);
  // One map of sustained medians per run; on lavapipe (a CPU device: no sustained turns) empty.
  REQUIRE(key["sustained_medians_ns"].size() == 2);
  REQUIRE(key["sustained_order"].size() == 2);
  for (std::size_t run = 0; run < 2; ++run) {  // the same contenders, round by round
    std::set<std::string> named;
    for (const auto& round : key["sustained_order"][run])
      for (const auto& name : round) named.insert(name.get<std::string>());
    std::set<std::string> timed;
    for (const auto& c : key["sustained_medians_ns"][run].items()) timed.insert(c.key());
    CHECK(named == timed);
  }
  if (kOnLavapipe)
    CHECK(key["sustained_medians_ns"] == json::array({json::object(), json::object()}));
  CHECK_FALSE(fs::exists(cli.db_path()));  // stability never writes the database
}

TEST_CASE("tune-lab stability --quality in text: both counts of wrong picks, the judge's line") {
  ScratchDir scratch;
  TuneCli cli(scratch);
  require_vulkan();
  const ProcessResult r =
      cli.run({"stability", "--device", "vulkan", "--kernel", kKernel, "--quick", "--runs", "2",
               "--quality", "--judge-pairs", "1", "--judge-each-pairs", "1"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  // The orders' seed, drawn afresh (no --seed), is printed so that a run can be repeated.
  CHECK_MESSAGE(r.out.find("turn orders from --seed ") != std::string::npos, r.out);
  CHECK_MESSAGE(
      r.out.find("wrong picks (> 2% slower than the reference's fastest): ") != std::string::npos,
      r.out);
  CHECK_MESSAGE(
      r.out.find("wrong picks (> 2% slower than the fastest, head to head): ") != std::string::npos,
      r.out);
  CHECK_MESSAGE(r.out.find("head to head with ") != std::string::npos, r.out);
  CHECK_MESSAGE(
      r.out.find("judged right after each run: picks > 2% from the fastest: ") != std::string::npos,
      r.out);
  CHECK_MESSAGE(r.out.find("wrong picks (> 2% slower than the fastest, judged right after each "
                           "run): ") != std::string::npos,
                r.out);
}

}  // namespace
