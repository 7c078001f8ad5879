// bench_vulkan: per bundled GLSL kernel and size, the tuned configuration against the
// kernel's default configuration, timed with device timestamps (manual time), with bytes/s and
// flops/s counters from the workload's compulsory traffic and flops.
//
//   bench_vulkan                          small sizes (the demo sizes; fine on lavapipe)
//   bench_vulkan --large                  or TUNE_BENCH_LARGE=1: vector_add and reduce_sum
//                                         at 2^26, the matmuls at 4096^3 (for a real GPU),
//                                         matmul_f16_coopmat, matmul_f16_coopmat2 and
//                                         matmul_bf16_coopmat2 at 4096^3 and 8192^3
//   bench_vulkan --benchmark_filter=matmul_f32
//   bench_vulkan --benchmark_filter=BM_record   host time per dispatch recorded into an
//                                               application's command buffer (issue 13)
//   bench_vulkan --verify-cost[=MB]             tuning with and without verification, side by
//                                               side (bench/verify_cost.hpp; default 32 MiB here;
//                                               rounds: --verify-rounds=N, default 3)
//   bench_vulkan --cold-floor[=ROUNDS]          matmul_f16 tuned cold against its floor
//                                               (bench/cold_floor.hpp); prints a table
//   bench_vulkan --interleaved                  the same pair measured interleaved in one loop
//                                               (bench/interleaved_pair.hpp); prints a table,
//                                               with the hit of a key a bundle served against
//                                               the same hit without bundles, and the hit of a
//                                               key the fallback chain served with record mode
//                                               on against the same without
//
// The device is tune::open_device("vulkan") (TUNE_VULKAN_DEVICE selects one). Tuning uses the
// persistent cache like any program (TUNE_CACHE=off to disable). Each iteration is one
// time_kernel() call with the library's default budgets, as tuning times a configuration:
// warm-up, clock settling (the NVIDIA driver idles its clock between short bursts of Vulkan
// work), then 100 ms of launches, each after an L2 flush outside the timed span; the
// iteration's time is their median. Five iterations per benchmark.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cold_floor.hpp"
#include "edge_cost.hpp"
#include "interleaved_pair.hpp"
#include "tune/kernels/bundled.hpp"
#include "tune/tune.hpp"
#include "tune/vulkan_interop.hpp"
#include "verify_cost.hpp"
#include "vulkan_device.hpp"  // backends/vulkan/src: the raw case binds the winner's VkPipeline

namespace {

using namespace tune;

std::unique_ptr<Device> g_device;

// Everything one (kernel, size) needs, built on first use and shared by its two benchmarks.
struct Case {
  const kernels::BundledKernel* kernel = nullptr;
  std::vector<std::int64_t> size;
  std::unique_ptr<kernels::Workload> workload;
  std::unique_ptr<Autotuner> tuner;
  std::map<std::string, std::unique_ptr<CompiledKernel>> compiled;  // "tuned" / "default"
  std::map<std::string, Config> configs;
  Status status;
  bool ready = false;
};

std::vector<kernels::BundledKernel> g_kernels;
std::vector<std::unique_ptr<Case>> g_cases;

Status prepare(Case& c) {
  if (c.ready) return c.status;
  c.ready = true;
  c.workload = c.kernel->workload(c.size);
  Status s = c.workload->setup(*g_device, 2024);
  if (!s.ok()) return c.status = s;
  AutotunerOptions opts;  // the defaults a user gets, persistent cache included
  auto tuner = Autotuner::make(c.kernel->def, opts);
  if (!tuner.ok()) return c.status = tuner.status();
  c.tuner = std::move(*tuner);
  auto best = c.tuner->tune(*g_device, c.workload->args());
  if (!best.ok()) return c.status = best.status();
  c.configs["tuned"] = *best;
  c.configs["default"] = c.kernel->default_config;
  const KernelSource* src = c.kernel->def.source_for(g_device->language());
  for (const auto& [which, config] : c.configs) {
    auto ck = g_device->compile(*src, config);
    if (!ck.ok()) return c.status = ck.status().with_context(which + " config");
    c.compiled[which] = std::move(*ck);
  }
  // Verify both once, so a bench never reports the speed of a wrong kernel.
  for (const auto& [which, ck] : c.compiled) {
    TUNE_RETURN_IF_ERROR(c.workload->poison_outputs(*g_device));
    TUNE_RETURN_IF_ERROR(c.kernel->def.zero_reset_buffers(*g_device, c.workload->args()));
    const LaunchDims dims = c.kernel->def.dims(c.configs[which], c.workload->args());
    TUNE_RETURN_IF_ERROR(g_device->launch(*ck, dims, c.workload->args()));
    s = c.workload->check(*g_device);
    if (!s.ok()) return c.status = s.with_context(which + " config output");
  }
  return c.status;
}

void run_case(benchmark::State& state, Case* c, const std::string& which) {
  Status s = prepare(*c);
  if (!s.ok()) {
    state.SkipWithError(s.to_string().c_str());
    return;
  }
  const Config& config = c->configs[which];
  const CompiledKernel& ck = *c->compiled[which];
  ArgList args = c->workload->args();
  const LaunchDims dims = c->kernel->def.dims(config, args);
  auto resets = c->kernel->def.zero_resets(args);
  if (!resets.ok()) {
    state.SkipWithError(resets.status().to_string().c_str());
    return;
  }
  BeforeLaunch before;  // the accumulators zeroed, recorded beside the timed launches
  before.resets = std::move(*resets);
  const BenchOptions opts;  // the budgets tuning uses
  for (auto _ : state) {
    auto t = time_kernel(*g_device, ck, dims, args, opts, before);
    if (!t.ok()) {
      state.SkipWithError(t.status().to_string().c_str());
      return;
    }
    state.SetIterationTime(t->median * 1e-9);
  }
  state.counters["bytes_per_second"] =
      benchmark::Counter(c->workload->bytes(), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
  state.counters["flops"] =
      benchmark::Counter(c->workload->flops(), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
  state.SetLabel(config.to_string());
}

std::vector<std::vector<std::int64_t>> sizes_for(const kernels::BundledKernel& k, bool large) {
  if (!large) return k.demo_sizes;
  if (k.name == "vector_add" || k.name == "reduce_sum") return {{std::int64_t{1} << 26}};
  if (k.name == "matmul_f32" || k.name == "matmul_f16") return {{4096, 4096, 4096}};
  return k.demo_sizes;
}

std::string size_name(const std::vector<std::int64_t>& s) {
  std::string out;
  for (auto v : s) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

// ---- recording into the application's command buffer (issue 13) ---------------------------
//
// Host time per recorded dispatch, the way a Vulkan application calls libtune: its own
// instance, device, queue family and command buffer, vector_add's three buffers its own
// VkBuffers (wrapped). BM_record_autotuned is a cache hit of
// Autotuner::run(dev, args, LaunchTarget::command_buffer(cb)), which records a global barrier,
// the pipeline, descriptor set 0, the push constants, the dispatch and a global barrier.
// BM_record_raw records the same commands by hand: the same two barriers, the winner's VkPipeline
// (compiled again by the same device: the same SPIR-V and pipeline layout) with a descriptor
// set of its own written once, vkCmdPushConstants and vkCmdDispatch. Nothing is submitted:
// every kRecordsPerBuffer dispatches the command buffer is ended, its pool reset and the buffer
// begun again, outside the timed region (PauseTiming), so the figure is per recorded dispatch.

constexpr std::int64_t kRecordN = 1 << 12;
constexpr std::int64_t kRecordsPerBuffer = 256;

#define BENCH_VK(call)                                                               \
  do {                                                                               \
    if (VkResult r_ = (call); r_ != VK_SUCCESS)                                      \
      return Status(StatusCode::unavailable,                                         \
                    std::string(#call) + " failed: VkResult " + std::to_string(r_)); \
  } while (0)

struct App {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice gpu = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkBuffer buffers[3] = {};
  VkDeviceMemory memory[3] = {};
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;  // the raw case's set
  VkDescriptorSet set = VK_NULL_HANDLE;

  std::unique_ptr<Device> dev;  // libtune on the application's device
  Buffer wrapped[3];
  std::unique_ptr<Autotuner> tuner;
  // The same kernel, its key served by a bundle (an empty database in front of it, strict
  // mode): --interleaved times its hit against `tuner`'s (tune/bundle.hpp: target <= 1.02x).
  std::unique_ptr<Autotuner> bundled;
  // The same kernel, its key served by the fallback chain (FallbackPolicy::keep), without and
  // with record mode (tune/record.hpp): --interleaved times their hits (target <= 1.02x).
  std::unique_ptr<Autotuner> kept;
  std::unique_ptr<Autotuner> recording;
  std::vector<ArgValue> args;
  std::unique_ptr<CompiledKernel> best;  // the winner, compiled again for the raw case
  LaunchDims dims;
  Status status;

  Status setup();
  Status make_buffers();
  Status make_raw_set();
  Status make_bundled(const KernelDef& def);
  Status make_kept(const KernelDef& def);
  Status begin();
  ~App();
};

Status App::setup() {
  VkApplicationInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  ai.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &ai;
  BENCH_VK(vkCreateInstance(&ici, nullptr, &instance));
  std::uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> gpus(n);
  vkEnumeratePhysicalDevices(instance, &n, gpus.data());
  for (VkPhysicalDevice g : gpus) {
    std::uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(g, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(g, &nq, qs.data());
    for (std::uint32_t i = 0; i < nq && gpu == VK_NULL_HANDLE; ++i) {
      if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qs[i].timestampValidBits > 0)
        gpu = g, family = i;
    }
  }
  if (gpu == VK_NULL_HANDLE)
    return Status(StatusCode::unavailable, "no device with a compute queue with timestamps");
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  BENCH_VK(vkCreateDevice(gpu, &dci, nullptr, &device));
  vkGetDeviceQueue(device, family, 0, &queue);
  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.queueFamilyIndex = family;
  BENCH_VK(vkCreateCommandPool(device, &pci, nullptr, &pool));
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  BENCH_VK(vkAllocateCommandBuffers(device, &cai, &cb));

  vulkan::ExternalDevice ext;

  ext.instance = instance;

  ext.physical_device = gpu;

  ext.device = device;

  ext.queue_family = family;

  ext.queue = queue;

  ext.api_version = VK_API_VERSION_1_1;  // what the instance was created with
  TUNE_ASSIGN_OR_RETURN(dev, vulkan::open_device(ext));
  TUNE_RETURN_IF_ERROR(make_buffers());
  const kernels::BundledKernel* k = nullptr;
  for (const auto& b : g_kernels)
    if (b.name == "vector_add") k = &b;
  if (k == nullptr) return Status(StatusCode::not_found, "no bundled vector_add");
  AutotunerOptions opts;
  opts.persistent = false;
  TUNE_ASSIGN_OR_RETURN(tuner, Autotuner::make(k->def, opts));
  TUNE_ASSIGN_OR_RETURN(const Config config, tuner->tune(*dev, args));
  TUNE_ASSIGN_OR_RETURN(best, dev->compile(*k->def.source_for(Language::glsl), config));
  dims = k->def.dims(config, args);
  TUNE_RETURN_IF_ERROR(make_raw_set());
  TUNE_RETURN_IF_ERROR(make_bundled(k->def));
  TUNE_RETURN_IF_ERROR(make_kept(k->def));
  return begin();
}

// `kept` and `recording`: the key served by the fallback chain, never tuned; `recording`'s
// first call appends the key's line to a record file (removed after), later calls are hits.
Status App::make_kept(const KernelDef& def) {
  namespace fs = std::filesystem;
  const fs::path file =
      fs::temp_directory_path() / ("bench_vulkan-" + std::to_string(::getpid()) + ".jsonl");
  AutotunerOptions opts;
  opts.store = SqliteStore::open(":memory:");
  opts.fallback = FallbackPolicy::keep;
  TUNE_ASSIGN_OR_RETURN(kept, Autotuner::make(def, opts));
  opts.record = file.string();
  TUNE_ASSIGN_OR_RETURN(recording, Autotuner::make(def, opts));
  TUNE_RETURN_IF_ERROR(kept->run(*dev, args));
  TUNE_RETURN_IF_ERROR(recording->run(*dev, args));
  const bool recorded = fs::exists(file) && fs::file_size(file) > 0;
  std::error_code ec;
  fs::remove(file, ec);
  return recorded ? Status::ok_status()
                  : Status(StatusCode::internal, "record mode wrote no line to " + file.string());
}

// Tunes `def` into a database of its own, bundles it, and makes `bundled` serve the key from
// the bundle alone (nothing timed: strict mode would refuse a tuning).
Status App::make_bundled(const KernelDef& def) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("bench_vulkan-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string db = (dir / "tune.db").string();
  const std::string bundle = (dir / "app.tunebundle").string();
  AutotunerOptions opts;
  opts.store = SqliteStore::open(db);
  TUNE_ASSIGN_OR_RETURN(auto farm, Autotuner::make(def, opts));
  TUNE_RETURN_IF_ERROR(farm->run(*dev, args));
  TUNE_RETURN_IF_ERROR(create_bundle(db, bundle).status());
  opts.store = SqliteStore::open(":memory:");
  opts.bundles = {bundle};
  opts.strict = true;
  TUNE_ASSIGN_OR_RETURN(bundled, Autotuner::make(def, opts));
  TUNE_RETURN_IF_ERROR(bundled->run(*dev, args));
  std::error_code ec;
  fs::remove_all(dir, ec);
  return Status::ok_status();
}

// vector_add's a, b, c: device memory of the application, filled with 1.0f through libtune.
Status App::make_buffers() {
  const VkDeviceSize bytes = kRecordN * sizeof(float);
  for (int i = 0; i < 3; ++i) {
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = bytes;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    BENCH_VK(vkCreateBuffer(device, &bci, nullptr, &buffers[i]));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffers[i], &req);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    while (!(req.memoryTypeBits & (1u << mai.memoryTypeIndex))) ++mai.memoryTypeIndex;
    BENCH_VK(vkAllocateMemory(device, &mai, nullptr, &memory[i]));
    BENCH_VK(vkBindBufferMemory(device, buffers[i], memory[i], 0));
    TUNE_ASSIGN_OR_RETURN(wrapped[i], vulkan::wrap_buffer(*dev, buffers[i], 0, bytes));
    TUNE_RETURN_IF_ERROR(dev->fill(*wrapped[i], 0x3f800000u, bytes));
    args.push_back(ArgValue::buf(*wrapped[i], ElemType::f32, kRecordN));
  }
  args.emplace_back(static_cast<int>(kRecordN));
  return dev->synchronize();
}

// The raw case's descriptor set: the winner's set layout, the three buffers, written once.
Status App::make_raw_set() {
  const auto& k = static_cast<const vk::VulkanKernel&>(*best);
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &size;
  BENCH_VK(vkCreateDescriptorPool(device, &dpci, nullptr, &descriptor_pool));
  VkDescriptorSetLayout layout = k.set_layout();
  VkDescriptorSetAllocateInfo dsai{};
  dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dsai.descriptorPool = descriptor_pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &layout;
  BENCH_VK(vkAllocateDescriptorSets(device, &dsai, &set));
  VkDescriptorBufferInfo info[3];
  VkWriteDescriptorSet writes[3];
  for (std::uint32_t i = 0; i < 3; ++i) {
    info[i] = {buffers[i], 0, VK_WHOLE_SIZE};
    writes[i] = {};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &info[i];
  }
  vkUpdateDescriptorSets(device, 3, writes, 0, nullptr);
  return Status::ok_status();
}

// (Re)starts recording: the pool reset frees what the previous recording held.
Status App::begin() {
  BENCH_VK(vkResetCommandPool(device, pool, 0));
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  BENCH_VK(vkBeginCommandBuffer(cb, &bi));
  return Status::ok_status();
}

App::~App() {
  if (cb != VK_NULL_HANDLE && status.ok()) (void)vkEndCommandBuffer(cb);  // recording
  best.reset();
  tuner.reset();
  bundled.reset();
  kept.reset();
  recording.reset();
  for (auto& w : wrapped) w.reset();
  dev.reset();  // libtune's objects before the application's
  if (device != VK_NULL_HANDLE) {
    if (descriptor_pool != VK_NULL_HANDLE)
      vkDestroyDescriptorPool(device, descriptor_pool, nullptr);
    for (int i = 0; i < 3; ++i) {
      if (buffers[i] != VK_NULL_HANDLE) vkDestroyBuffer(device, buffers[i], nullptr);
      if (memory[i] != VK_NULL_HANDLE) vkFreeMemory(device, memory[i], nullptr);
    }
    if (pool != VK_NULL_HANDLE) vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
}

std::unique_ptr<App> g_app;  // built by the first of the pair, destroyed before main returns

App* app_or_skip(benchmark::State& state) {
  if (!g_app) {
    g_app = std::make_unique<App>();
    g_app->status = g_app->setup();
  }
  if (!g_app->status.ok()) {
    state.SkipWithError(g_app->status.to_string().c_str());
    return nullptr;
  }
  return g_app.get();
}

// Every kRecordsPerBuffer recordings: a fresh command buffer, outside the timed region.
template <class Record>
void record_loop(benchmark::State& state, App& app, Record record) {
  std::int64_t i = 0;
  for (auto _ : state) {
    if (Status s = record(); !s.ok()) {
      state.SkipWithError(s.to_string().c_str());
      return;
    }
    if (++i % kRecordsPerBuffer == 0) {
      state.PauseTiming();
      (void)vkEndCommandBuffer(app.cb);
      if (Status s = app.begin(); !s.ok()) {
        state.SkipWithError(s.to_string().c_str());
        return;
      }
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_record_autotuned(benchmark::State& state) {
  App* app = app_or_skip(state);
  if (app == nullptr) return;
  const LaunchTarget target = LaunchTarget::command_buffer(app->cb);
  record_loop(state, *app, [&] { return app->tuner->run(*app->dev, app->args, target); });
}

// The barrier libtune records before and after its dispatch.
void all_commands_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       0, 1, &b, 0, nullptr, 0, nullptr);
}

// The hand-recorded dispatch: what BM_record_raw and the interleaved pair time.
Status record_raw(App& app) {
  const auto& k = static_cast<const vk::VulkanKernel&>(*app.best);
  const int n = static_cast<int>(kRecordN);
  const Dim3 grid = app.dims.grid;
  all_commands_barrier(app.cb);
  vkCmdBindPipeline(app.cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline());
  vkCmdBindDescriptorSets(app.cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout(), 0, 1, &app.set, 0,
                          nullptr);
  vkCmdPushConstants(app.cb, k.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof n, &n);
  vkCmdDispatch(app.cb, grid.x, grid.y, grid.z);
  all_commands_barrier(app.cb);
  return Status::ok_status();
}

void BM_record_raw(benchmark::State& state) {
  App* app = app_or_skip(state);
  if (app == nullptr) return;
  record_loop(state, *app, [&] { return record_raw(*app); });
}

// bench_vulkan --interleaved: the recorded pair, interleaved (bench/interleaved_pair.hpp), one
// command buffer per batch of kRecordsPerBuffer / 2 dispatches per side.
int record_pair_interleaved() {
  App app;
  app.status = app.setup();
  if (!app.status.ok()) {
    std::fprintf(stderr, "bench_vulkan: %s\n", app.status.to_string().c_str());
    return 1;
  }
  const LaunchTarget target = LaunchTarget::command_buffer(app.cb);
  auto report = [](const Status& s) {
    if (!s.ok()) std::fprintf(stderr, "bench_vulkan: %s\n", s.to_string().c_str());
    return s.ok();
  };
  bool fresh = true;  // app.setup() begins the command buffer
  auto between = [&] {
    if (!fresh) {
      (void)vkEndCommandBuffer(app.cb);
      (void)report(app.begin());
    }
    fresh = false;
  };
  // The pair, then its decomposition: the backend's recording alone (no Autotuner) against
  // the hand-recorded one, and the harness against itself (its own bias: both sides equal).
  auto hit = [&] { return report(app.tuner->run(*app.dev, app.args, target)); };
  auto backend = [&] { return report(app.dev->launch_on(*app.best, app.dims, app.args, target)); };
  auto hand = [&] { return report(record_raw(app)); };
  auto bundled_hit = [&] { return report(app.bundled->run(*app.dev, app.args, target)); };
  auto kept_hit = [&] { return report(app.kept->run(*app.dev, app.args, target)); };
  auto recording_hit = [&] { return report(app.recording->run(*app.dev, app.args, target)); };
  const int calls = static_cast<int>(kRecordsPerBuffer / 2);
  bench::PairFigure f, fb, fc, fd, fr;
  if (!bench::measure_pair(400, calls, 20, hit, hand, between, &f) ||
      !bench::measure_pair(400, calls, 20, backend, hand, between, &fb) ||
      !bench::measure_pair(400, calls, 20, hand, hand, between, &fc) ||
      !bench::measure_pair(400, calls, 20, bundled_hit, hit, between, &fd) ||
      !bench::measure_pair(400, calls, 20, recording_hit, kept_hit, between, &fr))
    return 1;
  std::printf("device: %s, driver %s\n", g_device->info().name.c_str(),
              g_device->info().driver_version.c_str());
  bench::print_pair_header();
  bench::print_pair("recorded vector_add: Autotuner::run on a command buffer vs hand-recorded", f);
  bench::print_pair("  the backend alone: Device::launch_on vs hand-recorded", fb);
  bench::print_pair("  control: hand-recorded vs itself (the harness's bias)", fc);
  bench::print_pair("a key served by a bundle: its hit vs the same hit without bundles", fd);
  bench::print_pair("a key the chain served: its hit with record mode vs without", fr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool large = false;
  bool interleaved = false;
  if (const char* e = std::getenv("TUNE_BENCH_LARGE")) large = std::strcmp(e, "1") == 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) {
      large = true;
    } else if (std::strcmp(argv[i], "--interleaved") == 0) {
      interleaved = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (const std::uint64_t mb = bench::verify_cost_flag(argc, argv, 32); mb > 0) {
    auto vdev = open_device("vulkan");
    if (!vdev.ok()) {
      std::fprintf(stderr, "verify-cost: %s\n", vdev.status().to_string().c_str());
      return 1;
    }
    return bench::run_verify_cost(**vdev, mb, bench::verify_rounds_flag(argc, argv, 3));
  }
  if (const int rounds = bench::cold_floor_flag(argc, argv); rounds > 0) {
    auto vdev = open_device("vulkan");
    auto k = kernels::bundled_kernel(Language::glsl, "matmul_f16");
    if (!vdev.ok() || !k) return 1;
    // The demo size, 1 warm-up and 10 timed launches per configuration and no cache flush: on
    // lavapipe the default budgets time for seconds (the "GPU" is the same two CPU cores, a
    // 128^3 fp16 matmul takes milliseconds there), hiding the compiles this is about.
    BenchOptions quick;
    quick.warmup_count = 1;
    quick.rep_count = 10;
    quick.cache = tune::TimingCache::none;
    return bench::run_cold_floor(**vdev, *k, k->demo_sizes.front(), rounds, quick);
  }
  if (const int rounds = bench::edge_cost_flag(argc, argv); rounds > 0) {
    // A bucket's first tuning (n=3000 in 4096; M=N=K=100 in 128) with and without its edge
    // checks, at the library's default budgets.
    auto vdev = open_device("vulkan");
    if (!vdev.ok()) return 1;
    for (auto [name, size] : {std::pair{"vector_add", std::vector<std::int64_t>{3000}},
                              std::pair{"matmul_f32", std::vector<std::int64_t>{100, 100, 100}}}) {
      auto k = kernels::bundled_kernel(Language::glsl, name);
      if (!k || bench::run_edge_cost(**vdev, *k, size, rounds) != 0) return 1;
    }
    return 0;
  }
  int nargs = static_cast<int>(args.size());
  benchmark::Initialize(&nargs, args.data());

  auto dev = open_device("vulkan");
  if (!dev.ok()) {
    std::fprintf(stderr, "bench_vulkan: %s\n", dev.status().to_string().c_str());
    return 1;
  }
  g_device = std::move(*dev);
  const DeviceInfo& info = g_device->info();
  benchmark::AddCustomContext("device", info.name);
  benchmark::AddCustomContext("driver", info.driver_version);
  benchmark::AddCustomContext("compiler", info.compiler_version);
  benchmark::AddCustomContext("sizes", large ? "large" : "small");

  g_kernels = kernels::bundled_kernels(Language::glsl);
  if (interleaved) {
    const int rc = record_pair_interleaved();
    g_device.reset();
    return rc;
  }
  // Host time per recorded dispatch, side by side, 5 repetitions each, medians reported.
  benchmark::RegisterBenchmark("BM_record_raw", BM_record_raw)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  benchmark::RegisterBenchmark("BM_record_autotuned", BM_record_autotuned)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
  for (const auto& k : g_kernels) {
    if (!kernels::offered_on(k, info)) {  // matmul_f16_coopmat without matrix units (lavapipe)
      std::printf("%s: not offered on %s (no configuration passes the space's constraints)\n",
                  k.name.c_str(), info.name.c_str());
      continue;
    }
    for (const auto& size : sizes_for(k, large)) {
      auto c = std::make_unique<Case>();
      c->kernel = &k;
      c->size = size;
      Case* cp = c.get();
      g_cases.push_back(std::move(c));
      for (const char* which : {"tuned", "default"}) {
        const std::string name = k.name + "/" + size_name(size) + "/" + which;
        benchmark::RegisterBenchmark(
            name.c_str(),
            [cp, w = std::string(which)](benchmark::State& st) { run_case(st, cp, w); })
            ->UseManualTime()
            ->Iterations(5)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_app.reset();
  g_cases.clear();  // kernels, workloads and tuners before the device
  g_device.reset();
  return 0;
}
