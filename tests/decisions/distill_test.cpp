// `tune distill`'s pure logic (tools/distill) on synthetic tables whose answer is known.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "distill/decision_table.hpp"
#include "distill/distill_emit.hpp"
#include "distill/distill_fit.hpp"

namespace {

using namespace tune;
using namespace tune::distill;

CacheRow row(const std::string& key, const std::string& config, double median_ns,
             StatusCode status = StatusCode::ok) {
  CacheRow r;
  r.key = {"k", 7, key, "dev|1", "tool|1"};
  r.result.config = config;
  r.result.status = status;
  r.result.reason = status == StatusCode::ok ? "" : "failed";
  r.result.stats = {10, median_ns, median_ns, median_ns, median_ns, median_ns, median_ns};
  r.result.unix_time = 1'700'000'000;
  return r;
}

std::vector<std::size_t> all_keys(const DecisionTable& t) {
  std::vector<std::size_t> keys(t.keys.size());
  std::iota(keys.begin(), keys.end(), std::size_t{0});
  return keys;
}

// Two regimes split at n = 4096: "small" wins up to it, "large" beyond (each 4x off in the
// other regime); "middle" is 1.5x of the winner on the small keys and 1.01x on the large ones
// (the best single config by geometric mean, 1.26, and greedy's first pick), "steady" 1.3x
// everywhere (the best by worst case).
std::vector<CacheRow> two_regimes() {
  std::vector<CacheRow> rows;
  for (long long n = 256; n <= 65536; n *= 2) {
    const std::string key = "n=" + std::to_string(n) + ";f32,f32";
    const double t = static_cast<double>(n);
    const bool small = n <= 4096;
    rows.push_back(row(key, "BLOCK=small", small ? t : 4 * t));
    rows.push_back(row(key, "BLOCK=large", small ? 4 * t : t));
    rows.push_back(row(key, "BLOCK=middle", small ? 1.5 * t : 1.01 * t));
    rows.push_back(row(key, "BLOCK=steady", 1.3 * t));
  }
  return rows;
}

// The fit of every key of `t` with `k` configurations (and `o`'s other options).
Result<Distilled> fit_all(const DecisionTable& t, std::size_t k, FitOptions o = {}) {
  o.configs = k;
  return fit(t, all_keys(t), o);
}

std::size_t config_index(const DecisionTable& t, const std::string& text) {
  for (std::size_t i = 0; i < t.configs.size(); ++i)
    if (t.configs[i] == text) return i;
  FAIL("no config " << text);
  return 0;
}

}  // namespace

TEST_CASE("key text: named values before the semicolon, the types after it as one field") {
  const auto f = key_fields("M=4096,N=64;f32,f32,f32");
  REQUIRE(f.size() == 3);
  CHECK(f[0].name == "M");
  CHECK(f[0].value == "4096");
  CHECK(f[1].name == "N");
  CHECK(f[2].name == "types");
  CHECK(f[2].value == "f32,f32,f32");
  const auto g = key_fields("7,x=a");
  REQUIRE(g.size() == 2);
  CHECK(g[0].name == "field0");
  CHECK(g[1].value == "a");
}

TEST_CASE("table: slowdowns against each key's best, constant fields dropped, unknown cells") {
  std::vector<CacheRow> rows = {row("n=1;f32", "A", 100), row("n=1;f32", "B", 150),
                                row("n=2;f32", "A", 300),
                                row("n=2;f32", "B", 0, StatusCode::launch_failed)};
  auto t = decision_table(rows, "k");
  REQUIRE(t.ok());
  REQUIRE(t->features.size() == 1);
  CHECK(t->features[0].name == "n");
  CHECK(t->features[0].integral);
  REQUIRE(t->constant.size() == 1);
  CHECK(t->constant[0] == "types=f32");
  CHECK(t->keys[0].slowdown[config_index(*t, "B")] == doctest::Approx(1.5));
  CHECK(t->keys[1].slowdown[config_index(*t, "A")] == doctest::Approx(1.0));
  CHECK(std::isinf(t->keys[1].slowdown[config_index(*t, "B")]));
}

TEST_CASE("table: errors name the culprit") {
  std::vector<CacheRow> rows = {row("n=1;f32", "A", 100)};
  CHECK(decision_table(rows, "other").status().message().find("'other'") != std::string::npos);
  std::vector<CacheRow> failed = {row("n=1;f32", "A", 0, StatusCode::launch_failed)};
  CHECK(decision_table(failed, "k").status().message().find("no key with a successful") !=
        std::string::npos);
  std::vector<CacheRow> two = {row("n=1;f32", "A", 100), row("n=2;f32", "A", 100)};
  two[1].key.device = "dev|2";
  CHECK(decision_table(two, "k").status().message().find("--device") != std::string::npos);
  std::vector<CacheRow> shapes = {row("n=1;f32", "A", 100), row("m=1;f32", "A", 100)};
  CHECK(decision_table(shapes, "k").status().message().find("different fields") !=
        std::string::npos);
}

TEST_CASE("two regimes: k=2 finds both and the tree splits between them at n=4096") {
  auto t = decision_table(two_regimes(), "k");
  REQUIRE(t.ok());
  auto d = fit_all(*t, 2);
  REQUIRE(d.ok());
  REQUIRE(d->configs.size() == 2);
  CHECK(
      ((t->configs[d->configs[0]] == "BLOCK=small" && t->configs[d->configs[1]] == "BLOCK=large") ||
       (t->configs[d->configs[0]] == "BLOCK=large" && t->configs[d->configs[1]] == "BLOCK=small")));
  REQUIRE(d->nodes.size() == 3);
  CHECK(d->nodes[0].feature == 0);
  CHECK(d->nodes[0].threshold == 4096);
  const Evaluation e = evaluate(*t, *d, all_keys(*t));
  CHECK(e.geomean == doctest::Approx(1.0));
  CHECK(e.worst == doctest::Approx(1.0));
  CHECK(e.unknown == 0);
  // More configurations than needed: greedy stops once every key is at its winner.
  CHECK(fit_all(*t, 4)->configs.size() == 2);
  CHECK(best_of_set_geomean(*t, *d, all_keys(*t)) == doctest::Approx(1.0));
  // A tree of one leaf returns one configuration: the other chosen one is dropped.
  FitOptions flat;
  flat.max_depth = 0;
  auto one = fit_all(*t, 2, flat);
  REQUIRE(one.ok());
  CHECK(one->configs.size() == 1);
  CHECK(one->nodes.size() == 1);
  CHECK(one->nodes[0].leaf == 0);
}

TEST_CASE("k=1 and --single: the best single configuration by geomean, and by worst case") {
  auto t = decision_table(two_regimes(), "k");
  REQUIRE(t.ok());
  auto greedy = fit_all(*t, 1);
  REQUIRE(greedy.ok());
  CHECK(t->configs[greedy->configs.at(0)] == "BLOCK=middle");
  FitOptions o;
  o.single = true;
  CHECK(t->configs[fit_all(*t, 1, o)->configs.at(0)] == "BLOCK=middle");
  o.objective = Objective::worst;
  auto worst = fit_all(*t, 1, o);
  REQUIRE(worst.ok());
  CHECK(t->configs[worst->configs.at(0)] == "BLOCK=steady");
  CHECK(evaluate(*t, *worst, all_keys(*t)).worst == doctest::Approx(1.3));
}

TEST_CASE("fit errors: k < 1, --worst without --single") {
  auto t = decision_table(two_regimes(), "k");
  REQUIRE(t.ok());
  FitOptions o;
  o.configs = 0;
  CHECK(fit(*t, all_keys(*t), o).status().message().find("at least 1") != std::string::npos);
  o.configs = 2;
  o.objective = Objective::worst;
  CHECK(fit(*t, all_keys(*t), o).status().message().find("--single") != std::string::npos);
}

TEST_CASE("a configuration not timed at a key is never picked there while another is") {
  // A is best where timed but absent at n=3; B covers every key.
  std::vector<CacheRow> rows = {row("n=1", "A", 100), row("n=1", "B", 110), row("n=2", "A", 100),
                                row("n=2", "B", 110), row("n=3", "B", 100)};
  auto t = decision_table(rows, "k");
  REQUIRE(t.ok());
  FitOptions o;
  o.configs = 1;
  auto d = fit(*t, all_keys(*t), o);
  REQUIRE(d.ok());
  CHECK(t->configs[d->configs.at(0)] == "B");  // A alone would leave n=3 unknown
  o.configs = 2;
  o.min_leaf = 1;
  d = fit(*t, all_keys(*t), o);
  const Evaluation e = evaluate(*t, *d, all_keys(*t));
  CHECK(e.unknown == 0);
  CHECK(e.geomean == doctest::Approx(1.0));
}

TEST_CASE("held out: leave-one-out and a fraction, judged on keys the fit did not see") {
  auto t = decision_table(two_regimes(), "k");
  REQUIRE(t.ok());
  FitOptions o;
  o.configs = 2;
  auto loo = held_out(*t, o, 0, 1);
  REQUIRE(loo.ok());
  CHECK(loo->method == "leave-one-out");
  CHECK(loo->eval.keys == t->keys.size());
  // Held out, a key at the regimes' border can fall on the wrong side: 4x at worst.
  CHECK(loo->eval.geomean >= 1.0);
  CHECK(loo->eval.worst <= 4.0 + 1e-9);
  auto part = held_out(*t, o, 0.3, 5);
  REQUIRE(part.ok());
  CHECK(part->eval.keys == 3);  // round(0.3 * 9)
  CHECK(held_out(*t, o, 1.0, 1).status().message().find("--holdout") != std::string::npos);
}

TEST_CASE("the header: a constexpr pick over the numeric fields, a varying type refused") {
  auto t = decision_table(two_regimes(), "k");
  REQUIRE(t.ok());
  FitOptions o;
  o.configs = 2;
  auto d = fit_all(*t, 2);
  REQUIRE(d.ok());
  DistillOutput out;
  out.table = &*t;
  out.fit = &*d;
  out.command = "tune distill k --configs 2";
  out.training = evaluate(*t, *d, all_keys(*t));
  auto h = header_text(out, "distilled_k");
  REQUIRE(h.ok());
  CHECK(h->find("constexpr int pick(long long n)") != std::string::npos);
  CHECK(h->find("if (n <= 4096) {") != std::string::npos);
  CHECK(h->find("// Fit on keys with types=f32,f32 only.") != std::string::npos);
  CHECK(header_text(out, "not an id").status().message().find("--namespace") != std::string::npos);

  std::vector<CacheRow> rows = {row("n=1;f32", "A", 100), row("n=1;f16", "A", 100)};
  auto typed = decision_table(rows, "k");
  REQUIRE(typed.ok());
  auto dt = fit(*typed, all_keys(*typed), o);
  REQUIRE(dt.ok());
  out.table = &*typed;
  out.fit = &*dt;
  out.training = evaluate(*typed, *dt, all_keys(*typed));
  CHECK(header_text(out, "distilled_k").status().message().find("'types' is not numeric") !=
        std::string::npos);
  CHECK(json_text(out).find("\"categorical\"") != std::string::npos);
}
