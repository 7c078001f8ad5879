// TUNE_ASSIGN_OR_RETURN and TUNE_RETURN_IF_ERROR (tune/status.hpp).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "tune/status.hpp"

namespace {

using tune::Result;
using tune::Status;
using tune::StatusCode;

int evaluations = 0;

Result<std::unique_ptr<int>> make_int(int v) {
  ++evaluations;
  if (v < 0) return Status(StatusCode::invalid_argument, "negative: " + std::to_string(v));
  return std::make_unique<int>(v);
}

template <class K, class V>
Result<std::map<K, V>> make_map(K k, V v) {
  return std::map<K, V>{{k, v}};
}

// Declares, moves a move-only value out, and returns the error unchanged.
Result<int> twice(int v) {
  TUNE_ASSIGN_OR_RETURN(auto p, make_int(v));
  return *p * 2;
}

// Assigns to an existing variable; an expression with commas; a Status-returning function.
Status sum_into(int a, int b, int* out) {
  std::unique_ptr<int> x;
  TUNE_ASSIGN_OR_RETURN(x, make_int(a));
  TUNE_ASSIGN_OR_RETURN(auto y, make_int(b));
  TUNE_ASSIGN_OR_RETURN(auto m, make_map<std::string, int>("k", 1));
  *out = *x + *y + m.at("k");
  return {};
}

}  // namespace

TEST_CASE("TUNE_ASSIGN_OR_RETURN: the value on success, the status on error, expr once") {
  evaluations = 0;
  auto ok = twice(21);
  REQUIRE(ok.ok());
  CHECK(*ok == 42);
  CHECK(evaluations == 1);

  auto bad = twice(-1);
  REQUIRE(!bad.ok());
  CHECK(bad.status().code() == StatusCode::invalid_argument);
  CHECK(bad.status().message() == "negative: -1");

  int out = 0;
  CHECK(sum_into(2, 3, &out).ok());
  CHECK(out == 6);
  out = 0;
  const Status s = sum_into(2, -3, &out);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(out == 0);
}
