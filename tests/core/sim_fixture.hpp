// Shared helpers of the core tests: a simulated kernel definition, tiny benchmark budgets and
// an in-memory TuningStore. Nothing here touches the disk or ~/.cache.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "tune/testing/quick_options.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

namespace tune::testing {

// An Autotuner for `def`, or a test failure naming why make() refused it.
inline std::unique_ptr<Autotuner> make_tuner(KernelDef def,
                                             AutotunerOptions opts = quiet_options()) {
  auto t = Autotuner::make(std::move(def), std::move(opts));
  REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  return std::move(*t);
}

inline KernelSource sim_source() {
  KernelSource s;
  s.language = Language::simulated;
  s.entry = "sim_kernel";
  s.text = "// simulated kernel: run time comes from SimDevice's cost model";
  return s;
}

// The kernel most autotuner tests use: sim_kernel(x: f32 buffer, n: i32 scalar), key n
// (exact), tuned over `space`.
inline KernelDef sim_kernel(ConfigSpace space) {
  KernelDef def;
  def.name = "sim_kernel";
  def.sources = {sim_source()};
  def.signature.buffer("x", ElemType::f32).scalar("n", ElemType::i32);
  def.space = std::move(space);
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config& c, ArgList args) {
    LaunchDims d;
    const auto bm = static_cast<std::uint64_t>(std::max<std::int64_t>(1, c.get_int("BM", 1)));
    const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(1, args[1].as_int()));
    d.grid = {static_cast<std::uint32_t>((n + bm - 1) / bm), 1, 1};
    d.block = c.launch().block.product() != 0 ? c.launch().block : Dim3{128, 1, 1};
    return d;
  };
  return def;
}

// A BM space over `values` (integers).
inline ConfigSpace bm_space(std::initializer_list<int> values) {
  return std::move(ConfigSpace().param("BM", values));
}

// A cost model with its unique minimum at BM == best: 1000 ns + 10 ns per unit of distance.
inline SimDevice::CostModel bm_model(std::int64_t best) {
  return [best](const Config& c, ArgList) {
    return 1000.0 + 10.0 * static_cast<double>(std::llabs(c.get_int("BM") - best));
  };
}

// A device plus a 4096-element f32 buffer named "x".
struct SimRig {
  SimDevice dev;
  Buffer x;

  explicit SimRig(DeviceInfo info = SimDevice::default_info()) : dev(std::move(info)) {
    x = dev.alloc(4096 * sizeof(float)).value();
    SimDevice::set_name(*x, "x");
  }
  // Arguments of sim_kernel: x (1024 elements) and the scalar n.
  std::vector<ArgValue> args(std::int32_t n) {
    return {ArgValue::buf(*x, ElemType::f32, 1024), ArgValue(n)};
  }
};

// The remembered config for these arguments as text, "<none>" when there is none.
inline std::string best_of(const Autotuner& tuner, const Device& dev, ArgList args) {
  auto best = tuner.best(dev, args);
  return best ? best->to_string() : std::string("<none>");
}

// Events of `events` starting with `prefix`.
inline std::vector<std::string> events_with(const std::vector<std::string>& events,
                                            const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : events)
    if (e.rfind(prefix, 0) == 0) out.push_back(e);
  return out;
}

inline bool has_event(const std::vector<std::string>& events, const std::string& e) {
  return std::find(events.begin(), events.end(), e) != events.end();
}

// A TuningStore in memory: rows by (kernel, key, device). Records every call.
class MemoryStore : public TuningStore {
 public:
  std::vector<StoredResult> load(const StoreKey& key) override {
    std::lock_guard lock(mu_);
    ++loads;
    last_key = key;
    if (serve_everything) return seeded;
    auto it = rows_.find(id(key));
    return it == rows_.end() ? std::vector<StoredResult>{} : it->second;
  }
  void save(const StoreKey& key, std::span<const StoredResult> rows) override {
    std::lock_guard lock(mu_);
    ++saves;
    auto& stored = rows_[id(key)];
    for (const auto& r : rows) {
      auto it = std::find_if(stored.begin(), stored.end(),
                             [&](const StoredResult& s) { return s.config == r.config; });
      if (it != stored.end())
        *it = r;
      else
        stored.push_back(r);
    }
    saved_rows += rows.size();
  }
  // All rows stored for any key.
  std::vector<StoredResult> all_rows() {
    std::lock_guard lock(mu_);
    std::vector<StoredResult> out;
    for (const auto& [k, v] : rows_) out.insert(out.end(), v.begin(), v.end());
    return out;
  }

  // When set, load() returns `seeded` for every key (to inject rows without knowing the key).
  bool serve_everything = false;
  std::vector<StoredResult> seeded;
  int loads = 0, saves = 0;
  std::size_t saved_rows = 0;
  StoreKey last_key;

 private:
  static std::tuple<std::string, std::uint64_t, std::string, std::string, std::string> id(
      const StoreKey& k) {
    return {k.kernel, k.source_hash, k.key, k.device, k.toolchain};
  }
  std::mutex mu_;
  std::map<std::tuple<std::string, std::uint64_t, std::string, std::string, std::string>,
           std::vector<StoredResult>>
      rows_;
};

// A stored row with a constant median `ns`.
inline StoredResult stored_ok(const Config& c, double ns) {
  StoredResult r;
  r.config = c.to_string();
  r.status = StatusCode::ok;
  r.stats.count = 10;
  r.stats.min = r.stats.p20 = r.stats.median = r.stats.p80 = r.stats.max = r.stats.mean = ns;
  r.unix_time = 1700000000;
  return r;
}

}  // namespace tune::testing
