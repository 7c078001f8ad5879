// cache_worker: one of the processes of the multi-process cache test.
//
//   cache_worker <db> <worker id> <configs> <keys>
//
// Blocks until its standard input reaches end of file (the test closes the pipe once every
// worker is started, so all begin together). Then, for each key (in an order rotated by the
// worker id), does what the Autotuner does: loads the stored rows, "measures" every config
// not stored yet (a deterministic cost, so every process agrees on the winner), saves them in
// small batches, and loads again. It checks that every config it knows of is stored exactly
// once, and prints "<key> <best config>" per key. Any libtune warning, a lost or duplicated
// row, or a disagreement is an error: exit status 1 with the reason on stderr.
//
//   cache_worker claim <db> <key> <ttl ms> release|keep
//
// Claims <key> (StoreKey of kernel "claimed"), prints "granted" or "refused" and flushes,
// waits for end of file on stdin, then releases the claim ("release") or exits holding it
// ("keep": a process that died without releasing).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tune/config.hpp"
#include "tune/log.hpp"
#include "tune/sqlite_store.hpp"

namespace {

int g_warnings = 0;

std::string config_text(int c) {
  tune::Config cfg;
  cfg.set("BM", 16 * (c + 1)).set("UNROLL", c % 4);
  return cfg.to_string();
}

// A cost with a unique minimum that depends on the key: every process computes the same.
double cost(int c, int k, int configs) { return 1000.0 + 10.0 * ((c * 7 + k * 3) % configs); }

tune::StoreKey claim_key(const std::string& key) {
  return tune::StoreKey{"claimed", 0x42, key, "sim|dev|s1|1", "simc|libtune"};
}

int claim_main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: cache_worker claim <db> <key> <ttl ms> release|keep\n");
    return 2;
  }
  auto store = tune::SqliteStore::open(argv[2]);
  const tune::StoreKey key = claim_key(argv[3]);
  bool granted = store->try_claim(key, std::chrono::milliseconds(std::atoll(argv[4])));
  std::printf("%s\n", granted ? "granted" : "refused");
  std::fflush(stdout);
  char buf[64];
  while (::read(0, buf, sizeof buf) > 0) {
  }
  if (std::string(argv[5]) == "release") store->release_claim(key);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "claim") return claim_main(argc, argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: cache_worker <db> <id> <configs> <keys>\n");
    return 2;
  }
  std::string db = argv[1];
  int id = std::atoi(argv[2]), configs = std::atoi(argv[3]), keys = std::atoi(argv[4]);
  tune::set_log_sink([](tune::LogLevel level, std::string_view msg) {
    if (level < tune::LogLevel::warning) return;
    ++g_warnings;
    std::fprintf(stderr, "worker warning: %.*s\n", static_cast<int>(msg.size()), msg.data());
  });
  // Start barrier: wait for EOF on stdin.
  char buf[64];
  while (::read(0, buf, sizeof buf) > 0) {
  }

  auto store = tune::SqliteStore::open(db);
  std::map<int, std::string> best;
  for (int j = 0; j < keys; ++j) {
    int k = (j + id) % keys;
    tune::StoreKey skey{"matmul", 0x1234, "M=N=K=" + std::to_string(64 << k), "sim|dev|s1|1",
                        "simc|libtune"};
    std::set<std::string> stored;
    for (const auto& r : store->load(skey)) stored.insert(r.config);
    std::vector<tune::StoredResult> batch;
    for (int c = 0; c < configs; ++c) {
      std::string text = config_text(c);
      if (stored.count(text)) continue;
      tune::StoredResult r;
      r.config = text;
      r.stats.count = static_cast<std::uint32_t>(10 + id);
      double m = cost(c, k, configs);
      r.stats.min = r.stats.p20 = r.stats.median = r.stats.p80 = r.stats.max = r.stats.mean = m;
      batch.push_back(r);
      if (batch.size() == 3) {
        store->save(skey, batch);
        batch.clear();
      }
    }
    if (!batch.empty()) store->save(skey, batch);

    auto rows = store->load(skey);
    std::multiset<std::string> seen;
    const tune::StoredResult* winner = nullptr;
    for (const auto& r : rows) {
      seen.insert(r.config);
      if (winner == nullptr || r.stats.median < winner->stats.median) winner = &r;
    }
    if (static_cast<int>(rows.size()) != configs) {
      std::fprintf(stderr, "worker %d key %d: %zu rows, expected %d\n", id, k, rows.size(),
                   configs);
      return 1;
    }
    for (int c = 0; c < configs; ++c) {
      if (seen.count(config_text(c)) != 1) {
        std::fprintf(stderr, "worker %d key %d: config %s stored %zu times\n", id, k,
                     config_text(c).c_str(), seen.count(config_text(c)));
        return 1;
      }
    }
    best[k] = winner->config;
  }
  for (const auto& [k, cfg] : best) std::printf("%d %s\n", k, cfg.c_str());
  return g_warnings == 0 ? 0 : 1;
}
