// libFuzzer target: everything that parses data from outside the process into the cache.
//
// The first byte picks the parser; the rest is the input:
//   0: Config::parse (configs read back from a database or an import). A parsed config must
//      print canonically and parse back to an equal config.
//   1: cache_rows_from_json (the `tune cache import` format). Accepted rows must survive a
//      round trip through cache_rows_to_json unchanged in number.
//   2: SqliteStore::import_json into an in-memory database, then load every imported key:
//      what import accepted, load must return.
//   3: the input as a damaged tune.db (in a scratch directory): SqliteStore opens it (moving
//      it aside and salvaging as it must), then reads every row; each row returned must pass
//      check_stored_row, and nothing may crash or throw.
// Any crash, sanitizer report or broken property aborts.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "cache/cache_json.hpp"
#include "cache/row_rules.hpp"
#include "tune/config.hpp"
#include "tune/log.hpp"
#include "tune/sqlite_store.hpp"

namespace {

void check(bool cond) {
  if (!cond) std::abort();
}

void fuzz_config(std::string_view text) {
  tune::Result<tune::Config> c = tune::Config::parse(text);
  if (!c.ok()) return;
  std::string canonical = c->to_string();
  tune::Result<tune::Config> again = tune::Config::parse(canonical);
  check(again.ok());
  check(*again == *c);
  check(again->to_string() == canonical);
}

void fuzz_json(std::string_view text) {
  std::vector<std::string> problems;
  auto rows = tune::cache_rows_from_json(text, &problems);
  if (!rows.ok()) return;
  std::string out = tune::cache_rows_to_json(*rows);
  std::vector<std::string> problems2;
  auto back = tune::cache_rows_from_json(out, &problems2);
  check(back.ok());
  check(back->size() == rows->size());
  check(problems2.empty());
  for (std::size_t i = 0; i < rows->size(); ++i) {
    check((*back)[i].result.config == (*rows)[i].result.config);
    check((*back)[i].key.source_hash == (*rows)[i].key.source_hash);
    check((*back)[i].result.status == (*rows)[i].result.status);
  }
}

void fuzz_import(std::string_view text) {
  auto store = tune::SqliteStore::open(":memory:");
  auto stats = store->import_json(text);
  if (!stats.ok()) return;
  auto rows = store->rows();
  check(rows.ok());
  check(rows->size() == stats->added);  // an empty store: every accepted row is new
}

void fuzz_database(std::string_view bytes) {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/fuzz-tune-db-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    check(d != nullptr);
    return std::string(d);
  }();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    std::filesystem::remove_all(e.path(), ec);
  const std::string path = dir + "/tune.db";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  for (tune::CacheMode mode : {tune::CacheMode::readonly, tune::CacheMode::readwrite}) {
    auto store = tune::SqliteStore::open(path, {mode});
    auto rows = store->rows();
    if (!rows.ok()) continue;
    for (const tune::CacheRow& r : *rows) {
      check(tune::check_stored_row(r.result).ok());
      for (const tune::StoredResult& again : store->load(r.key))
        check(tune::check_stored_row(again).ok());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Warnings about rejected rows are expected by the thousand: keep the output readable.
  tune::set_log_sink([](tune::LogLevel, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0:
      fuzz_config(text);
      break;
    case 1:
      fuzz_json(text);
      break;
    case 2:
      fuzz_import(text);
      break;
    default:
      fuzz_database(text);
      break;
  }
  return 0;
}
