// `tune-lab stability --quality`'s judge (studies/tune_lab/stability_judge.hpp): its pure parts
// on hand-made timings. The head-to-head timing itself runs on lavapipe in
// lab_vulkan_cli_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "stability_judge.hpp"

namespace {

using tune::cli::HeadToHead;
using tune::cli::judge_contenders;
using tune::cli::pair_means;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST_CASE("judge_contenders: every pick and the reference's fastest, by reference time") {
  const std::map<std::string, double> reference = {{"a", 130}, {"b", 100}, {"c", 120},
                                                   {"d", 110}, {"e", 150}, {"f", 140}};
  // Picks within the top three are listed once; a slower pick joins them in its place.
  CHECK(judge_contenders({{"b", 7}, {"f", 3}}, reference, 3) ==
        std::vector<std::string>{"b", "d", "c", "f"});
  CHECK(judge_contenders({{"d", 10}}, reference, 3) == std::vector<std::string>{"b", "d", "c"});
  // A pick the reference has no time for (it failed there) is still judged, last.
  CHECK(judge_contenders({{"zz", 1}, {"e", 1}}, reference, 2) ==
        std::vector<std::string>{"b", "d", "e", "zz"});
  // No top: only the picks. No reference: only the picks, in text order.
  CHECK(judge_contenders({{"c", 1}, {"a", 1}}, reference, 0) == std::vector<std::string>{"c", "a"});
  CHECK(judge_contenders({{"y", 1}, {"x", 1}}, {}, 3) == std::vector<std::string>{"x", "y"});
  CHECK(judge_contenders({}, reference, 10).size() == reference.size());
}

TEST_CASE("pair_means: forward and backward rounds averaged; a failed turn drops the contender") {
  const auto pairs = pair_means({{"a", {100, 104, 98, 102}},
                                 {"b", {110, kNaN, 108, 106}},
                                 {"c", {90, 94, 96}},  // an odd round has no partner: ignored
                                 {"d", {}}});
  CHECK(pairs.size() == 2);
  CHECK(pairs.at("a") == std::vector<double>{102, 100});
  CHECK(pairs.at("c") == std::vector<double>{92});
  CHECK(pairs.count("b") == 0);
  CHECK(pairs.count("d") == 0);
}

TEST_CASE("HeadToHead::ratio: a pick over the fastest contender; NaN without a time") {
  HeadToHead h;
  h.ns = {{"a", 100}, {"b", 103}, {"c", 101}};
  CHECK(h.ratio("a") == doctest::Approx(1.0));
  CHECK(h.ratio("b") == doctest::Approx(1.03));
  CHECK(std::isnan(h.ratio("missing")));
}

TEST_CASE("HeadToHead::ratio_lower: the ratio's one-sided bound from its pairs") {
  HeadToHead h;
  // b is 3% behind a in every round: the bound is the ratio itself.
  h.rounds = {{"a", {100, 100, 100, 100}}, {"b", {103, 103, 103, 103}}};
  h.ns = {{"a", 100}, {"b", 103}};
  CHECK(h.ratio_lower("b", 0.95) == doctest::Approx(1.03));
  CHECK(h.ratio_lower("a", 0.95) == 1.0);  // the fastest itself
  // Rounds of +5% and +1% within each pair, pairs alike: the unit is the pair (a pick's two
  // turns of one pair may sit side by side), so that spread is not the judge's noise.
  h.rounds["b"] = {105, 101, 105, 101};
  CHECK(h.ratio_lower("b", 0.95) == doctest::Approx(1.03));
  // Pairs of +4% and +2%: t(1) = 6.314 x 1% below 1.03.
  h.rounds["b"] = {105, 103, 101, 103};
  CHECK(h.ratio_lower("b", 0.95) == doctest::Approx(1.03 - 6.313752 * 0.01).epsilon(1e-4).scale(0));
  // Three pairs of +5%, +2%, +2%: t(2) = 2.920 x 1% below 1.03.
  h.rounds = {{"a", std::vector<double>(6, 100)}, {"b", {106, 104, 101, 103, 103, 101}}};
  CHECK(h.ratio_lower("b", 0.95) == doctest::Approx(1.03 - 2.919986 * 0.01).epsilon(1e-4).scale(0));
  CHECK(h.ratio_lower("b", 0.95) < 1.02);                   // 3% on the mean, not shown beyond 2%
  CHECK(h.ratio_lower("b", 0.5) == doctest::Approx(1.03));  // nothing asked of the noise
  // Without a time, or with one pair: no bound.
  CHECK(std::isnan(h.ratio_lower("missing", 0.95)));
  h.rounds = {{"a", {100, 100}}, {"b", {103, 104}}};
  CHECK(std::isnan(h.ratio_lower("b", 0.95)));
}

}  // namespace
