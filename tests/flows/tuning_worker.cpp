// tuning_worker: one process of the cross-process tuning-flow tests.
//
//   tuning_worker <db> <BM values, comma-separated> <tuning_budget_ms> <slow BM> <slow ms>
//
// Tunes sim_kernel over BM in the given values on a fresh simulated device (nothing compiled:
// a new process), with the SQLite store at <db>, the config <slow BM> (0: every config)
// compiling for <slow ms>.
// The cost has its minimum at BM=1. Prints "winner BM=<v> source=<s> timed=<n>" and exits 0
// when run() succeeded, else prints the error and exits 1.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tune/sqlite_store.hpp"
#include "tune/testing/quick_options.hpp"
#include "tune/testing/sim_device.hpp"
#include "tune/tune.hpp"

using namespace tune;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: tuning_worker <db> <BM,...> <budget ms> <slow BM> <slow ms>\n");
    return 2;
  }
  std::vector<int> values;
  std::stringstream list(argv[2]);
  for (std::string v; std::getline(list, v, ',');) values.push_back(std::stoi(v));
  const double budget = std::atof(argv[3]);
  const int slow = std::atoi(argv[4]);
  const double slow_ms = std::atof(argv[5]);

  testing::SimDevice dev;
  dev.set_cost_model([](const Config& c, ArgList) {
    return 1000.0 + 10.0 * static_cast<double>(c.get_int("BM") - 1);
  });
  dev.compile_delay_if([slow](const Config& c) { return slow == 0 || c.get_int("BM") == slow; },
                       slow_ms);

  KernelDef def;
  def.name = "flow_kernel";
  def.sources = {{Language::simulated, "sim_kernel", "// simulated"}};
  def.signature.buffer("x", ElemType::f32).scalar("n", ElemType::i32);
  std::vector<Value> domain;
  for (int v : values) domain.emplace_back(std::int64_t{v});
  def.space.param("BM", domain);
  def.key = {KeySpec::exact("n")};
  def.dims = [](const Config&, ArgList) { return LaunchDims{{4, 1, 1}, {64, 1, 1}, 0}; };

  AutotunerOptions opts = testing::quiet_options();
  opts.store = SqliteStore::open(argv[1]);
  opts.tuning_budget_ms = budget;
  auto tuner = Autotuner::make(std::move(def), opts);
  if (!tuner.ok()) {
    std::printf("error %s\n", tuner.status().to_string().c_str());
    return 1;
  }
  Buffer x = dev.alloc(1024).value();
  std::vector<ArgValue> args = {ArgValue::buf(*x, ElemType::f32, 256), ArgValue(std::int32_t{256})};
  Status st = (*tuner)->run(dev, args);
  if (!st.ok()) {
    std::printf("error %s\n", st.to_string().c_str());
    return 1;
  }
  auto report = (*tuner)->last_report(dev, args);
  int timed = 0;
  if (report)
    for (const auto& r : report->results) timed += (!r.from_store && r.stats.count > 0) ? 1 : 0;
  std::printf("winner %s source=%s timed=%d\n", (*tuner)->best(dev, args)->to_string().c_str(),
              report ? std::string(to_string(report->source)).c_str() : "memory", timed);
  return 0;
}
