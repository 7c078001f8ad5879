// Search strategies over ConfigSpaces: budgets, constraints, determinism, no re-evaluation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tune/search.hpp"

namespace {

using tune::Config;
using tune::ConfigSpace;

// A 3-D bowl with its minimum at X=7, Y=3, Z=12 on a 16x8x16 grid (2048 points).
ConfigSpace bowl_space() {
  ConfigSpace s;
  std::vector<tune::Value> x, y, z;
  for (int i = 0; i < 16; ++i) x.emplace_back(std::int64_t{i});
  for (int i = 0; i < 8; ++i) y.emplace_back(std::int64_t{i});
  for (int i = 0; i < 16; ++i) z.emplace_back(std::int64_t{i});
  s.param("X", x).param("Y", y).param("Z", z);
  return s;
}

double bowl(const Config& c) {
  double dx = static_cast<double>(c.get_int("X") - 7), dy = static_cast<double>(c.get_int("Y") - 3),
         dz = static_cast<double>(c.get_int("Z") - 12);
  return 100 + dx * dx + 2 * dy * dy + 0.5 * dz * dz;
}

// Every strategy make_search knows.
const std::vector<std::string_view> kNames = tune::search_names();

}  // namespace

TEST_CASE("search: every strategy respects the evaluation budget and never re-evaluates") {
  auto space = bowl_space();
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto s = tune::make_search(name);
    REQUIRE(s != nullptr);
    CHECK(s->name() == name);
    std::set<std::string> seen;
    int calls = 0;
    tune::Objective f = [&](const Config& c) {
      ++calls;
      CHECK(seen.insert(c.to_string()).second);
      return bowl(c);
    };
    auto r = s->search(space, tune::DeviceInfo{}, f, {100, 0}, 42);
    REQUIRE(r.ok());
    CHECK(r->evaluations == 100);
    CHECK(calls == 100);
    CHECK(r->history.size() == 100);
    CHECK(r->best_value == doctest::Approx(bowl(r->best)));
  }
}

TEST_CASE("search: same seed, same path; different seed, different path") {
  auto space = bowl_space();
  for (std::string_view name : kNames) {
    if (name == "exhaustive") continue;
    CAPTURE(name);
    auto s = tune::make_search(name);
    auto a = s->search(space, {}, bowl, {60, 0}, 7);
    auto b = s->search(space, {}, bowl, {60, 0}, 7);
    auto c = s->search(space, {}, bowl, {60, 0}, 8);
    REQUIRE((a.ok() && b.ok() && c.ok()));
    CHECK(a->history == b->history);
    CHECK(a->history != c->history);
  }
}

TEST_CASE("search: constraint-rejected points are never evaluated and cost nothing") {
  auto space = bowl_space();
  space.constrain("even X",
                  [](const Config& c, const tune::DeviceInfo&) { return c.get_int("X") % 2 == 0; });
  for (std::string_view name : kNames) {
    CAPTURE(name);
    tune::Objective f = [](const Config& c) {
      CHECK(c.get_int("X") % 2 == 0);
      return bowl(c);
    };
    auto r = tune::make_search(name)->search(space, {}, f, {50, 0}, 3);
    REQUIRE(r.ok());
    CHECK(r->evaluations == 50);
    CHECK(r->accepted_points == 1024);
  }
}

TEST_CASE("search: with the whole space as budget, every strategy finds the optimum") {
  auto space = bowl_space();
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto r = tune::make_search(name)->search(space, {}, bowl, {}, 5);
    REQUIRE(r.ok());
    CHECK(r->evaluations <= 2048);
    CHECK(r->best_value == 100.0);
    CHECK(r->best.get_int("X") == 7);
  }
}

TEST_CASE("search: local strategies beat random sampling on a smooth landscape") {
  // Median over seeds of the best value after 5% of the space: a property of the
  // strategies on a deterministic objective, not a timing.
  auto space = bowl_space();
  auto median_best = [&](const char* name) {
    std::vector<double> v;
    for (std::uint64_t seed = 1; seed <= 11; ++seed)
      v.push_back(tune::make_search(name)->search(space, {}, bowl, {100, 0}, seed)->best_value);
    std::sort(v.begin(), v.end());
    return v[5];
  };
  CHECK(median_best("annealing") <= median_best("random"));
  CHECK(median_best("genetic") <= median_best("random"));
}

TEST_CASE("search: failed configurations (+inf, NaN) are never chosen") {
  auto space = bowl_space();
  tune::Objective f = [](const Config& c) {
    if (c.get_int("Y") == 3) return std::nan("");
    if (c.get_int("X") == 7) return std::numeric_limits<double>::infinity();
    return bowl(c);
  };
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto r = tune::make_search(name)->search(space, {}, f, {}, 1);
    REQUIRE(r.ok());
    CHECK(std::isfinite(r->best_value));
    CHECK(r->best.get_int("Y") != 3);
    CHECK(r->best.get_int("X") != 7);
  }
}

TEST_CASE("search: empty spaces and fully constrained spaces are clear errors") {
  ConfigSpace empty;
  auto r = tune::make_search("random")->search(empty, {}, bowl, {}, 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == tune::StatusCode::invalid_argument);
  CHECK(r.status().message().find("empty") != std::string::npos);

  auto none = bowl_space();
  none.constrain("never", [](const Config&, const tune::DeviceInfo&) { return false; });
  auto r2 = tune::make_search("genetic")->search(none, {}, bowl, {}, 1);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.status().message().find("constraints") != std::string::npos);
  CHECK(tune::make_search("no-such-strategy") == nullptr);
}

TEST_CASE("search: explicit config lists are searchable too") {
  std::vector<Config> list;
  for (int i = 0; i < 40; ++i) list.push_back(Config{{"T", std::int64_t{i}}});
  auto space = ConfigSpace::list(list);
  tune::Objective f = [](const Config& c) {
    return std::fabs(static_cast<double>(c.get_int("T")) - 17.0);
  };
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto r = tune::make_search(name)->search(space, {}, f, {}, 2);
    REQUIRE(r.ok());
    CHECK(r->best.get_int("T") == 17);
  }
}

TEST_CASE("search: search_names lists every strategy make_search makes, by its own name") {
  CHECK(kNames.size() == 7);
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto s = tune::make_search(name);
    REQUIRE(s != nullptr);
    CHECK(s->name() == name);
  }
}

TEST_CASE("search: a space where every configuration fails is searched to the budget") {
  auto space = bowl_space();
  tune::Objective f = [](const Config&) { return std::numeric_limits<double>::infinity(); };
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto r = tune::make_search(name)->search(space, {}, f, {80, 0}, 4);
    REQUIRE(r.ok());
    CHECK(r->evaluations == 80);
    CHECK(std::isinf(r->best_value));
  }
}

TEST_CASE("search: batches: the model asks in batches, the others one at a time, same path") {
  auto space = bowl_space();
  for (std::string_view name : kNames) {
    CAPTURE(name);
    auto s = tune::make_search(name);
    std::vector<std::size_t> sizes;
    tune::BatchObjective batch = [&](const std::vector<Config>& configs) {
      sizes.push_back(configs.size());
      std::vector<double> out;
      for (const Config& c : configs) out.push_back(bowl(c));
      return out;
    };
    auto a = s->search_batches(space, {}, batch, {90, 0}, 11);
    auto b = s->search(space, {}, bowl, {90, 0}, 11);
    REQUIRE((a.ok() && b.ok()));
    CHECK(a->history == b->history);
    CHECK(a->evaluations == 90);
    const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
    if (name == "model") {
      CHECK(largest > 1);
      CHECK(largest <= 20);  // the initial design; later rounds ask for 8
    } else {
      CHECK(largest == 1);
    }
  }
  // An answer of the wrong length is the caller's mistake, named.
  tune::BatchObjective wrong = [](const std::vector<Config>&) { return std::vector<double>{}; };
  CHECK_THROWS_AS((void)tune::make_search("model")->search_batches(space, {}, wrong, {10, 0}, 1),
                  std::length_error);
  CHECK_THROWS_AS((void)tune::make_search("random")->search_batches(space, {}, wrong, {10, 0}, 1),
                  std::length_error);
}

TEST_CASE("search: the model finds the optimum of a small space in a fraction of it") {
  // A 2048-point bowl: the optimum within 150 evaluations (7%) on every seed, where random
  // sampling's chance is 7%.
  auto space = bowl_space();
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    auto r = tune::make_search("model")->search(space, {}, bowl, {150, 0}, seed);
    REQUIRE(r.ok());
    CHECK(r->best_value == 100.0);
  }
}
