// Shipping tuned kernels with an application (docs/deploy.md): three steps that are three
// machines in real life, run here one after the other on one Vulkan device, with libtune's
// bundled vector_add kernel (tune::kernels).
//   1. Build farm: tune the size the application ships for (n = 65536) into the farm's
//      database, and write its decisions as a bundle (tune::create_bundle; the CLI's
//      `tune bundle create` does the same). The bundle is installed beside the application.
//   2. Production: the application on a user's machine, with an empty database of its own,
//      the bundle in AutotunerOptions::bundles, FallbackPolicy::keep (never tune in
//      production) and AutotunerOptions::record: n = 65536 is served by the bundle, without
//      tuning; n = 1000, which the bundle does not hold, is served by the fallback chain and
//      recorded (one JSON line: kernel, source hash, key, argument sizes, device).
//   3. Offline: the record is tuned with tune::tune_recorded (or `tune record tune <file>`)
//      into the farm's database, and the next bundle made from it serves n = 1000 too.
// Every launch's output is checked against the CPU reference. Exits 0 when every step behaves
// so, 1 naming the one that did not, 77 without a Vulkan device. `deploy_app DIR` keeps the
// bundle, the record and the databases in DIR (default: a fresh directory under /tmp); its own
// files from an earlier run there are removed first, so that every run starts from nothing.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <tune/kernels/bundled.hpp>
#include <tune/tune.hpp>

namespace {

using namespace tune;

constexpr std::int64_t kShipped = 65536;  // the size the bundle holds
constexpr std::int64_t kMissed = 1000;    // a size only a user's run meets

// Prints "FAILED: what" and returns false when `ok` is not.
bool expect(bool ok, const std::string& what) {
  if (!ok) std::printf("FAILED: %s\n", what.c_str());
  return ok;
}

std::size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

// Short timing budgets: lavapipe runs the "GPU" on the host's cores; a real farm keeps the
// default budgets.
AutotunerOptions quick(AutotunerOptions o) {
  o.bench.warmup_ms = 2;
  o.bench.rep_ms = 10;
  return o;
}

// The bundle the winner's row came from (ConfigResult::origin); empty: not from a bundle.
std::string bundle_of(const TuningReport& r) {
  for (const ConfigResult& c : r.results)
    if (c.config == r.winner) return c.origin;
  return {};
}

// "tuned", "bundle <path>", "database", "fallback chain (nearest key)", ...
std::string served_by(const TuningReport& r) {
  if (r.source == ResultSource::fallback)
    return "fallback chain (" + std::string(to_string(r.fallback)) + ")";
  if (r.source == ResultSource::disk)
    return bundle_of(r).empty() ? "database" : "bundle " + bundle_of(r);
  return std::string(to_string(r.source));
}

// Launches `tuner` on a vector_add of `n` elements, checks the output, and returns the key's
// report (where its configuration came from).
Result<TuningReport> launch(Autotuner& tuner, Device& dev, std::int64_t n) {
  std::unique_ptr<kernels::Workload> w = kernels::make_vector_add(n);
  TUNE_RETURN_IF_ERROR(w->setup(dev, 42));
  TUNE_RETURN_IF_ERROR(tuner.run(dev, w->args()));
  TUNE_RETURN_IF_ERROR(w->check(dev));
  std::optional<TuningReport> report = tuner.last_report(dev, w->args());
  if (!report) return Status(StatusCode::internal, "no report for n=" + std::to_string(n));
  std::printf("  n=%-6lld %s: %s\n", static_cast<long long>(n), served_by(*report).c_str(),
              report->winner.to_string().c_str());
  return *report;
}

// 1. The farm tunes kShipped into farm.db and writes the bundle.
bool build_farm(Device& dev, const KernelDef& def, const std::string& dir) {
  std::printf("1. build farm: tune n=%lld, write the bundle\n", static_cast<long long>(kShipped));
  AutotunerOptions o;
  o.store = SqliteStore::open(dir + "/farm.db");
  o.fallback = FallbackPolicy::tune;
  auto tuner = Autotuner::make(def, quick(o));
  if (!expect(tuner.ok(), "farm tuner: " + tuner.status().to_string())) return false;
  Result<TuningReport> r = launch(**tuner, dev, kShipped);
  if (!expect(r.ok(), "farm tuning: " + r.status().to_string())) return false;
  if (!expect(r->source == ResultSource::tuned, "the farm tunes n=65536")) return false;
  tuner->reset();  // its store closed before the bundle reads the database
  Result<BundleInfo> bundle = create_bundle(dir + "/farm.db", dir + "/app.tunebundle", {});
  if (!expect(bundle.ok(), "create_bundle: " + bundle.status().to_string())) return false;
  std::printf("  wrote %s: %zu decision(s)\n", bundle->path.c_str(), bundle->decisions.size());
  return true;
}

// 2. The application: its own empty database, the bundle, keep, record.
bool production(Device& dev, const KernelDef& def, const std::string& dir, std::size_t run) {
  std::printf("2. production run %zu: bundle shipped, fallback keep, misses recorded\n", run);
  const std::string record = dir + "/missed.jsonl";
  const std::string bundle = dir + "/app.tunebundle";
  const std::size_t recorded_before = lines_in(record);
  int tunings = 0;
  AutotunerOptions o;
  o.store = SqliteStore::open(dir + "/user" + std::to_string(run) + ".db");  // a fresh machine
  o.bundles = {bundle};
  o.fallback = FallbackPolicy::keep;
  o.record = record;
  o.listener = [&tunings](const TuningReport& r) { tunings += r.source == ResultSource::tuned; };
  auto tuner = Autotuner::make(def, o);
  if (!expect(tuner.ok(), "application tuner: " + tuner.status().to_string())) return false;
  Result<TuningReport> shipped = launch(**tuner, dev, kShipped);
  if (!expect(shipped.ok(), "n=65536: " + shipped.status().to_string())) return false;
  bool ok = expect(bundle_of(*shipped) == bundle, "n=65536 is served by the bundle");
  Result<TuningReport> missed = launch(**tuner, dev, kMissed);
  if (!expect(missed.ok(), "n=1000: " + missed.status().to_string())) return false;
  const std::size_t recorded = lines_in(record) - recorded_before;
  std::printf("  %d tuning(s), %zu key(s) recorded into %s\n", tunings, recorded, record.c_str());
  ok = expect(tunings == 0, "production never tunes") && ok;
  if (run == 1) {
    ok = expect(missed->source == ResultSource::fallback, "n=1000 is served by the chain") && ok;
    ok = expect(recorded == 1, "n=1000 is recorded, once") && ok;
  } else {
    ok = expect(bundle_of(*missed) == bundle, "n=1000 is served by the new bundle") && ok;
    ok = expect(recorded == 0, "nothing more is recorded") && ok;
  }
  return ok;
}

// 3. Offline: the record tuned into farm.db, the bundle written again.
bool offline(Device& dev, const KernelDef& def, const std::string& dir) {
  std::printf("3. offline: tune the record, write the bundle again\n");
  AutotunerOptions o;
  o.store = SqliteStore::open(dir + "/farm.db");
  o.fallback = FallbackPolicy::tune;
  auto tuner = Autotuner::make(def, quick(o));
  if (!expect(tuner.ok(), "offline tuner: " + tuner.status().to_string())) return false;
  Result<RecordTuning> done = tune_recorded(dir + "/missed.jsonl", dev, **tuner);
  if (!expect(done.ok(), "tune_recorded: " + done.status().to_string())) return false;
  for (const std::string& why : done->skipped) std::printf("  not tuned: %s\n", why.c_str());
  std::printf("  %zu key(s) tuned\n", done->tuned);
  if (!expect(done->tuned == 1 && done->skipped.empty(), "the recorded key is tuned")) return false;
  tuner->reset();  // its store closed before the bundle reads the database
  Result<BundleInfo> bundle = create_bundle(dir + "/farm.db", dir + "/app.tunebundle", {});
  if (!expect(bundle.ok(), "create_bundle: " + bundle.status().to_string())) return false;
  std::printf("  wrote %s: %zu decision(s)\n", bundle->path.c_str(), bundle->decisions.size());
  return expect(bundle->decisions.size() == 2, "the new bundle holds both sizes");
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  if (argc > 1) {
    dir = argv[1];
    std::filesystem::create_directories(dir);
    for (const char* f : {"farm.db", "app.tunebundle", "missed.jsonl", "user1.db", "user2.db"})
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove(dir + "/" + f + suffix);
  } else {
    char templ[] = "/tmp/deploy_app-XXXXXX";
    if (::mkdtemp(templ) == nullptr) return 1;
    dir = templ;
  }
  auto dev = open_device("vulkan");
  if (!dev.ok()) {
    std::printf("no Vulkan device: %s\n", dev.status().to_string().c_str());
    return 77;
  }
  std::optional<kernels::BundledKernel> k = kernels::bundled_kernel(Language::glsl, "vector_add");
  if (!k) {
    std::printf("FAILED: this libtune has no GLSL vector_add\n");
    return 1;
  }
  std::printf("device: %s; files in %s\n", (*dev)->info().name.c_str(), dir.c_str());
  const bool ok = build_farm(**dev, k->def, dir) && production(**dev, k->def, dir, 1) &&
                  offline(**dev, k->def, dir) && production(**dev, k->def, dir, 2);
  if (argc <= 1) std::filesystem::remove_all(dir);
  std::printf("%s\n", ok ? "deploy flow: ok" : "deploy flow: FAILED");
  return ok ? 0 : 1;
}
