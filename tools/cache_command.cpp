// `tune cache`. See cache_command.hpp.
#include "cache_command.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <istream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "cache_explain.hpp"
#include "cache_server.hpp"
#include "cli_print.hpp"
#include "command_error.hpp"
#include "decision_text.hpp"
#include "t4_export.hpp"
#include "time_text.hpp"
#include "tune/device.hpp"
#include "tune/environment.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/sqlite_store.hpp"

namespace tune::cli {
namespace {

using nlohmann::json;

struct CacheArgs {
  std::string db;  // empty: the default path
  bool json = false;
  CacheFilter filter;
  std::string file;                // export / import / merge
  std::string format = "libtune";  // export: libtune | t4
  std::string metadata;            // export --format t4: the metadata file
  std::string store;               // list / push / pull: the server (default: TUNE_STORE)
};

std::string db_path(const CacheArgs& a) { return a.db.empty() ? default_cache_path() : a.db; }

// Opens the database for a command; `write` asks for readwrite (refused when TUNE_CACHE is
// readonly). Reading never creates the file.
std::shared_ptr<SqliteStore> open_for(const CacheArgs& a, bool write) {
  std::string path = db_path(a);
  if (path.empty())
    fail_command("tune cache", "no cache path: set TUNE_CACHE_DIR, XDG_CACHE_HOME or HOME", 2);
  SqliteStore::Options opts;
  opts.mode = write && cache_mode_from_env() != CacheMode::readonly ? CacheMode::readwrite
                                                                    : CacheMode::readonly;
  return SqliteStore::open(path, opts);
}

std::string age_text(std::int64_t unix_time) {
  if (unix_time <= 0) return "-";
  std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::int64_t d = now - unix_time;
  if (d < 0) return "future";
  if (d < 120) return std::to_string(d) + "s";
  if (d < 7200) return std::to_string(d / 60) + "m";
  if (d < 172800) return std::to_string(d / 3600) + "h";
  return std::to_string(d / 86400) + "d";
}

// A decision record as `--json` writes it (null for none; NaN as null).
json decision_json(const std::optional<DecisionRecord>& d) {
  if (!d) return nullptr;
  auto real = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"runner_up", d->runner_up},
          {"margin", real(d->margin)},
          {"confidence", real(d->confidence)},
          {"timing", d->timing},
          {"sustained_turns", d->sustained_turns},
          {"library_version", d->library_version},
          {"unix_time", d->unix_time},
          {"tunings", d->tunings},
          {"flips", d->flips}};
}

// --store, else TUNE_STORE; empty when neither names a server.
std::string server_of(const CacheArgs& a) {
  return a.store.empty() ? env_text("TUNE_STORE") : a.store;
}

void cmd_list(const CacheArgs& a) {
  std::string source;
  Result<std::vector<CacheEntry>> entries = std::vector<CacheEntry>{};
  if (!a.store.empty()) {
    entries = server_entries(a.store, a.filter, &source);
  } else {
    auto store = open_for(a, false);
    source = store->path();
    entries = store->list_entries(a.filter);
  }
  if (!entries.ok()) fail_command("tune cache", entries.status());
  if (a.json) {
    json out = json::array();
    for (const CacheEntry& e : *entries) {
      out.push_back(
          {{"kernel", e.key.kernel},
           {"key", e.key.key},
           {"device", e.key.device},
           {"toolchain", e.key.toolchain},
           {"best_config", e.best_config},
           {"best_stats", stats_json(e.best_stats)},
           {"best_verification", e.best_config.empty() ? json(nullptr)
                                                       : json(std::string(to_string(verification_of(
                                                             StatusCode::ok, e.best_verified))))},
           {"rows", e.rows},
           {"failed", e.failed},
           {"verified", e.verified},
           {"newest_time", e.newest_time},
           {"decision", decision_json(e.decision)}});
    }
    return print_json(out);
  }
  if (entries->empty()) {
    std::printf("no tuning results in %s\n", source.c_str());
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const CacheEntry& e : *entries) {
    rows.push_back(
        {e.key.kernel, e.key.key, e.key.device, e.best_config.empty() ? "(none ok)" : e.best_config,
         e.best_config.empty() ? "-" : time_text(e.best_stats.median),
         e.best_config.empty() ? "-"
         : e.best_verified     ? "verified"
                               : "not_checked",
         std::to_string(e.rows - e.failed) + "/" + std::to_string(e.rows),
         std::to_string(e.verified) + "/" + std::to_string(e.rows - e.failed),
         e.decision && e.decision->tunings >= 1
             ? std::to_string(e.decision->flips) + "/" + std::to_string(e.decision->tunings - 1)
             : "-",
         age_text(e.newest_time)});
  }
  print_table({"KERNEL", "KEY", "DEVICE", "BEST", "MEDIAN", "BEST OUTPUT", "OK/CONFIGS",
               "VERIFIED/OK", "FLIPS/RETUNES", "AGE"},
              rows);
}

void cmd_show(const CacheArgs& a) {
  auto store = open_for(a, false);
  auto rows = store->rows(a.filter);
  if (!rows.ok()) fail_command("tune cache", rows.status());
  if (a.json) {
    json out = json::array();
    for (const CacheRow& r : *rows) {
      out.push_back({{"kernel", r.key.kernel},
                     {"key", r.key.key},
                     {"device", r.key.device},
                     {"toolchain", r.key.toolchain},
                     {"config", r.result.config},
                     {"status", std::string(to_string(r.result.status))},
                     {"reason", r.result.reason},
                     {"verified", r.result.verified},
                     {"verification",
                      std::string(to_string(verification_of(r.result.status, r.result.verified)))},
                     {"stats", stats_json(r.result.stats)},
                     {"unix_time", r.result.unix_time},
                     {"decision", decision_json(r.result.decision)}});
    }
    return print_json(out);
  }
  if (rows->empty()) {
    std::printf("no tuning results for %s in %s\n", a.filter.kernel.c_str(), store->path().c_str());
    return;
  }
  // One table per (key, device, toolchain, source), fastest first.
  std::size_t i = 0;
  while (i < rows->size()) {
    const StoreKey& k = (*rows)[i].key;
    std::optional<DecisionRecord> decision;
    std::printf("%s  key %s\n  device %s\n  toolchain %s\n", k.kernel.c_str(), k.key.c_str(),
                k.device.c_str(), k.toolchain.c_str());
    std::vector<std::vector<std::string>> table;
    for (; i < rows->size(); ++i) {
      const CacheRow& r = (*rows)[i];
      if (r.key.key != k.key || r.key.device != k.device || r.key.toolchain != k.toolchain ||
          r.key.source_hash != k.source_hash)
        break;
      const StoredResult& s = r.result;
      if (s.decision && (!decision || s.decision->unix_time > decision->unix_time))
        decision = s.decision;
      bool ok = s.status == StatusCode::ok;
      std::string reason = s.reason.substr(0, s.reason.find('\n'));
      table.push_back({s.config, std::string(to_string(s.status)),
                       std::string(to_string(verification_of(s.status, s.verified))),
                       ok ? time_text(s.stats.median) : "-", ok ? time_text(s.stats.p20) : "-",
                       ok ? time_text(s.stats.p80) : "-", std::to_string(s.stats.count),
                       age_text(s.unix_time), ok ? "" : reason});
    }
    print_table({"CONFIG", "STATUS", "OUTPUT", "MEDIAN", "P20", "P80", "N", "AGE", "REASON"},
                table);
    if (decision) std::printf("  decision: %s\n", decision_summary(*decision).c_str());
    std::printf("\n");
  }
}

void cmd_clear(const CacheArgs& a) {
  auto store = open_for(a, true);
  auto n = store->clear(a.filter);
  if (!n.ok()) fail_command("tune cache", n.status());
  if (a.json) return print_json({{"removed", *n}});
  std::printf("removed %zu row%s from %s\n", *n, *n == 1 ? "" : "s", store->path().c_str());
}

// Writes `text` to `file` ('-': stdout).
void write_output(const std::string& file, const std::string& text) {
  if (file == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) fail_command("tune cache", Status(StatusCode::io_error, "cannot write " + file));
}

// The T4 metadata file beside `results`: "r.json" -> "r-metadata.json"; none for stdout.
std::string t4_metadata_path(const CacheArgs& a) {
  if (!a.metadata.empty() || a.file == "-") return a.metadata;
  std::string stem = a.file;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
    stem.resize(stem.size() - 5);
  return stem + "-metadata.json";
}

void cmd_export(const CacheArgs& a) {
  auto store = open_for(a, false);
  std::string metadata_file;
  if (a.format == "t4") {
    auto rows = store->rows(a.filter);
    if (!rows.ok()) fail_command("tune cache", rows.status());
    auto text = t4_results_json(*rows);
    if (!text.ok()) fail_command("tune cache", text.status());
    write_output(a.file, *text);
    metadata_file = t4_metadata_path(a);
    if (!metadata_file.empty()) write_output(metadata_file, t4_metadata_json(rows->front().key));
  } else {
    auto text = store->export_json(a.filter);
    if (!text.ok()) fail_command("tune cache", text.status());
    write_output(a.file, *text);
  }
  if (a.json || a.file == "-") return;
  std::printf("exported to %s\n", a.file.c_str());
  if (!metadata_file.empty()) std::printf("metadata in %s\n", metadata_file.c_str());
}

// The declared spaces of the kernels shipped with libtune, by backend of the device
// fingerprint ("vulkan|..." is GLSL, "cuda|..." and "hip|..." are CUDA/HIP sources).
class BundledSpaces {
 public:
  BundledSpaces() {
    for (Language l : {Language::glsl, Language::cuda_hip})
      for (auto& k : kernels::bundled_kernels(l)) kernels_[l].push_back(std::move(k));
  }
  const ConfigSpace* find(const StoreKey& key) const {
    std::string backend = key.device.substr(0, key.device.find('|'));
    Language l;
    if (backend == "vulkan")
      l = Language::glsl;
    else if (backend == "cuda" || backend == "hip")
      l = Language::cuda_hip;
    else
      return nullptr;
    auto it = kernels_.find(l);
    if (it == kernels_.end()) return nullptr;
    for (const auto& k : it->second)
      if (k.name == key.kernel) return &k.def.space;
    return nullptr;
  }

 private:
  std::map<Language, std::vector<kernels::BundledKernel>> kernels_;
};

// An open file descriptor as a std::streambuf, read in chunks of 64 KiB: what
// SqliteStore::import_json streams (so neither the file nor standard input is ever held in
// memory whole). A read error ends the input; error() says what it was.
class FdInput final : public std::streambuf {
 public:
  FdInput(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  const std::string& error() const noexcept { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    for (;;) {
      ssize_t n = ::read(fd_, buf_, sizeof buf_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error_ = "cannot read " + name_ + ": " + std::strerror(errno);
      if (n <= 0) return traits_type::eof();
      setg(buf_, buf_, buf_ + n);
      return traits_type::to_int_type(*gptr());
    }
  }

 private:
  int fd_;
  std::string name_;
  std::string error_;
  char buf_[1 << 16];
};

// Opens the file to import, checked before anything is read: a regular file (never a
// directory, FIFO, device or socket: opened with O_NONBLOCK and checked with fstat), of any
// size (the import reads it as a stream, in bounded memory). '-' is standard input, which
// may be a pipe. Returns the descriptor (the caller closes it unless it is 0).
int open_import_file(const std::string& file) {
  if (file == "-") return 0;
  int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    fail_command("tune cache", Status(StatusCode::not_found,
                                      "cannot read " + file + ": " + std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* what = S_ISDIR(st.st_mode)                          ? "a directory"
                       : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                    : "not a regular file";
    fail_command("tune cache",
                 Status(StatusCode::invalid_argument,
                        "cannot import " + file + ": it is " + what + ", not a regular file"));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// What import and merge did, as text or JSON.
void print_import_stats(const CacheArgs& a, const SqliteStore& store, const ImportStats& stats) {
  if (a.json) {
    return print_json({{"added", stats.added},
                       {"replaced", stats.replaced},
                       {"kept", stats.kept},
                       {"rejected", stats.rejected},
                       {"problems", stats.problems},
                       {"problems_not_listed", stats.problems_not_listed}});
  }
  std::printf(
      "%s: %zu added, %zu replaced, %zu kept (stored rows have better provenance), "
      "%zu rejected\n",
      store.path().c_str(), stats.added, stats.replaced, stats.kept, stats.rejected);
  for (const auto& p : stats.problems) std::printf("  rejected %s\n", p.c_str());
  if (stats.problems_not_listed > 0)
    std::printf("  (%zu more rejected rows not listed)\n", stats.problems_not_listed);
}

ImportOptions bundled_import_options(const std::shared_ptr<BundledSpaces>& spaces) {
  ImportOptions opts;
  opts.space_for = [spaces](const StoreKey& k) { return spaces->find(k); };
  return opts;
}

void cmd_import(const CacheArgs& a) {
  const int fd = open_import_file(a.file);
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd != 0) ::close(fd);
    }
  } closer{fd};
  auto store = open_for(a, true);
  FdInput buf(fd, a.file == "-" ? "standard input" : a.file);
  std::istream in(&buf);
  auto stats = store->import_json(in, bundled_import_options(std::make_shared<BundledSpaces>()));
  // A read error ends the document early: the parser reports it as truncated, this says why.
  if (!buf.error().empty()) fail_command("tune cache", Status(StatusCode::io_error, buf.error()));
  if (!stats.ok()) fail_command("tune cache", stats.status().with_context("importing " + a.file));
  print_import_stats(a, *store, *stats);
}

void cmd_merge(const CacheArgs& a) {
  auto store = open_for(a, true);
  auto stats =
      store->merge_database(a.file, bundled_import_options(std::make_shared<BundledSpaces>()));
  if (!stats.ok()) fail_command("tune cache", stats.status());
  print_import_stats(a, *store, *stats);
}

// push (the local file's rows to the server) or pull (the server's into the local file).
void cmd_transfer(const CacheArgs& a, bool push) {
  const std::string url = server_of(a);
  if (url.empty())
    fail_command("tune cache", "no server: give --store postgresql://... or set TUNE_STORE", 2);
  auto store = open_for(a, !push);
  Result<ServerTransfer> t =
      push ? push_to_server(*store, url, a.filter) : pull_from_server(url, *store, a.filter);
  if (!t.ok()) fail_command("tune cache", t.status());
  if (a.json) return print_json({{"keys", t->keys}, {"sent", t->sent}, {"kept", t->kept}});
  std::printf("%s %s %s: %zu rows sent, %zu kept (the receiver's rows as good), %zu keys\n",
              push ? store->path().c_str() : t->server.c_str(), "->",
              push ? t->server.c_str() : store->path().c_str(), t->sent, t->kept, t->keys);
}

void cmd_path(const CacheArgs& a) {
  std::string path = db_path(a);
  CacheMode mode = cache_mode_from_env();
  if (a.json) {
    return print_json({{"path", path}, {"mode", std::string(to_string(mode))}});
  }
  std::printf("%s\n", path.empty() ? "(none: set TUNE_CACHE_DIR)" : path.c_str());
  if (mode != CacheMode::readwrite)
    std::fprintf(stderr, "note: TUNE_CACHE=%s\n", std::string(to_string(mode)).c_str());
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cache = app.add_subcommand("cache", "Inspect and manage the persistent tuning cache");
  cache->require_subcommand(1);
  cache->add_option("--db", args->db, "Database file (default: the TUNE_CACHE_DIR one)");
  cache->add_flag("--json", args->json, "Machine-readable output");

  auto add_filter = [&](CLI::App* c, bool kernel_opt) {
    if (kernel_opt) c->add_option("--kernel", args->filter.kernel, "Only this kernel");
    c->add_option("--device", args->filter.device,
                  "Only devices whose fingerprint contains this text");
    c->add_option("--key", args->filter.key, "Only this tuning key (exact text)");
    c->add_flag("--json", args->json, "Machine-readable output");
  };

  CLI::App* list = cache->add_subcommand("list", "Kernel, key, device, best config and age");
  add_filter(list, true);
  list->add_option("--store", args->store,
                   "List a shared PostgreSQL server's results instead (postgresql://...)");
  list->callback([args] { cmd_list(*args); });

  CLI::App* show = cache->add_subcommand("show", "Every config's timing for a kernel's keys");
  show->add_option("kernel", args->filter.kernel, "Kernel name")->required();
  add_filter(show, false);
  show->callback([args] { cmd_show(*args); });

  CLI::App* clear = cache->add_subcommand("clear", "Delete rows (all, or those matching)");
  add_filter(clear, true);
  clear->callback([args] { cmd_clear(*args); });

  CLI::App* exp = cache->add_subcommand("export", "Write rows as JSON ('-' for stdout)");
  exp->add_option("file", args->file, "Output file")->required();
  exp->add_option("--format", args->format,
                  "libtune (the format import reads) or t4 (Kernel Tuner's T4 results of one "
                  "kernel, key and device)")
      ->check(CLI::IsMember({"libtune", "t4"}));
  exp->add_option("--metadata", args->metadata,
                  "With --format t4: the T4 metadata file (default: FILE's name with "
                  "'-metadata.json'; none when FILE is '-')");
  add_filter(exp, true);
  exp->callback([args] { cmd_export(*args); });

  CLI::App* imp = cache->add_subcommand(
      "import",
      "Merge rows from JSON; a stored row is replaced only by one with more samples "
      "(or as many and newer), never a measurement by a failure");
  imp->add_option("file", args->file,
                  "Input file ('-' for stdin): a regular file of any size, read as a stream "
                  "in bounded memory; all rows are merged in one transaction, or none when the "
                  "document is malformed")
      ->required();
  imp->add_flag("--json", args->json, "Machine-readable output");
  imp->callback([args] { cmd_import(*args); });

  CLI::App* merge = cache->add_subcommand(
      "merge",
      "Merge every row of another tuning database (another machine's tune.db): rows keep "
      "their device and toolchain; a conflict is decided as import decides it; idempotent");
  merge->add_option("other", args->file, "The database file to merge in (read, never modified)")
      ->required();
  merge->add_flag("--json", args->json, "Machine-readable output");
  merge->callback([args] { cmd_merge(*args); });

  auto add_transfer = [&](CLI::App* t, bool push) {
    t->add_option("--store", args->store, "The server (postgresql://...; default: TUNE_STORE)");
    add_filter(t, true);
    t->callback([args, push] { cmd_transfer(*args, push); });
  };
  add_transfer(cache->add_subcommand("push",
                                     "Send the local file's rows to a shared PostgreSQL server "
                                     "(import's provenance rule decides each config)"),
               true);
  add_transfer(cache->add_subcommand("pull",
                                     "Copy a shared PostgreSQL server's rows into the local "
                                     "file (import's provenance rule decides each config)"),
               false);

  CLI::App* path = cache->add_subcommand("path", "Print the database file in use");
  path->add_flag("--json", args->json, "Machine-readable output");
  path->callback([args] { cmd_path(*args); });

  add_cache_explain(*cache, std::shared_ptr<const std::string>(args, &args->db));
}

}  // namespace tune::cli
