// A search's convergence as `tune run-space`, `tune demo` and the HTML report show it (label
// core, no device): the improvements of the best median in evaluation order (failed
// configurations count as evaluations), the one-line text, and the report's SVG with its
// numbers as data-* attributes; nothing for a tuning that timed every candidate, or for keys
// read back from the cache.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "convergence.hpp"
#include "html_report.hpp"
#include "time_text.hpp"

namespace {

tune::ConfigResult result(int bm, double median_ns) {
  tune::ConfigResult r;
  r.config = tune::Config{{"BM", bm}};
  r.stats.median = median_ns;
  r.stats.count = 10;
  if (!std::isfinite(median_ns)) r.status = tune::Status(tune::StatusCode::launch_failed, "bad");
  return r;
}

// Six evaluations: 5 us, 7, 3, a failure, 4, 2: improvements at #1, #3 and #6.
tune::TuningReport searched() {
  tune::TuningReport r;
  r.kernel = "k";
  r.key = "n=1";
  r.device = "sim";
  r.strategy = "annealing";
  const double us[] = {5, 7, 3, INFINITY, 4, 2};
  for (int i = 0; i < 6; ++i) r.results.push_back(result(16 * (i + 1), us[i] * 1000));
  r.winner = r.results.back().config;
  return r;
}

std::string page_of(const tune::TuningReport& r, bool measured) {
  tune::cli::ReportInput in;
  in.title = "t";
  tune::cli::ReportKey key;
  key.report = r;
  key.measured = measured;
  in.keys.push_back(key);
  return tune::cli::html_report(in);
}

}  // namespace

TEST_CASE("convergence: the improvements of the best so far, in evaluation order") {
  const tune::TuningReport r = searched();
  const auto steps = tune::cli::convergence_steps(r);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].evaluation == 1);
  CHECK(steps[0].best_ns == 5000);
  CHECK(steps[1].evaluation == 3);
  CHECK(steps[1].config == "BM=48");
  CHECK(steps[2].evaluation == 6);
  CHECK(steps[2].best_ns == 2000);
  using tune::cli::time_text;
  CHECK(tune::cli::convergence_text(r) == "search annealing, 6 evaluations; best so far: #1 " +
                                              time_text(5000) + ", #3 " + time_text(3000) +
                                              ", #6 " + time_text(2000));

  // Every candidate timed: no strategy, no convergence.
  tune::TuningReport all = r;
  all.strategy.clear();
  CHECK(tune::cli::convergence_steps(all).empty());
  CHECK(tune::cli::convergence_text(all).empty());

  // Nothing succeeded.
  tune::TuningReport failed = r;
  failed.results = {result(16, INFINITY)};
  CHECK(tune::cli::convergence_text(failed) ==
        "search annealing, 1 evaluation; best so far: none succeeded");
}

TEST_CASE("convergence: the text keeps the last improvements of a long search") {
  tune::TuningReport r = searched();
  r.results.clear();
  for (int i = 0; i < 20; ++i) r.results.push_back(result(i + 1, 1000.0 * (20 - i)));
  const std::string text = tune::cli::convergence_text(r);
  CHECK(text.find("(12 earlier) #13 ") != std::string::npos);
  CHECK(text.find("#20 " + tune::cli::time_text(1000)) != std::string::npos);
}

TEST_CASE("convergence: the HTML report draws it for a search measured in this process") {
  const std::string page = page_of(searched(), /*measured=*/true);
  CHECK(page.find("<h3>Search convergence</h3>") != std::string::npos);
  CHECK(page.find("<svg class=\"convergence\" data-strategy=\"annealing\" "
                  "data-evaluations=\"6\" data-improvements=\"3\" data-first-ns=\"5000\" "
                  "data-best-ns=\"2000\" data-best-at=\"6\"") != std::string::npos);
  for (const char* step : {"data-evaluation=\"1\" data-best-ns=\"5000\" data-config=\"BM=16\"",
                           "data-evaluation=\"3\" data-best-ns=\"3000\" data-config=\"BM=48\"",
                           "data-evaluation=\"6\" data-best-ns=\"2000\" data-config=\"BM=96\""})
    CHECK_MESSAGE(page.find(step) != std::string::npos, step);

  tune::TuningReport all = searched();
  all.strategy.clear();
  CHECK(page_of(all, true).find("class=\"convergence\"") == std::string::npos);
  // Keys read back from the cache keep no evaluation order: no convergence.
  CHECK(page_of(searched(), false).find("class=\"convergence\"") == std::string::npos);
}
