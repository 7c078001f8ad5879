// Tunes a kernel on the simulated device from an installed libtune with no backend: what a user
// does to test their tuning code without a GPU. The cost model makes BM=64 the fastest.
#include <cstdio>
#include <vector>

#include <tune/testing/quick_options.hpp>
#include <tune/testing/sim_device.hpp>
#include <tune/tune.hpp>

namespace {

tune::Status run() {
  tune::KernelDef def;
  def.name = "consumer_kernel";
  def.sources = {{tune::Language::simulated, "k", "// simulated"}};
  def.signature.buffer("x", tune::ElemType::f32).scalar("n", tune::ElemType::i32);
  def.space.param("BM", {16, 32, 64, 128});
  def.key = {tune::KeySpec::exact("n")};
  def.dims = [](const tune::Config&, tune::ArgList) {
    tune::LaunchDims d;
    d.grid = {1, 1, 1};
    d.block = {64, 1, 1};
    return d;
  };
  // The device first: it must outlive the tuner that compiles for it (a SimDevice, like a GPU
  // backend, refuses to die with compiled kernels alive).
  tune::testing::SimDevice dev;
  TUNE_ASSIGN_OR_RETURN(auto tuner, tune::Autotuner::make(def, tune::testing::quiet_options()));
  dev.set_cost_model([](const tune::Config& c, tune::ArgList) {
    const auto bm = c.get_int("BM", 0);
    return bm == 64 ? 1000.0 : 5000.0;
  });
  TUNE_ASSIGN_OR_RETURN(auto x, dev.alloc(1024 * sizeof(float)));
  const std::vector<tune::ArgValue> args = {tune::ArgValue::buf(*x, tune::ElemType::f32, 1024),
                                            tune::ArgValue(std::int32_t{1024})};
  TUNE_ASSIGN_OR_RETURN(const tune::Config best, tuner->tune(dev, args));
  std::printf("backends compiled: %zu; best {%s}\n", tune::compiled_backends().size(),
              best.to_string().c_str());
  if (best.get_int("BM", 0) != 64 || !tune::compiled_backends().empty())
    return tune::Status(tune::StatusCode::internal, "unexpected winner or backends");
  return {};
}

}  // namespace

int main() {
  const tune::Status s = run();
  if (!s.ok()) std::printf("%s\n", s.to_string().c_str());
  return s.ok() ? 0 : 1;
}
