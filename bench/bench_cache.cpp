// bench_cache: cold-start cost of a tuned kernel in a fresh process (issue 6).
//
// What a user pays when a program starts and calls a kernel that an earlier process already
// tuned: open the device, open the SQLite cache, build the Autotuner, then the first run()
// (load and validate the stored rows, pick the winner, compile it, launch it). Every
// measurement is a new process: this binary re-executes itself as
//   bench_cache --child <sim|vulkan|cuda|hip> <populate|cold|nobin|bundle|bundle_nobin|scratch>
//               <db file> <result file>
//               <spawn time: the steady clock in ns>
// and the parent reports medians over several children. Before the cold runs, one child
// ("populate") tunes the kernel into a scratch database, exactly as a first run of a program
// would.
//
// Scenarios, per device (the simulated device, tune::testing::SimDevice; the Vulkan backend
// when it is built and a device opens). Every child gets TUNE_CACHE_DIR = <scratch>/compiled,
// so the compiled-variant caches (Vulkan: <dir>/spirv and <dir>/vkpipeline) are the bench's
// own, filled by the populate child as a program's first run fills them:
//   disk        the result is on disk and so are the compiled variants (SPIR-V and the driver's
//               pipeline cache): what every process after the first one pays.
//   nobin       (Vulkan, CUDA) the result is on disk but the compiled-variant caches are
//               emptied before each child: the first run() compiles the winner (shaderc GLSL
//               -> SPIR-V, then the driver's pipeline), as every process did before libtune
//               had a SPIR-V disk cache.
//   warm_binary a second Autotuner's first run() in the same process, after the first one
//               (SPIR-V in the device's memory, the pipeline rebuilt through the
//               VkPipelineCache): the in-process bound. The simulated device compiles nothing.
//   bundle      the result only in a bundle (AutotunerOptions::bundles, tune/bundle.hpp) made
//               from the populated database, the user's database empty (a fresh one per
//               child), the compiled variants on disk: an application's first call on a
//               machine that never tuned, against `disk` (the same key from the database).
//   bundle_nobin the same with the compiled-variant caches emptied first (a user's first run
//               of a shipped application: the winner is compiled, nothing is timed).
//   scratch     reference: the same first run() with empty caches (a full tuning).
//
// The kernel is the bundled vector_add at its first demo size (n = 1 Mi), the one
// `tune demo --quick --kernel vector_add` tunes; on the simulated device its definition is
// reused with a simulated source.
//
// Per process: exec_1st (from the parent's spawn, whose steady-clock time the child gets on its
// command line, to the first result: the whole cost a program pays), main_1st (the same from
// main()), open_dev, store, first (the first run() alone) and hot (a second run(): the hit).
// CUDA and HIP (when built): the same rows on the bundled CUDA/HIP vector_add; run it with
// CUDA_CACHE_DISABLE=1 so the driver's own cache does not hide a load (cubins bypass it anyway).
//
// Run: bench_cache [google-benchmark flags]; BENCH_CACHE_REPS (default 7) fresh processes per
// scenario. The device is the backend's default (set VK_ICD_FILENAMES to pick lavapipe).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tune/kernels/bundled.hpp"
#include "tune/sqlite_store.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"
#ifdef TUNE_HAVE_VULKAN  // defined by tune::vulkan, which tune::tune links when it is built
#include "tune/vulkan.hpp"
#endif

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// ---------------------------------------------------------------------------------------------
// Child: one fresh process, one measurement.

// The bundled vector_add for `backend`; on "sim" its definition with a simulated source.
tune::Result<tune::kernels::BundledKernel> find_kernel(const std::string& backend) {
  std::vector<tune::Language> langs;
  if (backend == "sim") {
    langs = {tune::Language::glsl, tune::Language::cuda_hip};
  } else if (backend == "vulkan") {
    langs = {tune::Language::glsl};
  } else {
    langs = {tune::Language::cuda_hip};
  }
  for (tune::Language l : langs) {
    for (auto& k : tune::kernels::bundled_kernels(l)) {
      if (k.name != "vector_add") continue;
      if (backend == "sim")
        k.def.sources = {{tune::Language::simulated, "vector_add", "// simulated vector_add"}};
      return std::move(k);
    }
  }
  return tune::Status(tune::StatusCode::not_found, "no bundled vector_add in this build");
}

std::uint64_t compiles(tune::Device& dev) {
  if (auto* sim = dynamic_cast<tune::testing::SimDevice*>(&dev)) return sim->compiles();
#ifdef TUNE_HAVE_VULKAN
  if (auto d = tune::vulkan::diagnostics(dev)) return d->shaderc_compiles;
#endif
  return 0;
}

// The steady clock (CLOCK_MONOTONIC, one clock for every process of the host) in ns: the
// parent passes it at spawn so the child can tell the cost from exec to its first result.
std::int64_t steady_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// The bundle made from `backend`'s populated database, beside the databases (in `dir`, or the
// directory of the database file `db`).
fs::path bundle_for(const fs::path& db, const std::string& backend) {
  return db.parent_path() / (backend + ".tunebundle");
}

int child_main(const std::string& backend, const std::string& mode, const std::string& db,
               const std::string& result_file, Clock::time_point t_main, std::int64_t spawn_ns) {
  const auto t_open = Clock::now();
  std::unique_ptr<tune::Device> dev;
  if (backend == "sim") {
    auto sim = std::make_unique<tune::testing::SimDevice>();
    sim->set_record_events(false);
    dev = std::move(sim);
  } else {
    auto opened = tune::open_device(backend);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", opened.status().to_string().c_str());
      return 2;
    }
    dev = std::move(*opened);
  }
  const double open_ms = ms_since(t_open);

  const auto t_setup = Clock::now();  // the program's own work: its kernel and buffers
  auto kernel = find_kernel(backend);
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.status().to_string().c_str());
    return 2;
  }
  auto work = kernel->workload(kernel->demo_sizes.front());
  if (tune::Status st = work->setup(*dev, 42); !st.ok()) {
    std::fprintf(stderr, "setup: %s\n", st.to_string().c_str());
    return 2;
  }

  const double setup_ms = ms_since(t_setup);
  const auto t_store = Clock::now();
  std::shared_ptr<tune::TuningStore> store = tune::SqliteStore::open(db);
  const double store_ms = ms_since(t_store);

  tune::AutotunerOptions opts;
  opts.store = store;
  if (mode.rfind("bundle", 0) == 0) opts.bundles = {bundle_for(fs::path(db), backend).string()};
  opts.print = false;
  opts.disable = false;
  opts.bench.warmup_ms = 2;  // as `tune demo --quick`
  opts.bench.rep_ms = 10;
  tune::ResultSource source = tune::ResultSource::memory;
  opts.listener = [&source](const tune::TuningReport& r) { source = r.source; };

  const auto t_make = Clock::now();
  auto tuner = tune::Autotuner::make(kernel->def, opts);
  if (!tuner.ok()) {
    std::fprintf(stderr, "%s\n", tuner.status().to_string().c_str());
    return 2;
  }
  const double make_ms = ms_since(t_make);

  // The first call: the measurement.
  const std::uint64_t compiles0 = compiles(*dev);
  const auto t_first = Clock::now();
  tune::Status st = (*tuner)->run(*dev, work->args());
  const double first_ms = ms_since(t_first);
  if (st.ok()) st = dev->synchronize();
  // The whole process cost up to the first result: from main() and from the parent's spawn.
  const auto t_result = Clock::now();
  const double main_to_first_ms =
      std::chrono::duration<double, std::milli>(t_result - t_main).count();
  const double exec_to_first_ms = static_cast<double>(steady_ns(t_result) - spawn_ns) / 1e6;
  if (!st.ok()) {
    std::fprintf(stderr, "first run: %s\n", st.to_string().c_str());
    return 2;
  }
  const std::uint64_t first_compiles = compiles(*dev) - compiles0;
  std::string origin = "-";  // the bundle the winner's row came from
  if (auto rep = (*tuner)->last_report(*dev, work->args())) {
    source = rep->source;
    for (const tune::ConfigResult& r : rep->results)
      if (r.config == rep->winner && !r.origin.empty()) origin = r.origin;
  }
  const tune::ResultSource first_source = source;  // the listener also hears tuner2 below

  // A known key in the same process: the hot path, for contrast.
  const auto t_hot = Clock::now();
  st = (*tuner)->run(*dev, work->args());
  const double hot_us = ms_since(t_hot) * 1e3;
  if (st.ok()) st = dev->synchronize();

  // The compiled-binary cache warm: a second Autotuner's first call on the same device.
  const std::uint64_t compiles1 = compiles(*dev);
  auto tuner2 = tune::Autotuner::make(kernel->def, opts);
  const auto t_warm = Clock::now();
  if (st.ok()) st = (*tuner2)->run(*dev, work->args());
  const double warm_ms = ms_since(t_warm);
  if (st.ok()) st = dev->synchronize();
  const std::uint64_t warm_compiles = compiles(*dev) - compiles1;
  if (st.ok()) st = work->poison_outputs(*dev);
  if (st.ok()) st = (*tuner2)->run(*dev, work->args());
  if (st.ok()) st = dev->synchronize();
  // The winner computes the right thing (the simulated device runs no kernel body).
  if (st.ok() && backend != "sim") st = work->check(*dev);
  if (!st.ok()) {
    std::fprintf(stderr, "later runs: %s\n", st.to_string().c_str());
    return 2;
  }

  const std::string device = dev->info().name;
  (*tuner2)->release(*dev);
  (*tuner)->release(*dev);
  work.reset();
  std::ofstream out(result_file, std::ios::trunc);
  out << "main_first_ms " << main_to_first_ms << "\nexec_first_ms " << exec_to_first_ms
      << "\nsetup_ms " << setup_ms << "\nopen_ms " << open_ms << "\nstore_ms " << store_ms
      << "\nmake_ms " << make_ms << "\nfirst_ms " << first_ms << "\nfirst_compiles "
      << first_compiles << "\nhot_us " << hot_us << "\nwarm_ms " << warm_ms << "\nwarm_compiles "
      << warm_compiles << "\nsource " << tune::to_string(first_source) << "\norigin " << origin
      << "\ndevice " << device << "\n";
  return out.good() ? 0 : 2;
}

// ---------------------------------------------------------------------------------------------
// Parent: spawns the children, feeds Google Benchmark, prints a table.

struct Sample {
  double process_ms = 0;  // spawn to exit, as the parent sees it
  std::map<std::string, std::string> fields;
  double num(const std::string& k) const {
    auto it = fields.find(k);
    return it == fields.end() ? 0.0 : std::stod(it->second);
  }
};

struct Scenario {
  std::string backend;  // "sim" or "vulkan"
  std::string mode;     // "cold" or "scratch"
  std::vector<Sample> samples;
};

fs::path g_scratch;
std::string g_self;

// Runs one child; returns false (with its stderr in `error`) when it failed.
bool spawn_child(const std::string& backend, const std::string& mode, const fs::path& db,
                 Sample* sample, std::string* error) {
  const fs::path result = g_scratch / "result.txt";
  const fs::path err = g_scratch / "child-stderr.txt";
  fs::remove(result);
  std::vector<std::string> args = {g_self,
                                   "--child",
                                   backend,
                                   mode,
                                   db.string(),
                                   result.string(),
                                   std::to_string(steady_ns(Clock::now()))};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const auto t0 = Clock::now();
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, g_self.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    *error = std::string("posix_spawn: ") + std::strerror(rc);
    return false;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  sample->process_ms = ms_since(t0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(err);
    std::ostringstream s;
    s << in.rdbuf();
    *error = "child " + backend + " " + mode + " failed: " + s.str();
    return false;
  }
  std::ifstream in(result);
  std::string line;
  while (std::getline(in, line)) {
    const auto sp = line.find(' ');
    if (sp != std::string::npos) sample->fields[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return true;
}

fs::path db_for(const std::string& backend) { return g_scratch / (backend + ".db"); }

// TUNE_CACHE_DIR of every child: the compiled-variant caches (the database is passed apart).
fs::path compiled_dir() { return g_scratch / "compiled"; }

// One Google Benchmark repetition = one fresh process; its manual time is the first run().
void run_scenario(benchmark::State& state, Scenario* sc) {
  for (auto _ : state) {
    fs::path db = db_for(sc->backend);
    const bool bundle = sc->mode.rfind("bundle", 0) == 0;
    if (sc->mode == "scratch" || bundle) {  // an empty database of its own
      db = g_scratch / (sc->backend + "-" + sc->mode + ".db");
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db.string() + suffix);
    }
    // The simulated device compiles nothing: its rows leave the Vulkan caches alone.
    if (sc->backend != "sim" &&
        (sc->mode == "scratch" || sc->mode == "nobin" || sc->mode == "bundle_nobin"))
      fs::remove_all(compiled_dir());
    Sample s;
    std::string error;
    if (!spawn_child(sc->backend, sc->mode, db, &s, &error)) {
      state.SkipWithError(error.c_str());
      break;
    }
    const std::string want = sc->mode == "scratch" ? "tuned" : "disk";
    const std::string want_origin =
        bundle ? bundle_for(db, sc->backend).string() : std::string("-");
    if (s.fields["source"] != want || s.fields["origin"] != want_origin) {
      const std::string msg = "expected source " + want + " from " + want_origin + ", got " +
                              s.fields["source"] + " from " + s.fields["origin"];
      state.SkipWithError(msg.c_str());
      break;
    }
    state.SetIterationTime(s.num("first_ms") / 1e3);
    state.counters["process_ms"] = s.process_ms;
    state.counters["open_ms"] = s.num("open_ms");
    state.counters["store_ms"] = s.num("store_ms");
    state.counters["warm_ms"] = s.num("warm_ms");
    state.counters["compiles"] = s.num("first_compiles");
    sc->samples.push_back(std::move(s));
  }
}

const char* scenario_name(const std::string& mode) {
  if (mode == "cold") return "disk";
  if (mode == "nobin" || mode == "bundle" || mode == "bundle_nobin") return mode.c_str();
  return "empty";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median of Autotuner::make plus the first run() of `mode` on `backend` (the bundle is read
// in make); 0 when the row did not run.
double first_ms(const std::vector<std::unique_ptr<Scenario>>& scenarios, const std::string& backend,
                const std::string& mode) {
  for (const auto& sc : scenarios) {
    if (sc->backend != backend || sc->mode != mode || sc->samples.empty()) continue;
    std::vector<double> v;
    for (const auto& s : sc->samples) v.push_back(s.num("make_ms") + s.num("first_ms"));
    return median(v);
  }
  return 0;
}

// A bundle-served first call against the database-served one and a full tuning, per device.
void print_ratios(const std::vector<std::unique_ptr<Scenario>>& scenarios) {
  std::printf("\nAutotuner::make + the first run(), ratios of medians:\n");
  std::vector<std::string> seen;
  for (const auto& sc : scenarios) {
    if (std::find(seen.begin(), seen.end(), sc->backend) != seen.end()) continue;
    seen.push_back(sc->backend);
    const double disk = first_ms(scenarios, sc->backend, "cold");
    const double bundle = first_ms(scenarios, sc->backend, "bundle");
    const double empty = first_ms(scenarios, sc->backend, "scratch");
    const double nobin = first_ms(scenarios, sc->backend, "nobin");
    const double bundle_nobin = first_ms(scenarios, sc->backend, "bundle_nobin");
    if (disk <= 0 || bundle <= 0 || empty <= 0) continue;
    std::printf("%-8s bundle / disk %.2fx, bundle / empty %.4fx, empty / disk %.0fx",
                sc->backend.c_str(), bundle / disk, bundle / empty, empty / disk);
    if (nobin > 0 && bundle_nobin > 0)
      std::printf(", bundle_nobin / nobin %.2fx, bundle_nobin / empty %.4fx", bundle_nobin / nobin,
                  bundle_nobin / empty);
    std::printf("\n");
  }
}

void print_table(const std::vector<std::unique_ptr<Scenario>>& scenarios) {
  std::printf(
      "\nCold start in a fresh process, medians over the processes of each row (ms; hot in us)\n");
  std::printf("%-8s %-12s %4s %9s %9s %9s %8s %9s %8s %8s %9s %9s %8s %9s %9s  %s\n", "device",
              "cache", "n", "process", "exec_1st", "main_1st", "setup", "open_dev", "store", "make",
              "first", "compiles", "hot_us", "warm_bin", "warm_cmp", "device name");
  for (const auto& sc : scenarios) {
    if (sc->samples.empty()) continue;
    auto col = [&](const char* k) {
      std::vector<double> v;
      for (const auto& s : sc->samples) v.push_back(k == nullptr ? s.process_ms : s.num(k));
      return median(v);
    };
    std::printf(
        "%-8s %-12s %4zu %9.1f %9.1f %9.1f %8.1f %9.1f %8.2f %8.2f %9.2f %9.0f %8.1f %9.2f %9.0f  "
        "%s\n",
        sc->backend.c_str(), scenario_name(sc->mode), sc->samples.size(), col(nullptr),
        col("exec_first_ms"), col("main_first_ms"), col("setup_ms"), col("open_ms"),
        col("store_ms"), col("make_ms"), col("first_ms"), col("first_compiles"), col("hot_us"),
        col("warm_ms"), col("warm_compiles"), sc->samples.front().fields.at("device").c_str());
  }
  std::printf(
      "process: spawn to exit; exec_1st: spawn to the first result; main_1st: main() to the "
      "first result;\nsetup: the program's own kernel lookup and buffers (not libtune's); "
      "open_dev: open_device(); store: SqliteStore::open; make: Autotuner::make (a bundle is "
      "read there); first: the first run()\n(compiles: shaderc/sim compiles in it); hot_us: a "
      "second run() of the same "
      "key; warm_bin: a\nsecond Autotuner's first run() in the same process (warm_cmp: compiles "
      "in it).\ncache: disk = result and compiled variants on disk; nobin = result on disk, "
      "SPIR-V and\npipeline caches emptied first; empty = nothing on disk; bundle(_nobin) = the "
      "result only in a\nbundle, an empty database (compiled variants as disk, nobin).\n");
  print_ratios(scenarios);
}

}  // namespace

int main(int argc, char** argv) {
  const auto t_main = Clock::now();
  if (argc == 7 && std::string(argv[1]) == "--child")
    return child_main(argv[2], argv[3], argv[4], argv[5], t_main, std::atoll(argv[6]));

  g_self = fs::read_symlink("/proc/self/exe").string();
  {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/bench-cache-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    g_scratch = templ;
  }
  // The children's compiled-variant caches live in the scratch directory, not the user's.
  ::setenv("TUNE_CACHE_DIR", compiled_dir().c_str(), 1);
  int reps = 7;
  if (const char* r = std::getenv("BENCH_CACHE_REPS")) reps = std::max(1, std::atoi(r));

  benchmark::Initialize(&argc, argv);
  std::vector<std::string> backends = {"sim"};
#ifdef TUNE_HAVE_VULKAN
  backends.push_back("vulkan");
#endif
#ifdef TUNE_HAVE_CUDA
  backends.push_back("cuda");  // skipped (with the reason) where no CUDA device opens
#endif
#ifdef TUNE_HAVE_HIP
  backends.push_back("hip");  // likewise
#endif
  std::vector<std::unique_ptr<Scenario>> scenarios;
  for (const auto& backend : backends) {
    // The first run of a program: tune into the scratch database.
    Sample s;
    std::string error;
    if (!spawn_child(backend, "populate", db_for(backend), &s, &error) ||
        s.fields["source"] != "tuned") {
      std::fprintf(
          stderr, "skipping %s: %s\n", backend.c_str(),
          error.empty() ? ("populating gave source " + s.fields["source"]).c_str() : error.c_str());
      continue;
    }
    // The bundle an application ships, made from that database.
    if (auto b = tune::create_bundle(db_for(backend).string(),
                                     bundle_for(db_for(backend), backend).string());
        !b.ok()) {
      std::fprintf(stderr, "skipping %s: %s\n", backend.c_str(), b.status().to_string().c_str());
      continue;
    }
    for (const char* mode : {"cold", "nobin", "bundle", "bundle_nobin", "scratch"}) {
      const bool nobin = std::string(mode).find("nobin") != std::string::npos;
      if (backend == "sim" && nobin) continue;  // it compiles nothing
      auto sc = std::make_unique<Scenario>(Scenario{backend, mode, {}});
      const std::string name =
          std::string("BM_FirstCall/") + backend + "/" + scenario_name(sc->mode);
      benchmark::RegisterBenchmark(name.c_str(), run_scenario, sc.get())
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1)
          ->Repetitions(sc->mode == "scratch" ? std::max(1, reps / 2) : reps)
          ->ReportAggregatesOnly(true);
      scenarios.push_back(std::move(sc));
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_table(scenarios);
  std::error_code ec;
  fs::remove_all(g_scratch, ec);
  return 0;
}
