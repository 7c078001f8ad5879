// Fault injection: the caches under attack (issue #12). One test case per class of attack:
// the attack is made for real on files in a scratch directory, then the test checks the
// expected behaviour (a warning naming the file and the problem, tuning goes on, rows kept)
// and asserts the counts. CTest label: faults. Nothing here waits on a clock.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cache/store_schema.hpp"
#include "cache_test_util.hpp"
#include "program_paths.hpp"
#include "tune/backend/binary_cache.hpp"
#include "tune/config.hpp"
#include "tune/sqlite_store.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

std::vector<StoredResult> rows_of(int n, double base = 1000.0) {
  std::vector<StoredResult> rows;
  for (int i = 0; i < n; ++i) rows.push_back(ok_row("BM=" + std::to_string(i), base + i));
  return rows;
}

std::size_t count_rows(const std::string& db) {
  RawDb raw(db, /*readonly=*/true);
  return static_cast<std::size_t>(std::stoul(raw.scalar("SELECT count(*) FROM results")));
}

std::vector<std::string> aside_files(const TempDir& dir) {
  std::vector<std::string> out;
  for (const auto& f : cache_test::files_starting(dir.path(), "tune.db.corrupt-"))
    if (f.find("-wal") == std::string::npos && f.find("-shm") == std::string::npos)
      out.push_back(f);
  return out;
}

void make_fifo(const std::string& path) { REQUIRE(::mkfifo(path.c_str(), 0644) == 0); }

// Runs `fn` in a forked child (same user) and returns what it reported.
std::string run_in_child(const std::function<std::string()>& fn) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string r = fn();
    if (::write(fds[1], r.data(), r.size()) != static_cast<ssize_t>(r.size())) std::_Exit(3);
    std::_Exit(0);
  }
  int status = 0;
  std::string out = cache_test::child_report(fds, pid, &status);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

// ---------------------------------------------------------------------------------------
// 1. Symbolic links are never followed out of the cache directory.

TEST_CASE("faults: a dangling tune.db link is refused, its target never created") {
  TempDir dir, elsewhere;
  const std::string path = dir.file("tune.db");
  const std::string target = elsewhere.file("created-by-libtune");
  REQUIRE(::symlink(target.c_str(), path.c_str()) == 0);
  LogCapture log;
  auto store = SqliteStore::open(path);
  INFO(log.all());
  REQUIRE(log.warnings().size() == 1);
  CHECK(log.any_contains(path + " is a symbolic link to " + target));
  CHECK(log.any_contains("refused"));
  CHECK_FALSE(fs::exists(target));
  // Tuning goes on in a fresh database at the path, a regular file now.
  store->save(test_key(), rows_of(3));
  CHECK(store->load(test_key()).size() == 3);
  CHECK(fs::is_regular_file(fs::symlink_status(path)));
  CHECK_FALSE(fs::exists(target));
  CHECK(aside_files(dir).size() == 1);  // the link itself, renamed, still a link
  CHECK(fs::is_symlink(fs::symlink_status(aside_files(dir)[0])));
}

TEST_CASE("faults: a tune.db link to another file leaves that file untouched") {
  TempDir dir, elsewhere;
  const std::string path = dir.file("tune.db");
  const std::string victim = elsewhere.file("someone-elses-file");
  cache_test::write_bytes(victim, "precious text\n");
  REQUIRE(::symlink(victim.c_str(), path.c_str()) == 0);
  for (CacheMode mode : {CacheMode::readonly, CacheMode::readwrite}) {
    LogCapture log;
    auto store = SqliteStore::open(path, {mode});
    store->save(test_key(), rows_of(2));
    INFO(log.all());
    CHECK(log.warnings().size() == 1);
    CHECK(log.any_contains("symbolic link"));
    CHECK(cache_test::read_bytes(victim) == "precious text\n");
  }
}

TEST_CASE("faults: a linked spirv/ directory receives no files") {
  TempDir dir, elsewhere;
  const fs::path linked = fs::path(dir.path()) / "spirv";
  fs::create_directory_symlink(elsewhere.path(), linked);
  LogCapture log;
  BinaryCache cache(linked, /*writable=*/true);
  CHECK_FALSE(cache.store("key", {"code", "log", "main"}));
  CHECK_FALSE(cache.load("key").has_value());
  INFO(log.all());
  CHECK(log.warnings().size() == 1);  // one warning per cache, however many calls
  CHECK(log.any_contains(linked.string()));
  CHECK(log.any_contains("symbolic link"));
  CHECK(fs::is_empty(elsewhere.path()));
}

TEST_CASE("faults: a linked binary-cache entry is a miss and is replaced, its target kept") {
  TempDir dir, elsewhere;
  BinaryCache cache(dir.path(), true);
  const std::string victim = elsewhere.file("victim");
  cache_test::write_bytes(victim, "victim");
  fs::create_symlink(victim, cache.path_for("key"));
  LogCapture log;
  CHECK_FALSE(cache.load("key").has_value());
  CHECK(log.any_contains(cache.path_for("key").string()));
  CHECK(log.any_contains("symbolic link"));
  REQUIRE(cache.store("key", {"code", "", "main"}));
  CHECK(cache_test::read_bytes(victim) == "victim");
  CHECK(cache.load("key")->binary == "code");
}

// ---------------------------------------------------------------------------------------
// 2. Special files are never opened (a FIFO would block).

TEST_CASE("faults: a FIFO as tune.db neither hangs a reader nor stops tuning") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  make_fifo(path);
  {
    LogCapture log;  // `tune cache list` and read-only tuning open it read-only
    auto ro = SqliteStore::open(path, {CacheMode::readonly});
    CHECK(ro->load(test_key()).empty());
    CHECK(ro->rows()->empty());
    CHECK(log.warnings().size() == 1);
    CHECK(log.any_contains(path + " is a FIFO"));
  }
  LogCapture log;
  auto rw = SqliteStore::open(path);
  INFO(log.all());
  CHECK(log.warnings().size() == 1);
  CHECK(log.any_contains(path + " is a FIFO"));
  rw->save(test_key(), rows_of(4));
  CHECK(rw->load(test_key()).size() == 4);
  CHECK_FALSE(rw->in_memory());
  REQUIRE(aside_files(dir).size() == 1);
  struct stat st {};
  REQUIRE(::lstat(aside_files(dir)[0].c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));  // moved aside, never opened
}

TEST_CASE("faults: a FIFO as a -wal companion or a binary-cache entry does not block") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(), rows_of(5));
  make_fifo(path + "-wal");
  {
    LogCapture log;
    auto store = SqliteStore::open(path);
    CHECK(log.any_contains(path + "-wal is a FIFO"));
    CHECK(store->load(test_key()).size() == 5);  // the database itself is kept
  }
  BinaryCache cache(dir.path() + "/spirv", true);
  fs::create_directories(cache.dir());
  make_fifo(cache.path_for("k").string());
  LogCapture log;
  CHECK_FALSE(cache.load("k").has_value());
  CHECK(log.any_contains(cache.path_for("k").string() + ": it is a FIFO"));
  CHECK(cache.store("k", {"spirv", "", "main"}));  // the compile's result replaces it
  CHECK(cache.load("k")->binary == "spirv");
}

// ---------------------------------------------------------------------------------------
// 3. A stale handle never moves another process's new database aside.

TEST_CASE(
    "faults: a database replaced while open: the stale handle reads and writes the live file") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  auto a = SqliteStore::open(path);  // process A, holding its handle
  a->save(test_key("old"), rows_of(3));
  // Process B finds the file damaged and moves it aside, then tunes 24 rows into a new one.
  const std::string aside = path + ".moved-by-b";
  REQUIRE(std::rename(path.c_str(), aside.c_str()) == 0);
  for (const char* s : {"-wal", "-shm"}) std::rename((path + s).c_str(), (aside + s).c_str());
  SqliteStore::open(path)->save(test_key("new"), rows_of(24));
  LogCapture log;
  CHECK(a->load(test_key("new")).size() == 24);  // A sees the live file
  a->save(test_key("from-a"), rows_of(2));
  INFO(log.all());
  CHECK(log.warnings().size() == 1);
  CHECK(log.any_contains(path + ": the file was deleted or replaced"));
  CHECK(count_rows(path) == 26);    // 24 of B's rows kept, A's 2 written to the live file
  CHECK(aside_files(dir).empty());  // nothing of B's moved aside
}

TEST_CASE("faults: a database deleted while open is recreated, not written into the void") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  auto a = SqliteStore::open(path);
  a->save(test_key(), rows_of(3));
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(path + s);
  LogCapture log;
  a->save(test_key(), rows_of(2));
  CHECK(log.any_contains(path + ": the file was deleted or replaced"));
  REQUIRE(fs::exists(path));
  CHECK(count_rows(path) == 2);
}

// ---------------------------------------------------------------------------------------
// 4. Salvage: a damaged page costs the rows on it, not the whole database.

TEST_CASE("faults: one damaged page: the readable rows are salvaged and counted") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  constexpr int kRows = 400;
  std::map<std::string, double> original;
  {
    auto store = SqliteStore::open(path);
    std::vector<StoredResult> rows;
    for (int i = 0; i < kRows; ++i) {
      // Configs long enough to spread the rows over a few dozen pages.
      auto r = ok_row("BM=" + std::to_string(i) + ",NAME=\"padding-padding-padding-padding\"",
                      1000.0 + i);
      original[Config::parse(r.config)->to_string()] = r.stats.median;
      rows.push_back(r);
    }
    store->save(test_key(), rows);
  }
  std::string bytes = cache_test::read_bytes(path);
  const std::size_t page = 4096, pages = bytes.size() / page;
  REQUIRE(pages > 10);
  const std::size_t victim = pages / 2;  // a leaf in the middle of the table
  for (std::size_t i = 0; i < page; ++i) bytes[victim * page + i] = static_cast<char>(0xA5);
  cache_test::write_bytes(path, bytes);

  LogCapture log;
  auto store = SqliteStore::open(path);
  auto rows = store->load(test_key());
  INFO(log.all());
  REQUIRE(log.warnings().size() == 1);
  CHECK(log.any_contains(path));
  CHECK(log.any_contains("moved aside"));
  CHECK(log.any_contains("salvaged " + std::to_string(rows.size()) + " rows"));
  // Most rows survive; every survivor is exactly an original row.
  CHECK(rows.size() >= kRows * 8 / 10);
  CHECK(rows.size() < kRows);
  for (const auto& r : rows) CHECK(original.at(r.config) == r.stats.median);
  MESSAGE("salvage: " << rows.size() << " of " << kRows << " rows kept, "
                      << kRows - static_cast<int>(rows.size()) << " lost with the damaged page");
}

// ---------------------------------------------------------------------------------------
// 5. A read-only database is used read-only (mode bits honoured even as root).

TEST_CASE("faults: a read-only file or directory: rows used, nothing moved or written") {
  for (bool ro_dir : {false, true}) {
    CAPTURE(ro_dir);
    TempDir dir;
    const std::string sub = dir.file("cache");
    fs::create_directory(sub);
    const std::string path = sub + "/tune.db";
    {
      auto s = SqliteStore::open(path);
      s->save(test_key(), rows_of(6));
    }
    ::chmod((ro_dir ? sub : path).c_str(), ro_dir ? 0555 : 0444);
    const std::string before = cache_test::read_bytes(path);
    LogCapture log;
    auto store = SqliteStore::open(path);
    INFO(log.all());
    REQUIRE(log.warnings().size() == 1);
    CHECK(log.any_contains(path));
    CHECK(log.any_contains(ro_dir ? "directory" : "mode 0444"));
    CHECK(log.any_contains("used read-only"));
    CHECK(store->load(test_key()).size() == 6);  // not ignored
    CHECK_FALSE(store->writable());
    store->save(test_key("more"), rows_of(2));  // not saved, no error, no second warning
    CHECK(log.warnings().size() == 1);
    CHECK(cache_test::files_starting(sub, "tune.db.corrupt-").empty());
    CHECK(cache_test::read_bytes(path) == before);
    ::chmod(sub.c_str(), 0755);
  }
}

// ---------------------------------------------------------------------------------------
// 6. Network file systems: no WAL.

TEST_CASE("faults: on a network file system the store uses the rollback journal") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  SqliteStore::Options opts;
  std::string probed;
  opts.filesystem_probe = [&](const std::string& d) {
    probed = d;
    return std::string("NFS");
  };
  LogCapture log;
  {
    auto store = SqliteStore::open(path, opts);
    store->save(test_key(), rows_of(3));
    CHECK(store->load(test_key()).size() == 3);
  }
  INFO(log.all());
  CHECK(probed == dir.path());
  REQUIRE(log.warnings().size() == 1);
  CHECK(log.any_contains(path + ": on a network file system (NFS)"));
  CHECK(log.any_contains("journal_mode=delete"));
  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA journal_mode") == "delete");
  CHECK_FALSE(fs::exists(path + "-wal"));
  CHECK(count_rows(path) == 3);
}

// ---------------------------------------------------------------------------------------
// 7. Temporary files of a killed writer are swept by age.

TEST_CASE("faults: temporaries left by a killed writer are removed on a later open") {
  TempDir dir;
  const std::string sub = dir.file("cubin");
  fs::create_directory(sub);
  const std::string old1 = sub + "/0123456789abcdef.bin.tmp.999999.0";
  const std::string old2 = sub + "/fedcba9876543210.bin.tmp.999999.1";
  const std::string fresh = sub + "/0011223344556677.bin.tmp.999999.2";  // a live writer's
  for (const auto& f : {old1, old2, fresh}) cache_test::write_bytes(f, "half an entry");
  const struct timeval two_hours_ago[2] = {{::time(nullptr) - 7200, 0},
                                           {::time(nullptr) - 7200, 0}};
  for (const auto& f : {old1, old2}) REQUIRE(::utimes(f.c_str(), two_hours_ago) == 0);
  BinaryCache read_only(sub, /*writable=*/false);
  CHECK(fs::exists(old1));  // a read-only cache deletes nothing
  BinaryCache cache(sub, /*writable=*/true);
  CHECK_FALSE(fs::exists(old1));
  CHECK_FALSE(fs::exists(old2));
  CHECK(fs::exists(fresh));
}

// ---------------------------------------------------------------------------------------
// 8. Corruption quick_check misses: checked column types, ranges and row checksums.

TEST_CASE("faults: a text value in a statistics column is dropped, not read as 0.0") {
  // Text in `min` reads as 0.0, which passes every range check of the row: only the column
  // type tells.
  TempDir dir;
  const std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(), rows_of(5));
  {
    RawDb raw(path);
    raw.exec("UPDATE results SET min = 'fast' WHERE config = 'BM=3'");
    raw.exec("UPDATE results SET count = -4 WHERE config = 'BM=1'");
  }
  LogCapture log;
  auto rows = SqliteStore::open(path)->load(test_key());
  INFO(log.all());
  REQUIRE(log.warnings().size() == 1);  // one per key
  CHECK(log.any_contains(path));
  CHECK(log.any_contains("ignored 2 stored rows"));
  CHECK(log.any_contains("column min holds text"));
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) CHECK((r.config != "BM=3" && r.config != "BM=1"));
}

TEST_CASE("faults: 100 random byte flips: no altered row is ever used") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  constexpr int kRows = 30;
  {
    auto s = SqliteStore::open(path);
    s->save(test_key(), rows_of(kRows));
  }
  const std::string pristine = cache_test::read_bytes(path);
  std::map<std::string, StoredResult> original;
  for (const auto& r : rows_of(kRows)) original[r.config] = r;
  std::mt19937_64 rng(20261201);
  int trials = 0, altered_used = 0, warned = 0, silent_loss = 0;
  std::size_t rows_lost = 0;
  for (int t = 0; t < 100; ++t, ++trials) {
    std::string bytes = pristine;
    // Anywhere past the 100-byte file header, in the pages that hold something.
    const std::size_t at = 100 + rng() % (bytes.size() - 100);
    bytes[at] = static_cast<char>(bytes[at] ^ (1u << (rng() % 8)));
    for (const auto& f : fs::directory_iterator(dir.path())) fs::remove_all(f.path());
    cache_test::write_bytes(path, bytes);
    LogCapture log;
    auto rows = SqliteStore::open(path)->load(test_key());
    rows_lost += kRows - rows.size();
    for (const auto& r : rows) {
      const StoredResult& o = original.at(r.config);
      if (r.status != o.status || r.stats.count != o.stats.count || r.stats.min != o.stats.min ||
          r.stats.p20 != o.stats.p20 || r.stats.median != o.stats.median ||
          r.stats.p80 != o.stats.p80 || r.stats.max != o.stats.max ||
          r.stats.mean != o.stats.mean || r.unix_time != o.unix_time || r.reason != o.reason)
        ++altered_used;
    }
    if (!log.warnings().empty()) ++warned;
    if (log.warnings().empty() && rows.size() != static_cast<std::size_t>(kRows)) ++silent_loss;
  }
  MESSAGE("random flips: " << trials << " trials, " << warned << " warned, " << altered_used
                           << " altered rows used, " << rows_lost << " rows lost in all, "
                           << silent_loss << " silent losses");
  CHECK(altered_used == 0);
  CHECK(silent_loss == 0);
}

// ---------------------------------------------------------------------------------------
// 9. Physically impossible imported timings are refused.

TEST_CASE("faults: imported zero, negative, non-finite, sub-nanosecond or unordered times") {
  auto row = [](const std::string& cfg, const std::string& stats) {
    return R"({"kernel":"k","source_hash":"0x0000000000000001","key":"n=1","device":"d",)"
           R"("toolchain":"t","config":")" +
           cfg + R"(","status":"ok","reason":"","unix_time":1700000000,"stats":)" + stats + "}";
  };
  auto stats = [](const std::string& min, const std::string& med, const std::string& mean) {
    return R"({"count":10,"min":)" + min + R"(,"p20":)" + min + R"(,"median":)" + med +
           R"(,"p80":)" + med + R"(,"max":)" + med + R"(,"mean":)" + mean + "}";
  };
  std::string doc = R"({"format":"libtune-cache","version":1,"rows":[)" +
                    row("BM=1", stats("0", "0", "0")) + "," +             // zero
                    row("BM=2", stats("-5", "-5", "-5")) + "," +          // negative
                    row("BM=3", stats("null", "null", "null")) + "," +    // non-finite
                    row("BM=4", stats("0.25", "0.5", "0.5")) + "," +      // below 1 ns
                    row("BM=5", stats("900", "800", "850")) + "," +       // median below min
                    row("BM=6", stats("900", "1000", "2000000")) + "," +  // mean beyond max
                    row("BM=7", stats("900", "1000", "950")) + "]}";      // plausible
  auto store = SqliteStore::open(":memory:");
  auto st = store->import_json(doc);
  REQUIRE(st.ok());
  CHECK(st->added == 1);
  CHECK(st->rejected == 6);
  REQUIRE(store->rows()->size() == 1);
  CHECK(store->rows()->front().result.config == "BM=7");
}

// ---------------------------------------------------------------------------------------
// 10. A compiled-variant entry whose interface does not fit is evicted and recompiled.

TEST_CASE("faults: a forged entry under the right key with the wrong entry point is evicted") {
  TempDir dir;
  BinaryCache cache(dir.path(), true);
  const std::string key = "compiler 1\n-arch=sm_90\nsourcehash\n_Z4gemmILi64EEvPf";
  // Another program's code stored under our key: valid format, valid checksum.
  REQUIRE(cache.store(key, {"other program's code", "", "steal_secrets"}));
  auto expects_gemm = [](const BinaryCacheEntry& e) -> std::string {
    return e.entry_name.find("gemm") == std::string::npos
               ? "entry point '" + e.entry_name + "' is not the kernel's"
               : "";
  };
  LogCapture log;
  CHECK_FALSE(cache.load(key, expects_gemm).has_value());  // a miss: the caller recompiles
  CHECK(log.any_contains(cache.path_for(key).string()));
  CHECK(log.any_contains("entry point 'steal_secrets'"));
  CHECK_FALSE(fs::exists(cache.path_for(key)));  // evicted
  REQUIRE(cache.store(key, {"real code", "", "_Z4gemmILi64EEvPf"}));
  CHECK(cache.load(key, expects_gemm)->binary == "real code");
}

// ---------------------------------------------------------------------------------------
// 11. A full disk: the warning gives the failed write's reason.

TEST_CASE("faults: a write that runs out of space names the real reason") {
  TempDir dir;
  const std::string path = dir.file("tune.db");
  SqliteStore::open(path)->save(test_key(), rows_of(2));
  std::string report = run_in_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {};
    lim.rlim_cur = lim.rlim_max = 64 * 1024;  // files may not grow past 64 KiB
    ::setrlimit(RLIMIT_FSIZE, &lim);
    LogCapture log;
    auto store = SqliteStore::open(path);
    std::vector<StoredResult> many;
    for (int i = 0; i < 3000; ++i)
      many.push_back(
          ok_row("BM=" + std::to_string(i) + ",PAD=\"" + std::string(60, 'p') + "\"", 1000.0));
    store->save(test_key("big"), many);
    return log.all();
  });
  INFO(report);
  CHECK(report.find(path) != std::string::npos);
  CHECK(report.find("saving failed") != std::string::npos);
  CHECK(report.find("cannot rollback") == std::string::npos);
  CHECK((report.find("disk I/O error") != std::string::npos ||
         report.find("database or disk is full") != std::string::npos));
  CHECK(count_rows(path) == 2);  // the committed rows are intact
}

// ---------------------------------------------------------------------------------------
// 12. Cross-process claims.

struct ClaimWorker {
  pid_t pid = -1;
  int in = -1;   // write end of its stdin
  int out = -1;  // read end of its stdout
  std::string answer;

  ClaimWorker(const std::string& db, const std::string& key, const std::string& ttl_ms,
              const std::string& at_exit) {
    int i[2], o[2];
    // Close-on-exec: a later worker must not inherit this one's stdin (it would never end).
    REQUIRE(::pipe2(i, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(o, O_CLOEXEC) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(i[0], 0);
      ::dup2(o[1], 1);
      for (int fd : {i[0], i[1], o[0], o[1]}) ::close(fd);
      ::execl(tune_test_programs::cache_worker, tune_test_programs::cache_worker, "claim",
              db.c_str(), key.c_str(), ttl_ms.c_str(), at_exit.c_str(),
              static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    ::close(i[0]);
    ::close(o[1]);
    in = i[1];
    out = o[0];
    char buf[32];
    ssize_t n;
    while (answer.find('\n') == std::string::npos && (n = ::read(out, buf, sizeof buf)) > 0)
      answer.append(buf, static_cast<std::size_t>(n));
  }
  // Lets it finish (release or not) and waits for it.
  void finish() {
    if (pid < 0) return;
    ::close(in);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(out);
    pid = -1;
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  ~ClaimWorker() { finish(); }
};

StoreKey claimed(const std::string& key) {
  return StoreKey{"claimed", 0x42, key, "sim|dev|s1|1", "simc|libtune"};
}

TEST_CASE("faults: two processes meeting the same new key: one tunes, the other waits") {
  TempDir dir;
  const std::string db = dir.file("tune.db");
  auto store = SqliteStore::open(db);
  const std::chrono::milliseconds hour(3600 * 1000);
  int granted = 0, refused = 0;
  {
    ClaimWorker a(db, "n=1", "3600000", "release");
    CHECK(a.answer == "granted\n");
    ClaimWorker b(db, "n=1", "3600000", "release");  // another process, same key
    CHECK(b.answer == "refused\n");
    CHECK_FALSE(store->try_claim(claimed("n=1"), hour));  // and this one
    CHECK(store->try_claim(claimed("n=2"), hour));        // another key is free
    for (const auto* w : {&a, &b}) (w->answer == "granted\n" ? granted : refused)++;
    a.finish();  // releases
    b.finish();
  }
  CHECK(store->try_claim(claimed("n=1"), hour));  // released: granted
  CHECK(store->try_claim(claimed("n=1"), hour));  // renewal by the holder
  store->release_claim(claimed("n=1"));
  store->release_claim(claimed("n=2"));
  CHECK(granted == 1);
  CHECK(refused == 1);

  // A holder that died without releasing: its pid is gone on this host, the claim is dead.
  {
    ClaimWorker dead(db, "n=3", "3600000", "keep");
    CHECK(dead.answer == "granted\n");
  }
  CHECK(store->try_claim(claimed("n=3"), hour));

  // Expiry: a live process's (pid 1's) claim whose ttl passed is granted; a fresh one is not.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  {
    RawDb raw(db);
    raw.exec(std::string("INSERT INTO claims VALUES ('claimed', 66, 'n=4', 'sim|dev|s1|1', ") +
             "'simc|libtune', 'other:1', '" + host + "', 1, 1000)");
    raw.exec(std::string("INSERT INTO claims VALUES ('claimed', 66, 'n=5', 'sim|dev|s1|1', ") +
             "'simc|libtune', 'other:1', '" + host + "', 1, 99999999999999)");
  }
  CHECK(store->try_claim(claimed("n=4"), hour));
  CHECK_FALSE(store->try_claim(claimed("n=5"), hour));

  // Stores that cannot record claims grant always.
  CHECK(SqliteStore::open(db, {CacheMode::readonly})->try_claim(claimed("n=5"), hour));
  CHECK(SqliteStore::open(":memory:")->try_claim(claimed("n=5"), hour));
}

TEST_CASE("faults: a file from before claims and checksums is upgraded in place") {
  TempDir dir;
  const std::string db = dir.file("tune.db");
  {
    RawDb raw(db);  // the version-1 schema as first released
    raw.exec(
        "CREATE TABLE results (kernel TEXT NOT NULL, source_hash INTEGER NOT NULL, key TEXT NOT "
        "NULL, device TEXT NOT NULL, toolchain TEXT NOT NULL, config TEXT NOT NULL, status TEXT "
        "NOT NULL, reason TEXT NOT NULL DEFAULT '', count INTEGER NOT NULL DEFAULT 0, min REAL, "
        "p20 REAL, median REAL, p80 REAL, max REAL, mean REAL, unix_time INTEGER NOT NULL "
        "DEFAULT 0, PRIMARY KEY (kernel, source_hash, key, device, toolchain, config)) WITHOUT "
        "ROWID");
    raw.exec("PRAGMA application_id = " + std::to_string(kCacheApplicationId));
    raw.exec("PRAGMA user_version = 1");
    const StoreKey k = test_key();
    raw.exec("INSERT INTO results VALUES ('" + k.kernel + "', " +
             std::to_string(static_cast<std::int64_t>(k.source_hash)) + ", '" + k.key + "', '" +
             k.device + "', '" + k.toolchain +
             "', 'BM=64', 'ok', '', 20, 900, 950, 1000, 1050, 1200, 1000, 1700000000)");
  }
  // Read-only first: the old file is read as it is.
  CHECK(SqliteStore::open(db, {CacheMode::readonly})->load(test_key()).size() == 1);
  LogCapture log;
  auto store = SqliteStore::open(db);
  CHECK(log.warnings().empty());
  CHECK(aside_files(dir).empty());
  CHECK(store->load(test_key()).size() == 1);  // the old row, unverified but valid
  CHECK(store->try_claim(claimed("x"), std::chrono::milliseconds(1000)));
  store->save(test_key(), std::vector{ok_row("BM=32", 500.0)});
  CHECK(store->load(test_key()).size() == 2);
}

}  // namespace
}  // namespace tune
