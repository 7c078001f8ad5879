// tuning_study record: times a kernel's whole space and writes a replay file (usage: main.cpp).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "race.hpp"
#include "replay.hpp"
#include "study.hpp"

namespace study {

namespace {

// Compiles configs on `workers` threads in a given order while the caller times them: take(j)
// waits for the j-th. stop() makes the workers quit after the variant each has in hand.
class CompilePipeline {
 public:
  CompilePipeline(Device& dev, const KernelSource& src, std::vector<Config> order, unsigned workers)
      : dev_(dev), src_(src), order_(std::move(order)), slots_(order_.size()) {
    for (unsigned t = 0; t < std::max(1u, workers); ++t) pool_.emplace_back([this] { work(); });
  }
  ~CompilePipeline() {
    stop();
    for (auto& t : pool_) t.join();
  }
  void stop() { stop_ = true; }

  // The j-th variant and its compile wall time in ms; nullopt if `deadline` passes first.
  std::optional<std::pair<Result<std::unique_ptr<CompiledKernel>>, double>> take(
      std::size_t j, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!slots_[j].kernel) {
      if (Clock::now() >= deadline) return std::nullopt;
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
    auto out = std::make_pair(std::move(*slots_[j].kernel), slots_[j].ms);
    slots_[j].kernel.reset();
    return out;
  }
  std::size_t compiled() const { return done_; }

 private:
  void work() {
    for (std::size_t i = next_++; i < order_.size() && !stop_; i = next_++) {
      auto t0 = Clock::now();
      auto r = dev_.compile(src_, order_[i]);
      const double ms = ms_since(t0);
      {
        std::lock_guard<std::mutex> lock(mu_);
        slots_[i].kernel.emplace(std::move(r));
        slots_[i].ms = ms;
      }
      ++done_;
      cv_.notify_all();
    }
  }

  struct Slot {
    std::optional<Result<std::unique_ptr<CompiledKernel>>> kernel;
    double ms = 0;
  };
  Device& dev_;
  const KernelSource& src_;
  std::vector<Config> order_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<std::size_t> next_{0}, done_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> pool_;
};

bool same_dims(const std::vector<ConfigSpace::Dimension>& a,
               const std::vector<ConfigSpace::Dimension>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].values != b[i].values) return false;
  return true;
}

}  // namespace

// Times every configuration of one kernel's space at one size and writes a replay file
// (studies/replay.hpp) row by row: variants compile on all cores while the main thread verifies
// each once against the CPU reference and times it; a failure is a row with its reason. Rows
// are flushed as they are made, in a fixed shuffled order (a run cut short leaves a uniform
// sample of the space); --max-seconds stops cleanly, --resume FILE records only what FILE
// lacks and appends to it.
int cmd_record(const Options& o) {
  auto dev = open(o);
  const DeviceInfo& info = dev->info();
  print_device(info, o);
  Options ko = o;
  if (ko.kernel.empty()) ko.kernel = "matmul_f32";
  auto ks = kernels_for(*dev, ko);
  const auto& k = ks.front();
  Size size = o.large ? large_size(k) : k.demo_sizes.front();
  if (o.quick && o.space == "wide" && is_matmul(k.name)) size = {64, 64, 64};
  if (!o.size.empty()) {
    auto s = parse_size(o.size);
    if (!s) die("--size", Status(StatusCode::invalid_argument, "expected e.g. 256x256x256"));
    size = *s;
  }
  ConfigSpace space = k.def.space;
  std::string space_note = "the bundled space";
  if (o.space == "wide") {
    auto wide = kernels::wide_matmul_f32_space(k, dev->language());
    if (!wide.ok()) die("--space wide", wide.status());
    space = std::move(*wide);
    space_note = "the wide space (matmul_f32's own parameters over wider domains)";
  } else if (o.space != "bundled") {
    die("--space", Status(StatusCode::invalid_argument, "bundled or wide"));
  }
  auto configs = space.enumerate(info);
  if (!configs.ok()) die("enumerate", configs.status());

  TimingPolicy b;
  if (o.quick) {
    b.warmup_ms = 1;
    b.rep_ms = 5;
    b.estimate_runs = 2;
    b.min_reps = 3;
    b.max_reps = 100;
  } else {
    b.warmup_ms = 2;
    b.rep_ms = 15;
    b.estimate_runs = 3;
    b.min_reps = 10;
    b.max_reps = 500;
  }
  if (o.long_ms > 0) b.rep_ms = o.long_ms;
  const std::string timing = "per config: verified once, then warmup " + fmt("%.0f", b.warmup_ms) +
                             " ms, " + fmt("%.0f", b.rep_ms) + " ms of reps (" +
                             std::to_string(b.min_reps) + ".." + std::to_string(b.max_reps) +
                             "), L2 flushed before each rep; median of the reps";

  // The file: a new one under --out, or --resume's, whose header must describe this run.
  std::vector<std::pair<std::string, std::string>> meta = {
      {"kernel", k.name},
      {"size", size_text(size)},
      {"space", o.space},
      {"device", info.name + " (" + info.backend + " " + info.arch + ")"},
      {"driver", info.driver_version},
      {"compiler", info.compiler_version},
      {"timing", timing},
      {"order", "shuffled, seed 1"},
      {"raw", std::to_string(space.raw_size())},
      {"accepted", std::to_string(configs->size())},
  };
  std::filesystem::path path = o.resume;
  std::set<std::string> have;
  if (!o.resume.empty()) {
    auto rec = replay::read_file(o.resume);
    if (!rec.ok()) die("--resume", rec.status());
    for (const char* key : {"kernel", "size", "space", "device"}) {
      std::string want;
      for (const auto& [mk, mv] : meta)
        if (mk == key) want = mv;
      if (rec->meta_value(key) != want)
        die("--resume " + o.resume,
            Status(StatusCode::invalid_argument, std::string("recorded ") + key + " '" +
                                                     rec->meta_value(key) + "', this run '" + want +
                                                     "'"));
    }
    if (!space.is_list() && !same_dims(rec->dims, space.dimensions()))
      die("--resume " + o.resume,
          Status(StatusCode::invalid_argument, "its dimensions differ from this space's"));
    for (const auto& r : rec->rows) have.insert(r.config.to_string());
  } else {
    path = std::filesystem::path(o.out) / ("replay_" + info.backend + "_" + k.name + "_" +
                                           size_text(size) + "_" + o.space + ".tsv");
    std::filesystem::create_directories(o.out);
  }
  std::ofstream out(path, o.resume.empty() ? std::ios::trunc : std::ios::app);
  if (!out) die("open " + path.string(), Status(StatusCode::internal, "cannot write"));
  if (o.resume.empty()) {
    out << replay::header(space, meta);
  } else {
    // A run killed mid-row leaves a line without its newline: end it (the reader drops it).
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      if (in.get() != '\n') out << '\n';
    }
    out << "# resumed\t" << have.size() << " rows present\n";
  }
  out.flush();

  std::vector<Config> order = *configs;
  std::mt19937_64 rng(1);
  std::shuffle(order.begin(), order.end(), rng);
  std::erase_if(order, [&](const Config& c) { return have.count(c.to_string()) != 0; });
  const unsigned jobs = o.jobs > 0 ? static_cast<unsigned>(o.jobs)
                                   : std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = jobs > 2 ? jobs - 1 : 1;  // one core stays with the timing thread
  progress(
      "%s %s: %zu accepted configs of %llu (%s); %zu recorded already, %zu to record; "
      "compiling on %u threads -> %s",
      k.name.c_str(), size_text(size).c_str(), configs->size(),
      static_cast<unsigned long long>(space.raw_size()), space_note.c_str(), have.size(),
      order.size(), workers, path.string().c_str());

  auto w = make_workload(*dev, k, size);
  auto before = before_for(k.def, w->args());
  const auto deadline =
      o.max_seconds > 0
          ? g_start + std::chrono::milliseconds(static_cast<std::int64_t>(o.max_seconds * 1000))
          : Clock::time_point::max();
  const auto t1 = Clock::now();
  std::size_t done = 0, failed = 0;
  double compile_ms_sum = 0;
  bool stopped = false;
  {
    CompilePipeline pipe(*dev, *k.def.source_for(dev->language()), order, workers);
    for (std::size_t j = 0; j < order.size(); ++j) {
      auto got = Clock::now() < deadline ? pipe.take(j, deadline) : std::nullopt;
      if (!got) {
        stopped = true;
        break;
      }
      const Config& c = order[j];
      auto& [compiled, compile_ms] = *got;
      compile_ms_sum += compile_ms;
      Status st = compiled.ok() ? Status() : compiled.status();
      if (st.ok()) st = verify(*dev, k, *w, c, **compiled);
      std::optional<SampleStats> stats;
      if (st.ok()) {
        auto r = time_kernel(*dev, **compiled, k.def.dims(c, w->args()), w->args(), b, before);
        if (r.ok())
          stats = *r;
        else
          st = r.status();
      }
      out << replay::row_line(c, stats ? &*stats : nullptr, compile_ms, st) << std::flush;
      ++done;
      if (!st.ok() && ++failed <= 20)
        progress("  {%s}: %s", c.to_string().c_str(), st.to_string().c_str());
      if (st.code() == StatusCode::device_lost) {
        pipe.stop();
        die("record (the row is written; --resume " + path.string() + " goes on)", st);
      }
      if (done % 100 == 0) {
        const double s = ms_since(t1) / 1000;
        progress("  recorded %zu / %zu in %.0f s (%zu compiled), about %.0f s to go", done,
                 order.size(), s, pipe.compiled(),
                 s / static_cast<double>(done) * static_cast<double>(order.size() - done));
      }
    }
    pipe.stop();
  }
  out.close();
  const double run_s = ms_since(t1) / 1000;
  if (stopped)
    progress(
        "stopped by --max-seconds %.0f: %zu of %zu recorded in this run; go on with "
        "--resume %s",
        o.max_seconds, done, order.size(), path.string().c_str());
  w.reset();

  // The summary, over the whole file (earlier runs' rows included).
  auto rec = replay::read_file(path.string());
  if (!rec.ok()) die("reading back " + path.string(), rec.status());
  std::vector<double> sorted;
  std::map<std::string, int> codes;
  const replay::Row* best = nullptr;
  double def_ns = kInf;
  const Config def = replay::project(k.default_config, rec->dims);
  for (const auto& r : rec->rows) {
    if (!r.ok()) {
      ++codes[r.code()];
      continue;
    }
    sorted.push_back(r.median_ns);
    if (!best || r.median_ns < best->median_ns) best = &r;
    if (replay::project(r.config, rec->dims) == def) def_ns = r.median_ns;
  }
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(rec->rows.size());
  auto frac_within = [&](double f) {
    if (sorted.empty()) return 0.0;
    const auto m =
        std::upper_bound(sorted.begin(), sorted.end(), sorted.front() * f) - sorted.begin();
    return static_cast<double>(m) / n;
  };
  const bool complete = rec->rows.size() == configs->size();
  std::printf("### Recorded space: %s %s (%s)%s\n\n", k.name.c_str(), size_text(size).c_str(),
              space_note.c_str(), complete ? "" : ", PARTIAL");
  std::printf(
      "| accepted configs | raw points | recorded | timed ok | failed | best | best median | "
      "worst median | default config median | within 5%% of best | within 20%% | this run: "
      "rows, wall s |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf(
      "| %zu | %llu | %zu | %zu | %zu | %s | %s | %s | %s | %.1f%% | %.1f%% | %zu, %.1f |\n\n",
      configs->size(), static_cast<unsigned long long>(space.raw_size()), rec->rows.size(),
      sorted.size(), rec->rows.size() - sorted.size(),
      best ? best->config.to_string().c_str() : "-", ns_text(best ? best->median_ns : kInf).c_str(),
      ns_text(sorted.empty() ? kInf : sorted.back()).c_str(), ns_text(def_ns).c_str(),
      100 * frac_within(1.05), 100 * frac_within(1.20), done, run_s);
  for (const auto& [code, m] : codes) std::printf("- failed with %s: %d\n", code.c_str(), m);
  std::printf(
      "Timing %s. Compiling: %.1f s of variant compile wall time on %u threads this run. "
      "Replay: `search_eval --replay %s`%s\n\n",
      timing.c_str(), compile_ms_sum / 1000, workers, path.string().c_str(),
      complete ? "" : (" (partial: go on with `--resume " + path.string() + "`)").c_str());
  return codes.count("wrong_output") == 0 ? 0 : 2;
}

}  // namespace study
