#include "tune/autotuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "tune/cache_validation.hpp"
#include "tune/hash.hpp"
#include "tune/log.hpp"

namespace tune {

std::string_view to_string(ResultSource s) noexcept {
  switch (s) {
    case ResultSource::memory:
      return "memory";
    case ResultSource::disk:
      return "disk";
    case ResultSource::tuned:
      return "tuned";
    case ResultSource::single:
      return "single";
    case ResultSource::disabled:
      return "disabled";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string first_line(const std::string& s, std::size_t max = 160) {
  std::string out = s.substr(0, s.find('\n'));
  if (out.size() > max) out = out.substr(0, max) + "...";
  return out;
}

std::int64_t value_key(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  return static_cast<std::int64_t>(stable_hash(std::get<std::string>(v)));
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && (std::string(v) == "1" || std::string(v) == "true");
}

// One compiled variant (or the reason it could not be built), shared by every key that uses it.
struct Variant {
  std::unique_ptr<CompiledKernel> kernel;
  Status status;
  double compile_ms = 0;
};
using VariantFuture = std::shared_future<std::shared_ptr<Variant>>;

// A remembered decision for one (device, key). Immutable once published.
struct Entry {
  TuningKey key;
  const Device* device = nullptr;
  Config config;
  std::shared_ptr<Variant> variant;
};

// Open-addressing table of published entries. Readers load slots with acquire and never lock;
// writers (under Impl::mu) fill empty slots with release, or publish a bigger copy.
struct Table {
  explicit Table(std::size_t cap) : slots(cap), mask(cap - 1) {}
  std::vector<std::atomic<const Entry*>> slots;
  std::size_t mask;
  std::size_t count = 0;  // written under Impl::mu only

  const Entry* find(const TuningKey& key, const Device* dev) const noexcept {
    for (std::size_t i = key.hash & mask;; i = (i + 1) & mask) {
      const Entry* e = slots[i].load(std::memory_order_acquire);
      if (e == nullptr) return nullptr;
      if (e->device == dev && e->key == key) return e;
    }
  }
  void insert(const Entry* e) noexcept {
    std::size_t i = e->key.hash & mask;
    while (slots[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & mask;
    slots[i].store(e, std::memory_order_release);
    ++count;
  }
};

struct Inflight {
  bool done = false;
  bool background = false;  // callers launch the nearest tuned key's config meanwhile
  Status status;
};

// A background tuning: its thread and the copies of the caller's buffers it times on.
struct BackgroundJob {
  const Device* device = nullptr;
  std::thread thread;
};

}  // namespace

struct Autotuner::Impl {
  KernelDef def;
  AutotunerOptions opts;
  KeyBuilder keys;
  bool print = false;
  bool disabled = false;
  std::shared_ptr<TuningStore> store;
  std::vector<int> zero_idx, restore_idx;  // buffer argument positions of the hooks

  std::atomic<const Table*> table{nullptr};

  std::mutex mu;  // guards everything below
  std::condition_variable cv;
  std::vector<std::unique_ptr<Table>> tables;  // current and retired; readers may hold any
  std::vector<std::unique_ptr<Entry>> entries;
  std::vector<std::unique_ptr<Entry>> released;  // entries of released devices, never probed
  std::unordered_map<std::uint64_t, std::shared_ptr<Inflight>> inflight;
  std::map<std::pair<const Device*, std::string>, VariantFuture> variants;
  std::map<std::pair<const Device*, std::uint64_t>, TuningReport> reports;

  std::vector<BackgroundJob> jobs;            // guarded by mu; joined by join_jobs
  std::set<std::uint64_t> failed_background;  // keys whose background tuning failed

  ~Impl() {
    join_jobs(nullptr);
    // Compiles still running in the pool hold no reference to Impl; wait for them so that
    // kernels are destroyed before the caller destroys devices.
    for (auto& [k, f] : variants) f.wait();
  }

  // Joins the background tunings of `dev` (of every device when null).
  void join_jobs(const Device* dev) {
    std::vector<std::thread> to_join;
    {
      std::lock_guard lock(mu);
      for (auto it = jobs.begin(); it != jobs.end();) {
        if (dev == nullptr || it->device == dev) {
          to_join.push_back(std::move(it->thread));
          it = jobs.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& t : to_join) t.join();
  }

  // The tuned entry of `dev` nearest to `key`: same buffer types and heuristic values, least
  // distance over the key arguments in log2 space. Caller holds mu.
  const Entry* nearest(const Device& dev, const TuningKey& key) const {
    const int n = static_cast<int>(keys.specs().size());
    const Entry* best = nullptr;
    double best_d = 0;
    for (const auto& e : entries) {
      if (e->device != &dev || e->key.size != key.size) continue;
      bool same = true;
      for (int i = n; i < key.size; ++i) same = same && e->key.values[i] == key.values[i];
      if (!same) continue;
      double d = 0;
      for (int i = 0; i < n; ++i) {
        auto lg = [](std::int64_t v) {
          return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1)));
        };
        d += std::fabs(lg(e->key.values[i]) - lg(key.values[i]));
      }
      if (best == nullptr || d < best_d) {
        best = e.get();
        best_d = d;
      }
    }
    return best;
  }

  Status start_background(Device& dev, ArgList args, const TuningKey& key);

  // This call's heuristic parameters as a config (empty without heuristics).
  Config heuristic_values(const Device& dev, ArgList args) const {
    Config c;
    for (const auto& h : def.heuristics) c.set(h.param, h.fn(args, dev.info()));
    return c;
  }

  TuningKey make_key(const Device& dev, ArgList args) const noexcept {
    TuningKey k = keys.build(args, reinterpret_cast<std::uintptr_t>(&dev));
    if (!def.heuristics.empty()) {
      for (const auto& h : def.heuristics) k.push(value_key(h.fn(args, dev.info())));
      k.rehash();
    }
    return k;
  }

  std::string key_text(const Device& dev, const TuningKey& k, ArgList args) const {
    TuningKey base = k;
    base.size = static_cast<int>(keys.specs().size()) + 1;
    std::string s = keys.to_string(base);
    for (const auto& h : def.heuristics)
      s += "," + h.param + "=" + value_to_text(h.fn(args, dev.info()));
    return s;
  }

  Status resolve(Device& dev, ArgList args, const Entry** out);
  Status tune_key(Device& dev, ArgList args, const TuningKey& key, const Entry** out);
  Result<Entry> select(Device& dev, ArgList args, const TuningKey& key, TuningReport& report);
  Result<Entry> select_by_search(Device& dev, ArgList args, const TuningKey& key,
                                 const KernelSource& src, TuningReport& report,
                                 Clock::time_point t0);
  Result<Entry> finish(Device& dev, const TuningKey& key, TuningReport& report,
                       const Config& winner, std::shared_ptr<Variant> variant,
                       Clock::time_point t0);
  std::vector<VariantFuture> compile_all(Device& dev, const KernelSource& src,
                                         const std::vector<Config>& configs);
  void publish(std::unique_ptr<Entry> e);
};

namespace {

// Runs `fn(i)` for i in [0, n) on up to `threads` worker threads; returns immediately. Each
// call's result is delivered through the promise it fulfils.
void run_pool(std::size_t n, unsigned threads, std::function<void(std::size_t)> fn) {
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  auto shared_fn = std::make_shared<std::function<void(std::size_t)>>(std::move(fn));
  unsigned workers = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(n)));
  for (unsigned w = 0; w < workers; ++w) {
    std::thread([next, shared_fn, n] {
      for (std::size_t i = next->fetch_add(1); i < n; i = next->fetch_add(1)) (*shared_fn)(i);
    }).detach();
  }
}

// How long the Autotuner waits for the next compile before it gives the configurations
// already compiled another round of timing.
constexpr auto kRaceWhileCompilingMs = std::chrono::milliseconds(10);

enum class Wait : std::uint8_t { until_one_finishes, a_while, none };

// Removes from `pending` (indices into `futures`) and returns one whose result is ready. Waits
// for the first to finish, or gives up (nullopt) after kRaceWhileCompilingMs (a_while) or at
// once (none). Polls: futures have no wait-for-any, and a compile takes far longer than the
// 100 us between looks.
std::optional<std::size_t> take_finished(const std::vector<VariantFuture>& futures,
                                         std::vector<std::size_t>& pending, Wait wait) {
  const auto give_up = Clock::now() + kRaceWhileCompilingMs;
  for (;;) {
    for (std::size_t p = 0; p < pending.size(); ++p) {
      const std::size_t j = pending[p];
      if (futures[j].wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(p));
        return j;
      }
    }
    if (wait == Wait::none || (wait == Wait::a_while && Clock::now() >= give_up))
      return std::nullopt;
    futures[pending.front()].wait_for(std::chrono::microseconds(100));
  }
}

// Checks launch options against device limits before anything is compiled or launched.
Status check_limits(const Config& c, const DeviceInfo& info) {
  const Dim3& b = c.launch().block;
  if (info.max_threads_per_block != 0 && b.product() > info.max_threads_per_block) {
    return Status(StatusCode::out_of_resources,
                  "block " + std::to_string(b.x) + "x" + std::to_string(b.y) + "x" +
                      std::to_string(b.z) + " exceeds the device's " +
                      std::to_string(info.max_threads_per_block) + " threads per block");
  }
  if (info.max_block.x != 0 &&
      (b.x > info.max_block.x || b.y > info.max_block.y || b.z > info.max_block.z)) {
    return Status(StatusCode::out_of_resources, "block dimensions exceed the device's limits");
  }
  std::uint32_t smem_limit =
      std::max(info.shared_bytes_per_block, info.shared_bytes_per_block_optin);
  if (smem_limit != 0 && c.launch().shared_bytes > smem_limit) {
    return Status(StatusCode::out_of_resources,
                  "dynamic shared memory " + std::to_string(c.launch().shared_bytes) +
                      " B exceeds the device's " + std::to_string(smem_limit) + " B");
  }
  return {};
}

}  // namespace

std::vector<VariantFuture> Autotuner::Impl::compile_all(Device& dev, const KernelSource& src,
                                                        const std::vector<Config>& configs) {
  std::vector<VariantFuture> out(configs.size());
  auto todo = std::make_shared<
      std::vector<std::pair<Config, std::shared_ptr<std::promise<std::shared_ptr<Variant>>>>>>();
  {
    std::lock_guard lock(mu);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      auto k = std::make_pair(static_cast<const Device*>(&dev), configs[i].to_string());
      auto it = variants.find(k);
      if (it != variants.end()) {
        out[i] = it->second;
        continue;
      }
      auto p = std::make_shared<std::promise<std::shared_ptr<Variant>>>();
      out[i] = p->get_future().share();
      variants.emplace(k, out[i]);
      todo->emplace_back(configs[i], std::move(p));
    }
  }
  if (todo->empty()) return out;
  Device* d = &dev;
  const KernelSource* s = &src;  // owned by def, which outlives the pool (Impl waits)
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  run_pool(todo->size(), hw, [todo, d, s](std::size_t i) {
    auto v = std::make_shared<Variant>();
    const Config& c = (*todo)[i].first;
    auto t0 = Clock::now();
    v->status = check_limits(c, d->info());
    if (v->status.ok()) {
      auto k = d->compile(*s, c);
      if (k.ok())
        v->kernel = std::move(*k);
      else
        v->status = k.status();
    }
    v->compile_ms = ms_since(t0);
    (*todo)[i].second->set_value(std::move(v));
  });
  return out;
}

void Autotuner::Impl::publish(std::unique_ptr<Entry> e) {
  // Caller holds mu.
  const Table* cur = table.load(std::memory_order_relaxed);
  if (cur == nullptr || (cur->count + 1) * 2 > cur->slots.size()) {
    std::size_t cap = cur == nullptr ? 16 : cur->slots.size() * 2;
    auto t = std::make_unique<Table>(cap);
    for (const auto& old : entries) t->insert(old.get());
    table.store(t.get(), std::memory_order_release);
    tables.push_back(std::move(t));
  }
  tables.back()->insert(e.get());
  entries.push_back(std::move(e));
}

Status Autotuner::Impl::resolve(Device& dev, ArgList args, const Entry** out) {
  if (Status st = def.signature.check(args); !st.ok()) return st.with_context("kernel " + def.name);
  TuningKey key = make_key(dev, args);
  if (const Table* t = table.load(std::memory_order_acquire)) {
    if (const Entry* e = t->find(key, &dev)) {
      *out = e;
      return {};
    }
  }
  return tune_key(dev, args, key, out);
}

Status Autotuner::Impl::tune_key(Device& dev, ArgList args, const TuningKey& key,
                                 const Entry** out) {
  std::shared_ptr<Inflight> mine;
  {
    std::unique_lock lock(mu);
    for (;;) {
      if (const Table* t = table.load(std::memory_order_acquire)) {
        if (const Entry* e = t->find(key, &dev)) {
          *out = e;
          return {};
        }
      }
      auto it = inflight.find(key.hash);
      bool background = opts.mode == TuningMode::background;
      if (background && (it == inflight.end() || it->second->background)) {
        // Launch the nearest tuned key's config now; tune this key off the critical path.
        if (const Entry* near = nearest(dev, key)) {
          if (it == inflight.end() && !failed_background.count(key.hash)) {
            Status st = start_background(dev, args, key);
            if (!st.ok())
              log_warning("background tuning of " + def.name + " not started: " + st.to_string());
          }
          *out = near;
          return {};
        }
      }
      if (it == inflight.end()) break;
      auto other = it->second;
      cv.wait(lock, [&] { return other->done; });
      if (!other->status.ok()) return other->status;
    }
    mine = std::make_shared<Inflight>();
    inflight.emplace(key.hash, mine);
  }

  TuningReport report;
  auto selected = select(dev, args, key, report);

  std::lock_guard lock(mu);
  inflight.erase(key.hash);
  mine->done = true;
  if (selected.ok()) {
    auto e = std::make_unique<Entry>(std::move(*selected));
    *out = e.get();
    publish(std::move(e));
    reports[{&dev, key.hash}] = std::move(report);
  } else {
    mine->status = selected.status();
  }
  cv.notify_all();
  return mine->status;
}

Status Autotuner::Impl::start_background(Device& dev, ArgList args, const TuningKey& key) {
  // Caller holds mu. The tuning times on copies of the caller's buffers, taken now in queue
  // order, so the caller may reuse or free its buffers at once.
  auto copies = std::make_shared<std::vector<Buffer>>();
  auto copied_args = std::make_shared<std::vector<ArgValue>>(args.begin(), args.end());
  for (auto& a : *copied_args) {
    if (a.kind != ArgKind::buffer) continue;
    auto b = dev.alloc(a.buffer->size_bytes());
    if (!b.ok()) return b.status();
    TUNE_RETURN_IF_ERROR(dev.copy(**b, *a.buffer, a.buffer->size_bytes()));
    a.buffer = b->get();
    copies->push_back(std::move(*b));
  }
  auto job = std::make_shared<Inflight>();
  job->background = true;
  inflight.emplace(key.hash, job);
  Device* d = &dev;
  jobs.push_back({&dev, std::thread([this, d, key, copies, copied_args, job] {
                    TuningReport report;
                    auto selected = select(*d, *copied_args, key, report);
                    copies->clear();
                    std::lock_guard lock(mu);
                    inflight.erase(key.hash);
                    job->done = true;
                    if (selected.ok()) {
                      publish(std::make_unique<Entry>(std::move(*selected)));
                      reports[{d, key.hash}] = std::move(report);
                    } else {
                      job->status = selected.status();
                      failed_background.insert(key.hash);
                      log_warning("background tuning failed; the nearest key's config stays: " +
                                  selected.status().to_string());
                    }
                    cv.notify_all();
                  })});
  return {};
}

// Snapshots the hook buffers and runs hooks around every launch while tuning.
class HookRunner {
 public:
  HookRunner(Device& dev, const KernelDef& def, ArgList args, const std::vector<int>& zero,
             const std::vector<int>& restore)
      : dev_(dev), def_(def), args_(args), zero_(zero), restore_(restore) {}

  Status snapshot() {
    std::vector<int> all = zero_;
    all.insert(all.end(), restore_.begin(), restore_.end());
    for (int i : all) {
      DeviceBuffer* b = args_[static_cast<std::size_t>(i)].buffer;
      if (saved_.count(b)) continue;
      auto copy = dev_.alloc(b->size_bytes());
      if (!copy.ok()) return copy.status().with_context("saving buffer for tuning hooks");
      TUNE_RETURN_IF_ERROR(dev_.copy(**copy, *b, b->size_bytes()));
      saved_.emplace(b, std::move(*copy));
    }
    return {};
  }
  // Puts every hook buffer back as the caller left it.
  Status restore_all() {
    for (auto& [b, copy] : saved_) TUNE_RETURN_IF_ERROR(dev_.copy(*b, *copy, b->size_bytes()));
    return {};
  }
  void set_config(const Config* c) { config_ = c; }

  // Called once before each launch: the previous launch's post hook, then zero, restore, pre.
  Status before_launch() {
    TUNE_RETURN_IF_ERROR(flush_post());
    for (int i : zero_) {
      DeviceBuffer* b = args_[static_cast<std::size_t>(i)].buffer;
      TUNE_RETURN_IF_ERROR(dev_.fill(*b, 0, b->size_bytes() & ~std::uint64_t{3}));
    }
    for (int i : restore_) {
      DeviceBuffer* b = args_[static_cast<std::size_t>(i)].buffer;
      TUNE_RETURN_IF_ERROR(dev_.copy(*b, *saved_.at(b), b->size_bytes()));
    }
    if (def_.pre_hook) TUNE_RETURN_IF_ERROR(def_.pre_hook(dev_, args_, *config_));
    pending_post_ = true;
    return {};
  }
  Status flush_post() {
    if (pending_post_ && def_.post_hook) {
      pending_post_ = false;
      return def_.post_hook(dev_, args_, *config_);
    }
    pending_post_ = false;
    return {};
  }
  bool active() const {
    return !zero_.empty() || !restore_.empty() || def_.pre_hook || def_.post_hook;
  }

 private:
  Device& dev_;
  const KernelDef& def_;
  ArgList args_;
  const std::vector<int>& zero_;
  const std::vector<int>& restore_;
  const Config* config_ = nullptr;
  bool pending_post_ = false;
  std::map<DeviceBuffer*, Buffer> saved_;
};

// One launch of `kernel` with the hooks around it, then KernelDef::verify on its output. A
// verify failure is wrong_output (device_lost stays as it is); launch failures keep their code.
Status verify_once(Device& dev, const KernelDef& def, HookRunner& hooks,
                   const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                   const Config& config) {
  hooks.set_config(&config);
  TUNE_RETURN_IF_ERROR(hooks.before_launch());
  TUNE_RETURN_IF_ERROR(dev.launch(kernel, dims, args));
  TUNE_RETURN_IF_ERROR(hooks.flush_post());
  TUNE_RETURN_IF_ERROR(dev.synchronize());
  Status st = def.verify(dev, args, config);
  if (!st.ok() && st.code() != StatusCode::device_lost && st.code() != StatusCode::wrong_output)
    st = Status(StatusCode::wrong_output, st.message());
  return st;
}

Result<Entry> Autotuner::Impl::select(Device& dev, ArgList args, const TuningKey& key,
                                      TuningReport& report) {
  auto t0 = Clock::now();
  const DeviceInfo& info = dev.info();
  report.kernel = def.name;
  report.key = key_text(dev, key, args);
  report.device = info.fingerprint();
  auto where = [&] { return "tuning " + def.name + " for " + report.key; };

  const KernelSource* src = def.source_for(dev.language());
  if (src == nullptr) {
    return Status(StatusCode::unavailable, "kernel " + def.name + " has no " +
                                               std::string(to_string(dev.language())) +
                                               " source for device " + info.name);
  }

  if (def.search.strategy && !disabled) return select_by_search(dev, args, key, *src, report, t0);

  // Candidates: constraints, then heuristics, early prune and the perf model.
  std::map<std::string, std::size_t> rejected;
  std::vector<Config> cands;
  std::uint64_t raw = def.space.raw_size();
  for (std::uint64_t i = 0; i < raw; ++i) {
    Config c = def.space.at(i);
    std::string by;
    if (!def.space.accepts(c, info, &by)) {
      ++rejected[by];
      continue;
    }
    cands.push_back(std::move(c));
    if (cands.size() > (1u << 20)) {
      return Status(StatusCode::invalid_argument,
                    where() +
                        ": more than 2^20 configurations pass the constraints; prune "
                        "with a perf model or a smaller space");
    }
  }
  if (cands.empty()) {
    std::string why;
    for (const auto& [name, n] : rejected)
      why += " '" + name + "' rejected " + std::to_string(n) + ";";
    return Status(
        StatusCode::invalid_argument,
        where() + ": no configuration passes the constraints on " + info.name + ":" + why);
  }
  std::size_t initial = cands.size();
  if (!def.heuristics.empty()) {
    std::set<std::string> seen;
    std::vector<Config> uniq;
    for (auto& c : cands) {
      for (const auto& h : def.heuristics) c.set(h.param, h.fn(args, info));
      if (seen.insert(c.to_string()).second) uniq.push_back(std::move(c));
    }
    cands = std::move(uniq);
  }
  if (def.early_prune) {
    cands = def.early_prune(std::move(cands), args);
    if (cands.empty()) {
      return Status(
          StatusCode::invalid_argument,
          where() + ": early_prune returned no configuration (it must keep at least one)");
    }
  }
  if (def.perf_model && cands.size() > 1) {
    std::vector<std::pair<double, std::size_t>> est;
    for (std::size_t i = 0; i < cands.size(); ++i)
      est.emplace_back(def.perf_model.estimate(cands[i], args, info), i);
    std::stable_sort(est.begin(), est.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t keep = cands.size();
    if (def.perf_model.top_k > 0)
      keep = std::min(keep, static_cast<std::size_t>(def.perf_model.top_k));
    if (def.perf_model.top_fraction > 0) {
      auto frac = static_cast<std::size_t>(
          std::ceil(def.perf_model.top_fraction * static_cast<double>(cands.size())));
      keep = std::min(keep, std::max<std::size_t>(1, frac));
    }
    std::vector<Config> kept;
    for (std::size_t i = 0; i < keep; ++i) kept.push_back(cands[est[i].second]);
    cands = std::move(kept);
  }
  report.pruned = initial - cands.size();
  report.results.resize(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) {
    report.results[i].config = cands[i];
    report.results[i].stats.median = kInf;
  }

  // Stored timings: used for every candidate they cover; only the rest is timed.
  StoreKey skey{def.name, src->hash(), report.key, info.fingerprint(),
                info.toolchain_fingerprint()};
  std::vector<bool> need(cands.size(), true);
  if (store && cands.size() > 1 && !disabled) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < cands.size(); ++i) index[cands[i].to_string()] = i;
    Config heur = heuristic_values(dev, args);
    for (const ValidatedRow& v : validate_rows(store->load(skey), def.space, def.name, &heur)) {
      const StoredResult& row = v.row;
      auto it = index.find(row.config);
      if (it == index.end()) continue;  // pruned for this call, or removed from the space
      auto& r = report.results[it->second];
      r.from_store = true;
      need[it->second] = false;
      if (row.status == StatusCode::ok) {
        r.stats = row.stats;
      } else {
        r.status = Status(row.status, row.reason);
      }
    }
  }

  auto by_median = [&] {
    std::size_t best = cands.size();
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const auto& r = report.results[i];
      if (!r.status.ok() || !std::isfinite(r.stats.median)) continue;
      if (best == cands.size() || r.stats.median < report.results[best].stats.median) best = i;
    }
    return best;
  };

  bool all_stored = std::none_of(need.begin(), need.end(), [](bool b) { return b; });
  std::vector<std::size_t> to_compile;
  if (disabled) {
    report.source = ResultSource::disabled;
    to_compile = {0};
  } else if (cands.size() == 1) {
    report.source = ResultSource::single;
    to_compile = {0};
  } else if (all_stored && by_median() < cands.size()) {
    report.source = ResultSource::disk;
    to_compile = {by_median()};
  } else {
    report.source = ResultSource::tuned;
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (need[i]) to_compile.push_back(i);
  }

  std::vector<Config> compile_list;
  for (auto i : to_compile) compile_list.push_back(cands[i]);
  auto futures = compile_all(dev, *src, compile_list);

  std::vector<StoredResult> new_rows;
  std::map<std::size_t, std::shared_ptr<Variant>> built;
  auto deadline_passed = [&] {
    return opts.tuning_budget_ms > 0 && ms_since(t0) > opts.tuning_budget_ms;
  };
  HookRunner hooks(dev, def, args, zero_idx, restore_idx);
  bool timing = report.source == ResultSource::tuned;
  if (timing && (hooks.active() || def.verify))
    TUNE_RETURN_IF_ERROR(hooks.snapshot().with_context(where()));

  // Compile results are taken as they finish, so one slow compile does not hold back the
  // verification and warm-up of those already built; each survivor joins the race at once,
  // and once no further compile has finished for kRaceWhileCompilingMs the race goes on among
  // those already in it, round after round with no pause while there is something to time
  // (a GPU busy only now and then may lower its clock), so timing overlaps the slowest
  // compiles. Under a tight tuning_budget_ms, which configurations get timed therefore
  // depends on which compile first.
  Race race(dev, args, opts.bench);
  std::vector<std::size_t> racer_index;  // candidate of each race entry
  auto hooks_before = [&hooks](const Config* c) -> std::function<Status()> {
    if (!hooks.active()) return {};
    return [&hooks, c] {
      hooks.set_config(c);
      return hooks.before_launch();
    };
  };
  std::vector<std::size_t> pending(to_compile.size());
  std::iota(pending.begin(), pending.end(), std::size_t{0});
  bool racing_now = false;  // the last round timed something: keep the GPU busy, do not wait
  while (!pending.empty()) {
    const bool can_race = timing && race.entries().size() >= 2 && !race.decided();
    const auto wait = !can_race    ? Wait::until_one_finishes
                      : racing_now ? Wait::none
                                   : Wait::a_while;
    const auto next = take_finished(futures, pending, wait);
    if (!next) {
      auto timed = race.round();
      if (!timed.ok()) return timed.status().with_context(where());
      racing_now = *timed;
      continue;
    }
    const std::size_t j = *next;
    std::size_t i = to_compile[j];
    auto& r = report.results[i];
    std::shared_ptr<Variant> v = futures[j].get();
    r.compile_ms = v->compile_ms;
    if (!v->status.ok()) {
      r.status = v->status;
    } else {
      r.resources = v->kernel->resources();
      built[i] = v;
    }
    if (!timing || !r.status.ok()) continue;
    if (deadline_passed() && !race.entries().empty()) {
      report.partial = true;
      continue;
    }
    LaunchDims dims = def.dims(cands[i], args);
    auto before_fn = hooks_before(&cands[i]);
    Status st;
    if (def.verify) st = verify_once(dev, def, hooks, *v->kernel, dims, args, cands[i]);
    double est = 0;
    if (st.ok()) {
      BenchOptions warm = opts.bench;
      if (!race.entries().empty()) warm.warmup_ms = std::min(warm.warmup_ms, warm.warmup_next_ms);
      auto w = warm_up(dev, *v->kernel, dims, args, warm, before_fn);
      Status post = hooks.flush_post();
      if (!w.ok())
        st = w.status();
      else if (!post.ok())
        st = post;
      else
        est = *w;
    }
    if (st.code() == StatusCode::device_lost) {
      // The device is gone: nothing measured now can be trusted or stored.
      return st.with_context(where() + ", config {" + cands[i].to_string() + "}");
    }
    if (!st.ok()) {
      r.status = st;
      continue;
    }
    RaceEntry e;
    e.kernel = v->kernel.get();
    e.dims = dims;
    e.before_each = before_fn;
    if (hooks.active()) e.after_batch = [&hooks] { return hooks.flush_post(); };
    e.estimate_ns = est;
    race.add(std::move(e));
    racer_index.push_back(i);
  }
  if (!race.entries().empty()) {
    Status st = race.run();
    if (!st.ok()) return st.with_context(where());
  }
  for (std::size_t k = 0; k < race.entries().size(); ++k) {
    const RaceEntry& e = race.entries()[k];
    auto& r = report.results[racer_index[k]];
    r.status = e.status;
    r.raced_out = e.raced_out;
    r.settled = e.settled;
    if (r.status.ok()) r.stats = summarize(e.samples);
  }
  if (timing) {
    for (auto i : to_compile) {
      auto& r = report.results[i];
      if (r.status.ok() && r.stats.count == 0) continue;  // not reached within the budget
      if (!r.status.ok()) {
        r.stats = SampleStats{};
        r.stats.median = kInf;
      }
      new_rows.push_back({cands[i].to_string(), r.status.code(), r.status.message(), r.stats,
                          static_cast<std::int64_t>(std::time(nullptr))});
    }
  }
  if (timing && (hooks.active() || def.verify))
    TUNE_RETURN_IF_ERROR(hooks.restore_all().with_context(where()));

  std::size_t best = by_median();
  if (report.source != ResultSource::tuned) best = to_compile.front();
  if (best >= cands.size() || !built.count(best)) {
    std::string msg = where() + ": every configuration failed on " + info.name + ":";
    for (const auto& r : report.results) {
      msg += "\n  {" + r.config.to_string() +
             "}: " + (r.status.ok() ? std::string("no timing") : r.status.to_string());
    }
    report.wall_ms = ms_since(t0);
    if (store && !new_rows.empty()) store->save(skey, new_rows);
    return Status(StatusCode::all_failed, msg);
  }
  if (store && !new_rows.empty()) store->save(skey, new_rows);

  return finish(dev, key, report, cands[best], built[best], t0);
}

Result<Entry> Autotuner::Impl::finish(Device& dev, const TuningKey& key, TuningReport& report,
                                      const Config& winner, std::shared_ptr<Variant> variant,
                                      Clock::time_point t0) {
  report.winner = winner;
  report.wall_ms = ms_since(t0);
  if (print) std::fprintf(stderr, "%s", report.to_string().c_str());
  if (opts.listener) opts.listener(report);
  Entry e;
  e.key = key;
  e.device = &dev;
  e.config = winner;
  e.variant = std::move(variant);
  return e;
}

Result<Entry> Autotuner::Impl::select_by_search(Device& dev, ArgList args, const TuningKey& key,
                                                const KernelSource& src, TuningReport& report,
                                                Clock::time_point t0) {
  const DeviceInfo& info = dev.info();
  auto where = [&] { return "tuning " + def.name + " for " + report.key; };
  StoreKey skey{def.name, src.hash(), report.key, info.fingerprint(), info.toolchain_fingerprint()};
  std::map<std::string, StoredResult> stored;
  if (store) {
    Config heur = heuristic_values(dev, args);
    for (auto& v : validate_rows(store->load(skey), def.space, def.name, &heur))
      stored[v.row.config] = std::move(v.row);
  }
  HookRunner hooks(dev, def, args, zero_idx, restore_idx);
  if (hooks.active() || def.verify) TUNE_RETURN_IF_ERROR(hooks.snapshot().with_context(where()));
  std::vector<StoredResult> new_rows;
  Status lost;
  report.source = ResultSource::tuned;

  ClockWatch clock;
  Objective objective = [&](const Config& point) -> double {
    if (!lost.ok()) return kInf;
    Config c = point;
    for (const auto& h : def.heuristics) c.set(h.param, h.fn(args, info));
    ConfigResult r;
    r.config = c;
    std::string text = c.to_string();
    if (auto it = stored.find(text); it != stored.end()) {
      r.from_store = true;
      if (it->second.status == StatusCode::ok) {
        r.stats = it->second.stats;
      } else {
        r.status = Status(it->second.status, it->second.reason);
        r.stats.median = kInf;
      }
      report.results.push_back(r);
      return r.stats.median;
    }
    auto v = compile_all(dev, src, {c}).front().get();
    r.compile_ms = v->compile_ms;
    Status st = v->status;
    if (st.ok()) {
      r.resources = v->kernel->resources();
      LaunchDims dims = def.dims(c, args);
      if (def.verify) st = verify_once(dev, def, hooks, *v->kernel, dims, args, c);
      if (st.ok()) {
        std::function<Status()> before;
        if (hooks.active())
          before = [&hooks, &c] {
            hooks.set_config(&c);
            return hooks.before_launch();
          };
        // Settle the clock for the first evaluation, and again only after a pause (as a
        // race does), not for every point.
        BenchOptions bench = opts.bench;
        if (!clock.needs_settling()) bench.settle_max_ms = 0;
        auto stats = time_kernel(dev, *v->kernel, dims, args, bench, before);
        clock.busy();
        Status post = hooks.flush_post();
        st = !stats.ok() ? stats.status() : post;
        if (st.ok()) r.stats = *stats;
      }
    }
    if (st.code() == StatusCode::device_lost) lost = st;
    r.status = st;
    if (!st.ok()) {
      r.stats = SampleStats{};
      r.stats.median = kInf;
    }
    new_rows.push_back(
        {text, st.code(), st.message(), r.stats, static_cast<std::int64_t>(std::time(nullptr))});
    report.results.push_back(r);
    return r.stats.median;
  };

  auto found =
      def.search.strategy->search(def.space, info, objective, def.search.budget, def.search.seed);
  if (!lost.ok()) return lost.with_context(where());
  if (hooks.active() || def.verify) TUNE_RETURN_IF_ERROR(hooks.restore_all().with_context(where()));
  if (store && !new_rows.empty()) store->save(skey, new_rows);
  if (!found.ok()) return found.status().with_context(where());
  if (!std::isfinite(found->best_value)) {
    std::string msg =
        where() + ": every configuration the search evaluated failed on " + info.name + ":";
    for (const auto& r : report.results)
      msg += "\n  {" + r.config.to_string() + "}: " + r.status.to_string();
    return Status(StatusCode::all_failed, msg);
  }
  Config winner = found->best;
  for (const auto& h : def.heuristics) winner.set(h.param, h.fn(args, info));
  auto v = compile_all(dev, src, {winner}).front().get();
  if (!v->status.ok()) return v->status.with_context(where());
  report.partial = found->accepted_points == 0 || found->evaluations < found->accepted_points;
  return finish(dev, key, report, winner, v, t0);
}

std::string TuningReport::to_string() const {
  std::string s = "[libtune] " + kernel + " key {" + key + "} on " + device + ": " +
                  std::string(tune::to_string(source));
  char buf[96];
  std::snprintf(buf, sizeof buf, " in %.1f ms, %zu configs", wall_ms, results.size());
  s += buf;
  if (pruned > 0) s += " (" + std::to_string(pruned) + " pruned)";
  if (partial) s += " [partial: tuning budget reached]";
  s += "\n";
  for (const auto& r : results) {
    s += "  {" + r.config.to_string() + "} ";
    if (!r.status.ok())
      s += first_line(r.status.to_string());
    else if (r.stats.count > 0)
      s += r.stats.to_string();
    else
      s += "not timed";
    if (r.from_store) s += " (stored)";
    if (r.raced_out) s += " (raced out)";
    if (r.settled) s += " (within tolerance of the leader)";
    auto res = r.resources.to_string();
    if (!res.empty()) s += " " + res;
    s += "\n";
  }
  s += "  winner {" + winner.to_string() + "}\n";
  return s;
}

Autotuner::Autotuner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Autotuner::~Autotuner() = default;

Result<std::unique_ptr<Autotuner>> Autotuner::make(KernelDef def, AutotunerOptions opts) {
  auto bad = [&](const std::string& msg) {
    return Status(StatusCode::invalid_argument, "kernel '" + def.name + "': " + msg);
  };
  if (def.name.empty()) return Status(StatusCode::invalid_argument, "kernel has no name");
  if (def.sources.empty()) return bad("no source");
  if (!def.dims) return bad("no dims function (grid and block of a launch)");
  TUNE_RETURN_IF_ERROR(def.space.validate().with_context("kernel '" + def.name + "'"));
  auto kb = KeyBuilder::make(def.signature, def.key);
  if (!kb.ok()) return Status(kb.status()).with_context("kernel '" + def.name + "'");
  auto impl = std::make_unique<Impl>();
  for (const auto& [list, out] : {std::pair{&def.reset_to_zero, &impl->zero_idx},
                                  std::pair{&def.restore_value, &impl->restore_idx}}) {
    for (const auto& name : *list) {
      int idx = def.signature.index_of(name);
      if (idx < 0) return bad("hook argument '" + name + "' is not an argument of the kernel");
      if (def.signature.decls()[static_cast<std::size_t>(idx)].kind != ArgKind::buffer)
        return bad("hook argument '" + name + "' is not a buffer");
      out->push_back(idx);
    }
  }
  if (def.heuristics.size() + def.key.size() + 1 > static_cast<std::size_t>(kMaxKeyValues))
    return bad("too many key arguments and heuristics together");
  for (const auto& h : def.heuristics)
    if (!h.fn) return bad("heuristic '" + h.param + "' has no function");
  if (def.perf_model && def.perf_model.top_k <= 0 && def.perf_model.top_fraction <= 0)
    return bad("perf model set without top_k or top_fraction");
  impl->keys = std::move(*kb);
  impl->print = opts.print.value_or(env_flag("TUNE_PRINT_AUTOTUNING"));
  impl->disabled = opts.disable.value_or(env_flag("TUNE_DISABLE"));
  impl->store = opts.store ? opts.store : (opts.persistent ? default_store() : nullptr);
  impl->def = std::move(def);
  impl->opts = std::move(opts);
  return std::unique_ptr<Autotuner>(new Autotuner(std::move(impl)));
}

Status Autotuner::run(Device& dev, ArgList args) {
  const Entry* e = nullptr;
  TUNE_RETURN_IF_ERROR(impl_->resolve(dev, args, &e));
  LaunchDims dims = impl_->def.dims(e->config, args);
  return dev.launch(*e->variant->kernel, dims, args);
}

Result<Config> Autotuner::tune(Device& dev, ArgList args) {
  const Entry* e = nullptr;
  TUNE_RETURN_IF_ERROR(impl_->resolve(dev, args, &e));
  return e->config;
}

Status Autotuner::warmup(Device& dev) {
  const KernelSource* src = impl_->def.source_for(dev.language());
  if (src == nullptr)
    return Status(StatusCode::unavailable, "kernel " + impl_->def.name + " has no " +
                                               std::string(to_string(dev.language())) + " source");
  auto configs = impl_->def.space.enumerate(dev.info());
  if (!configs.ok()) return configs.status();
  auto futures = impl_->compile_all(dev, *src, *configs);
  std::string why;
  bool any = false;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    auto v = futures[i].get();
    if (v->status.ok())
      any = true;
    else
      why += "\n  {" + (*configs)[i].to_string() + "}: " + v->status.to_string();
  }
  if (!any && !futures.empty())
    return Status(StatusCode::all_failed,
                  "warmup of " + impl_->def.name + ": every configuration failed:" + why);
  return {};
}

std::optional<Config> Autotuner::best(const Device& dev, ArgList args) const {
  if (!impl_->def.signature.check(args).ok()) return std::nullopt;
  TuningKey key = impl_->make_key(dev, args);
  const Table* t = impl_->table.load(std::memory_order_acquire);
  if (t == nullptr) return std::nullopt;
  const Entry* e = t->find(key, &dev);
  if (e == nullptr) return std::nullopt;
  return e->config;
}

std::optional<TuningReport> Autotuner::last_report(const Device& dev, ArgList args) const {
  if (!impl_->def.signature.check(args).ok()) return std::nullopt;
  TuningKey key = impl_->make_key(dev, args);
  std::lock_guard lock(impl_->mu);
  auto it = impl_->reports.find({&dev, key.hash});
  if (it == impl_->reports.end()) return std::nullopt;
  return it->second;
}

void Autotuner::release(const Device& dev) {
  auto& m = *impl_;
  m.join_jobs(&dev);
  std::lock_guard lock(m.mu);
  for (auto it = m.variants.begin(); it != m.variants.end();) {
    if (it->first.first == &dev) {
      it->second.wait();
      it = m.variants.erase(it);
    } else {
      ++it;
    }
  }
  // Entries stay allocated (a reader on another device may still probe an old table), but
  // drop their variants so that every kernel of `dev` is destroyed now.
  for (auto it = m.entries.begin(); it != m.entries.end();) {
    if ((*it)->device == &dev) {
      (*it)->variant.reset();
      m.released.push_back(std::move(*it));
      it = m.entries.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(m.reports, [&](const auto& r) { return r.first.first == &dev; });
  auto t = std::make_unique<Table>(m.tables.empty() ? 16 : m.tables.back()->slots.size());
  for (const auto& e : m.entries) t->insert(e.get());
  m.table.store(t.get(), std::memory_order_release);
  m.tables.push_back(std::move(t));
}

const KernelDef& Autotuner::kernel() const noexcept { return impl_->def; }

}  // namespace tune
