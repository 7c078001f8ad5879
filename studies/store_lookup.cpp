// store_lookup: what a first-call lookup costs when the shared server answers it, against the
// local file (bench/RESULTS.md, "A first-call lookup served by a shared server").
//
//   store_lookup <libpq connection string> [keys (200)] [configs per key (24)]
//
// Saves `keys` keys of `configs` rows each on the server (a fresh table: the database should be
// a scratch one), then, for each key, times one load() through:
//   server, copied   SharedStore with an empty local file: the miss asks the server and copies
//                    the rows into the file (what a machine's first meeting of a key costs);
//   local file       the same SharedStore again: the rows are now in the file;
//   server alone     PostgresStore::fetch (the round trip without the copy);
//   SQLite alone     SqliteStore::load on the filled file.
// Prints the median, p90 and max per call in microseconds, and the ratio of medians to the
// local file. The Autotuner's hit path calls no store, so none of this reaches a hit.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tune/config.hpp"
#include "tune/postgres_store.hpp"
#include "tune/sqlite_store.hpp"

using namespace tune;
using Clock = std::chrono::steady_clock;

namespace {

StoreKey key_of(int k) {
  return StoreKey{"store_lookup", 0x5eedULL, "n=" + std::to_string(1024 * (k + 1)) + "|f32",
                  "cpu|study|s1|1", "study|libtune"};
}

std::vector<StoredResult> rows_of(int configs) {
  std::vector<StoredResult> rows;
  for (int c = 0; c < configs; ++c) {
    StoredResult r;
    r.config = Config().set("BM", 8 * (c + 1)).set("UNROLL", c % 4).to_string();
    const double median = 1000.0 + 17.0 * c;
    r.stats.count = 40;
    r.stats.min = median * 0.95;
    r.stats.p20 = median * 0.98;
    r.stats.median = median;
    r.stats.p80 = median * 1.02;
    r.stats.max = median * 1.1;
    r.stats.mean = median;
    rows.push_back(r);
  }
  return rows;
}

struct Summary {
  double median = 0, p90 = 0, max = 0;
};

// Times `load(k)` for every key once; microseconds per call.
Summary time_each(int keys, int expected, const std::function<std::size_t(int)>& load) {
  std::vector<double> us;
  for (int k = 0; k < keys; ++k) {
    const auto t0 = Clock::now();
    const std::size_t n = load(k);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (n != static_cast<std::size_t>(expected)) {
      std::fprintf(stderr, "key %d: %zu rows, expected %d\n", k, n, expected);
      std::exit(1);
    }
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 9 / 10], us.back()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_lookup <connection string> [keys] [configs]\n");
    return 2;
  }
  const int keys = argc > 2 ? std::atoi(argv[2]) : 200;
  const int configs = argc > 3 ? std::atoi(argv[3]) : 24;
  PostgresOptions opts;
  opts.conninfo = argv[1];
  auto server = PostgresStore::open(opts);
  const std::vector<StoredResult> rows = rows_of(configs);
  for (int k = 0; k < keys; ++k) {
    if (Status s = server->put(key_of(k), rows); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.to_string().c_str());
      return 1;
    }
  }
  const auto dir = std::filesystem::temp_directory_path() / "libtune-store-lookup";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto local = SqliteStore::open((dir / "tune.db").string());
  auto shared = SharedStore::open(local, server);

  const Summary copied =
      time_each(keys, configs, [&](int k) { return shared->load(key_of(k)).size(); });
  const Summary in_file =
      time_each(keys, configs, [&](int k) { return shared->load(key_of(k)).size(); });
  const Summary remote =
      time_each(keys, configs, [&](int k) { return server->fetch(key_of(k))->size(); });
  const Summary sqlite =
      time_each(keys, configs, [&](int k) { return local->load(key_of(k)).size(); });
  std::printf("%d keys x %d configurations, one load() per key, microseconds per call\n\n", keys,
              configs);
  std::printf("| lookup | median | p90 | max | median / local file |\n|---|---|---|---|---|\n");
  for (const auto& [name, s] : {std::pair{"server, copied into the file", copied},
                                {"local file (SharedStore)", in_file},
                                {"server alone (fetch)", remote},
                                {"SQLite alone", sqlite}})
    std::printf("| %s | %.0f | %.0f | %.0f | %.1f |\n", name, s.median, s.p90, s.max,
                s.median / in_file.median);
  std::filesystem::remove_all(dir);
  return 0;
}
