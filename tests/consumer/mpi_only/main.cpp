// Tunes one key with tune::mpi's tune_collective on a job of one rank (a singleton MPI_Init),
// on the simulated device: the installed headers, library and MPI dependency work together.
#include <mpi.h>

#include <cstdio>

#include "tune/mpi.hpp"
#include "tune/testing/quick_options.hpp"
#include "tune/testing/sim_device.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  tune::testing::SimDevice dev(tune::testing::SimDevice::default_info());
  auto x = dev.alloc(1024 * sizeof(float)).value();
  tune::KernelDef def;
  def.name = "consumer_kernel";
  def.sources = {tune::KernelSource{}};
  def.sources[0].language = tune::Language::simulated;
  def.sources[0].entry = "k";
  def.sources[0].text = "// simulated";
  def.signature.buffer("x", tune::ElemType::f32).scalar("n", tune::ElemType::i32);
  def.space.param("BM", {16, 32, 64});
  def.key = {tune::KeySpec::exact("n")};
  def.dims = [](const tune::Config&, tune::ArgList) {
    tune::LaunchDims d;
    d.grid = {1, 1, 1};
    d.block = {64, 1, 1};
    return d;
  };
  auto tuner = tune::Autotuner::make(def, tune::testing::quiet_options()).value();
  auto coord = tune::mpi::Coordinator::make(MPI_COMM_WORLD, dev).value();
  const std::vector<tune::ArgValue> args = {tune::ArgValue::buf(*x, tune::ElemType::f32, 256),
                                            tune::ArgValue(std::int32_t{256})};
  const std::vector<tune::ArgList> calls = {args};
  auto out = coord->tune_collective(*tuner, dev, calls);
  int rc = out.ok() && out->size() == 1 && tuner->best(dev, args).has_value() ? 0 : 1;
  std::printf("mpi consumer: %s\n",
              out.ok() ? (*out)[0].config.to_string().c_str() : out.status().to_string().c_str());
  coord.reset();
  MPI_Finalize();
  return rc;
}
