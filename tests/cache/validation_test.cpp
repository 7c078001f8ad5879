// Rows read back from a store are checked against the kernel's declared space before use.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "cache/cache_validation.hpp"
#include "cache_test_util.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

ConfigSpace product_space() {
  ConfigSpace s;
  s.param("BM", {32, 64, 128});
  s.param("SPLIT", std::vector<Value>{Value{true}, Value{false}});
  s.param("LAYOUT", std::vector<Value>{Value{std::string("tn")}, Value{std::string("nn")}});
  return s;
}

std::string message_of(const StoredResult& r, const ConfigSpace& space) {
  auto v = validate_row(r, space);
  return v.ok() ? std::string("ok") : v.status().message();
}

TEST_CASE("a declared point passes and comes back parsed and canonical") {
  ConfigSpace space = product_space();
  Config c;
  c.set("LAYOUT", "tn").set("BM", 64).set("SPLIT", Value{true});
  auto v = validate_row(ok_row(c.to_string(), 10.0), space);
  REQUIRE(v.ok());
  CHECK(v->config == c);
  CHECK(v->row.config == c.to_string());
}

TEST_CASE("undeclared parameters, wrong types and values outside the domain are rejected") {
  ConfigSpace space = product_space();
  auto text = [](Config c) { return c.to_string(); };
  Config base;
  base.set("BM", 64).set("SPLIT", Value{true}).set("LAYOUT", "tn");

  Config extra = base;
  extra.set("EVIL", "-DSYSTEM=1");
  CHECK(message_of(ok_row(text(extra), 1000.0), space).find("'EVIL' is not declared") !=
        std::string::npos);

  Config wrong_type = base;
  wrong_type.set("BM", "64");  // a string where an integer is declared
  CHECK(message_of(ok_row(text(wrong_type), 1000.0), space).find("'BM' is string") !=
        std::string::npos);

  Config flag_as_int = base;
  flag_as_int.set("SPLIT", 1);
  CHECK(message_of(ok_row(text(flag_as_int), 1000.0), space).find("declared boolean") !=
        std::string::npos);

  Config outside = base;
  outside.set("BM", 96);
  CHECK(message_of(ok_row(text(outside), 1000.0), space).find("not in its domain") !=
        std::string::npos);

  Config bad_string = base;
  bad_string.set("LAYOUT", "tn);system(\"rm\")");
  CHECK(message_of(ok_row(text(bad_string), 1000.0), space).find("not in its domain") !=
        std::string::npos);

  Config missing;
  missing.set("BM", 64);  // every parameter declared, but not a point: SPLIT/LAYOUT missing
  CHECK(message_of(ok_row(text(missing), 1000.0), space) != "ok");

  CHECK(message_of(ok_row("BM=64,,,", 1000.0), space).find("does not parse") != std::string::npos);
}

TEST_CASE("a list space accepts only its listed configs") {
  ConfigSpace space = ConfigSpace::list({Config{{"BM", 64}}, Config{{"BM", 128}}});
  CHECK(message_of(ok_row("BM=64", 1000.0), space) == "ok");
  CHECK(message_of(ok_row("BM=32", 1000.0), space).find("not in the kernel's config list") !=
        std::string::npos);
}

TEST_CASE("failure rows pass with infinite medians; ok rows need sane statistics") {
  ConfigSpace space = ConfigSpace::list({Config{{"BM", 64}}});
  StoredResult fail;
  fail.config = "BM=64";
  fail.status = StatusCode::compile_error;
  fail.stats.median = std::numeric_limits<double>::infinity();
  CHECK(message_of(fail, space) == "ok");
  StoredResult bad = ok_row("BM=64", 10.0);
  bad.stats.median = std::numeric_limits<double>::infinity();
  CHECK(message_of(bad, space) != "ok");
  bad = ok_row("BM=64", 10.0);
  bad.stats.p80 = 1.0;  // below the median
  CHECK(message_of(bad, space).find("out of order") != std::string::npos);
}

TEST_CASE("validate_rows keeps good rows in order and warns once naming the kernel") {
  ConfigSpace space = ConfigSpace::list({Config{{"BM", 64}}, Config{{"BM", 128}}});
  std::vector<StoredResult> rows = {ok_row("BM=128", 5.0), ok_row("BM=7", 1000.0),
                                    ok_row("NOPE=1", 1000.0), ok_row("BM=64", 9.0),
                                    ok_row("BM=128", 6.0)};  // duplicate: first kept
  LogCapture log;
  auto kept = validate_rows(rows, space, "matmul_f32");
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].row.config == "BM=128");
  CHECK(kept[0].row.stats.median == 5.0);
  CHECK(kept[1].row.config == "BM=64");
  REQUIRE(log.warnings().size() == 1);
  CHECK(log.any_contains("matmul_f32"));
  CHECK(log.any_contains("ignored 2 stored results"));
  CHECK(log.any_contains("BM=7"));
}

TEST_CASE("no warning when every row is valid") {
  ConfigSpace space = ConfigSpace::list({Config{{"BM", 64}}});
  LogCapture log;
  CHECK(validate_rows(std::vector{ok_row("BM=64", 1000.0)}, space, "k").size() == 1);
  CHECK(log.warnings().empty());
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

TEST_CASE("heuristic parameters must equal this call's values and are not space dimensions") {
  ConfigSpace space = ConfigSpace::list({Config{{"BM", 64}}, Config{{"BM", 128}}});
  Config heur;
  heur.set("EVEN_K", Value{true});
  CHECK(validate_row(cache_test::ok_row("BM=64,EVEN_K=true", 1000.0), space, &heur).ok());
  auto other = validate_row(cache_test::ok_row("BM=64,EVEN_K=false", 1000.0), space, &heur);
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message().find("this call computes true") != std::string::npos);
  CHECK_FALSE(validate_row(cache_test::ok_row("BM=64", 1000.0), space, &heur).ok());
  CHECK_FALSE(validate_row(cache_test::ok_row("BM=32,EVEN_K=true", 1000.0), space, &heur).ok());
  // Without heuristics the extra parameter is simply undeclared.
  CHECK_FALSE(validate_row(cache_test::ok_row("BM=64,EVEN_K=true", 1000.0), space).ok());
  auto v = validate_row(cache_test::ok_row("BM=64,EVEN_K=true", 1000.0), space, &heur);
  REQUIRE(v.ok());
  CHECK(v->config.has("EVEN_K"));  // the returned config is the whole stored one
}

}  // namespace
}  // namespace tune
