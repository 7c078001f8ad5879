// The environment variables: one table in code (tune::environment_variables), the same table
// in the guide's reference page (docs/reference/environment.md, written from the code by
// scripts/gen_reference.py), no TUNE_* variable read around it, and the readers' rules
// (booleans, unknown names).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "scoped_env.hpp"
#include "tune/environment.hpp"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The reference page's rows: `NAME` -> effect text.
std::map<std::string, std::string> reference_rows() {
  std::istringstream in(read_file(fs::path(TUNE_SOURCE_DIR) / "docs/reference/environment.md"));
  std::map<std::string, std::string> rows;
  const std::regex row(R"(^\| `(TUNE_[A-Z_]+)` \| (.*) \|$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows[m[1]] = m[2];
  }
  return rows;
}

}  // namespace

TEST_CASE("the guide's environment reference is the code's table") {
  const auto page = reference_rows();
  std::map<std::string, std::string> code;
  for (const auto& v : tune::environment_variables())
    code[std::string(v.name)] = std::string(v.effect);
  REQUIRE(!code.empty());
  CHECK(page.size() == code.size());
  for (const auto& row : code) {
    const std::string& name = row.first;  // not a structured binding: clang's doctest captures
    CAPTURE(name);
    auto it = page.find(name);
    REQUIRE_MESSAGE(it != page.end(), "docs/reference/environment.md has no row for " << name);
    CHECK(it->second == row.second);
  }
}

TEST_CASE("no TUNE_* variable is read outside the table's readers") {
  // Every getenv of a TUNE_* name goes through env_text/env_flag (which refuse names without a
  // row), and every name those are called with has a row.
  std::set<std::string> known;
  for (const auto& v : tune::environment_variables()) known.insert(std::string(v.name));
  const std::regex direct(R"(getenv\(\s*"TUNE_)");
  const std::regex through(R"(env_(?:text|flag)\(\s*"(TUNE_[A-Z_]+)\")");
  int files = 0;
  for (const char* dir : {"core", "backends", "tools", "kernels"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(TUNE_SOURCE_DIR) / dir)) {
      const auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".hpp") continue;
      ++files;
      const std::string text = read_file(e.path());
      CAPTURE(e.path().string());
      CHECK_FALSE(std::regex_search(text, direct));
      for (std::sregex_iterator it(text.begin(), text.end(), through), end; it != end; ++it)
        CHECK_MESSAGE(known.count((*it)[1]) == 1, (*it)[1] << " has no row in the table");
    }
  }
  CHECK(files > 50);
}

TEST_CASE("env_flag: booleans in any case, anything else is the fallback") {
  using tune::testing::ScopedEnv;
  for (const char* yes : {"1", "true", "YES", " on "}) {
    ScopedEnv env("TUNE_DISABLE", yes);
    CHECK(tune::env_flag("TUNE_DISABLE"));
  }
  for (const char* no : {"0", "False", "no", "OFF", ""}) {
    ScopedEnv env("TUNE_DISABLE", no);
    CHECK_FALSE(tune::env_flag("TUNE_DISABLE", false));
  }
  {
    ScopedEnv env("TUNE_DISABLE", "maybe");
    CHECK(tune::env_flag("TUNE_DISABLE", true));
    CHECK_FALSE(tune::env_flag("TUNE_DISABLE", false));
  }
  ScopedEnv unset("TUNE_DISABLE", nullptr);
  CHECK(tune::env_flag("TUNE_DISABLE", true));
}

TEST_CASE("env_text: the value or empty; a name without a row is a logic_error") {
  using tune::testing::ScopedEnv;
  {
    ScopedEnv env("TUNE_BACKEND", "vulkan");
    CHECK(tune::env_text("TUNE_BACKEND") == "vulkan");
  }
  ScopedEnv unset("TUNE_BACKEND", nullptr);
  CHECK(tune::env_text("TUNE_BACKEND").empty());
  CHECK_THROWS_AS(tune::env_text("TUNE_NO_SUCH_VARIABLE"), std::logic_error);
  CHECK_THROWS_AS(tune::env_flag("TUNE_NO_SUCH_VARIABLE"), std::logic_error);
}
