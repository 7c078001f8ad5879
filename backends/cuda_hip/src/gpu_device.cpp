// GpuDevice: buffers, compile-and-load, launch and timing over a GpuApi, through the objects
// gpu_device.hpp lists.
#include "gpu_device.hpp"

#include <typeinfo>

#include "tune/backend/subgroup_size.hpp"
#include "variant_callback.hpp"

namespace tune::gpu {
namespace {

constexpr std::size_t kMaxArgs = 64;

}  // namespace

GpuBuffer::~GpuBuffer() {
  if (ptr_ != 0 && owned_) {
    GpuApi& api = owner_->api();
    const CurrentScope current(api);
    (void)api.mem_free(ptr_);  // nothing to report from a destructor; a lost device leaks
  }
}

GpuKernel::GpuKernel(GpuDevice* owner, Handle module, Handle function, std::string name,
                     bool from_cache, KernelResources resources, std::string log,
                     std::uint32_t dynamic_shared_limit, std::vector<TensorMapSpec> tensor_maps)
    : owner_(owner),
      module_(module),
      function_(function),
      name_(std::move(name)),
      dynamic_shared_limit_(dynamic_shared_limit),
      tensor_maps_(std::move(tensor_maps)) {
  resources_ = resources;
  log_ = std::move(log);
  from_binary_cache_ = from_cache;
}

GpuKernel::~GpuKernel() {
  GpuApi& api = owner_->api();
  const CurrentScope current(api);
  (void)api.module_unload(module_);
}

Result<std::unique_ptr<GpuDevice>> GpuDevice::make(std::unique_ptr<GpuApi> api,
                                                   std::shared_ptr<RtcCompiler> compiler,
                                                   std::shared_ptr<BinaryCache> cache,
                                                   DeviceInfo info,
                                                   std::optional<Handle> app_stream) {
  std::unique_ptr<GpuDevice> dev(
      new GpuDevice(std::move(api), std::move(compiler), std::move(cache), std::move(info)));
  const CurrentScope current(*dev->api_);
  TUNE_RETURN_IF_ERROR(dev->status_.entered(current));
  if (app_stream) {
    dev->stream_ = *app_stream;
    dev->own_stream_ = false;
    return dev;
  }
  if (int rc = dev->api_->stream_create(&dev->stream_); rc != 0)
    return dev->status_.fail(Call::stream_create, rc, StatusCode::unavailable);
  return dev;
}

GpuDevice::GpuDevice(std::unique_ptr<GpuApi> api, std::shared_ptr<RtcCompiler> compiler,
                     std::shared_ptr<BinaryCache> cache, DeviceInfo info)
    : api_(std::move(api)),
      compiler_(std::move(compiler)),
      cache_(std::move(cache)),
      info_(std::move(info)),
      status_(*api_, info_.name),
      loader_(*api_, status_, info_),
      interop_(*api_, status_, info_),
      timer_(std::make_unique<EventTimer>(*api_, status_, info_)) {}

// The application's stream is synchronised (libtune's work on it must end before its events
// and scratch buffer go), never destroyed.
GpuDevice::~GpuDevice() {
  comparison_.release();
  const CurrentScope current(*api_);
  if (stream_ != nullptr || !own_stream_) (void)api_->stream_sync(stream_);
  timer_.reset();  // its events and scratch buffer
  if (stream_ != nullptr && own_stream_) (void)api_->stream_destroy(stream_);
}

Result<const GpuBuffer*> GpuDevice::buffer_of(const DeviceBuffer& b, std::string_view what) const {
  if (const GpuBuffer* own = own_buffer(b)) return own;
  return Status(
      StatusCode::invalid_argument,
      std::string(what) + ": buffer was not allocated by this " + info_.backend + " device");
}

Result<const GpuKernel*> GpuDevice::kernel_of(const CompiledKernel& k) const {
  if (const GpuKernel* own = own_kernel(k)) return own;
  return Status(StatusCode::invalid_argument,
                "kernel was not compiled by this " + info_.backend + " device");
}

Result<Buffer> GpuDevice::alloc(std::uint64_t bytes) {
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  // Zero bytes is a caller's mistake on every backend (the conformance suite holds all alike).
  if (bytes == 0) return Status(StatusCode::invalid_argument, "alloc: a buffer of zero bytes");
  DevPtr ptr = 0;
  if (int rc = api_->mem_alloc(&ptr, bytes); rc != 0)
    return status_.fail(Call::mem_alloc, rc, StatusCode::out_of_resources,
                        "allocating " + std::to_string(bytes) + " bytes");
  return Buffer(new GpuBuffer(this, ptr, bytes));
}

namespace {
Status check_range(const DeviceBuffer& b, std::uint64_t bytes, std::uint64_t offset,
                   std::string_view what) {
  if (offset > b.size_bytes() || bytes > b.size_bytes() - offset) {
    return Status(StatusCode::invalid_argument,
                  std::string(what) + ": range [" + std::to_string(offset) + ", " +
                      std::to_string(offset + bytes) + ") exceeds the buffer's " +
                      std::to_string(b.size_bytes()) + " bytes");
  }
  return {};
}
}  // namespace

Status GpuDevice::upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                         std::uint64_t offset) {
  auto b = buffer_of(dst, "upload");
  if (!b.ok()) return b.status();
  TUNE_RETURN_IF_ERROR(check_range(dst, bytes, offset, "upload"));
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  if (int rc = api_->memcpy_htod((*b)->ptr() + offset, src, bytes, stream_); rc != 0)
    return status_.fail(Call::memcpy_htod, rc, StatusCode::internal, "upload");
  // Synchronous so the caller may reuse `src` at once whatever the runtime's staging rules.
  if (int rc = api_->stream_sync(stream_); rc != 0)
    return status_.fail(Call::stream_sync, rc, StatusCode::internal, "upload");
  return {};
}

Status GpuDevice::download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                           std::uint64_t offset) {
  auto b = buffer_of(src, "download");
  if (!b.ok()) return b.status();
  TUNE_RETURN_IF_ERROR(check_range(src, bytes, offset, "download"));
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  if (int rc = api_->memcpy_dtoh(dst, (*b)->ptr() + offset, bytes, stream_); rc != 0)
    return status_.fail(Call::memcpy_dtoh, rc, StatusCode::internal, "download");
  if (int rc = api_->stream_sync(stream_); rc != 0)
    return status_.fail(Call::stream_sync, rc, StatusCode::internal, "download");
  return {};
}

Status GpuDevice::fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
                       std::uint64_t offset) {
  auto b = buffer_of(dst, "fill");
  if (!b.ok()) return b.status();
  TUNE_RETURN_IF_ERROR(check_range(dst, bytes, offset, "fill"));
  if (bytes % 4 != 0 || offset % 4 != 0) {
    return Status(StatusCode::invalid_argument, "fill: bytes (" + std::to_string(bytes) +
                                                    ") and offset (" + std::to_string(offset) +
                                                    ") must be multiples of 4");
  }
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  if (int rc = api_->memset_d32((*b)->ptr() + offset, pattern, bytes / 4, stream_); rc != 0)
    return status_.fail(Call::memset_d32, rc, StatusCode::internal, "fill");
  return {};
}

Status GpuDevice::copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) {
  auto d = buffer_of(dst, "copy destination");
  if (!d.ok()) return d.status();
  auto s = buffer_of(src, "copy source");
  if (!s.ok()) return s.status();
  TUNE_RETURN_IF_ERROR(check_range(dst, bytes, 0, "copy destination"));
  TUNE_RETURN_IF_ERROR(check_range(src, bytes, 0, "copy source"));
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  if (int rc = api_->memcpy_dtod((*d)->ptr(), (*s)->ptr(), bytes, stream_); rc != 0)
    return status_.fail(Call::memcpy_dtod, rc, StatusCode::internal, "copy");
  return {};
}

Result<std::unique_ptr<CompiledKernel>> GpuDevice::compile(const KernelSource& source,
                                                           const Config& config) {
  return compile_variant(source, config, /*use_cache=*/true);
}

bool GpuDevice::evict_binary(const CompiledKernel& kernel, std::string_view why) {
  auto k = kernel_of(kernel);
  if (!k.ok() || (*k)->cache_key().empty() || !cache_) return false;
  return cache_->evict((*k)->cache_key(), why);
}

Status GpuDevice::launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) {
  auto k = kernel_of(kernel);
  if (!k.ok()) return k.status();
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return launch_locked(**k, dims, args, stream_);
}

Result<std::unique_ptr<CompiledKernel>> GpuDevice::compile_variant(const KernelSource& source,
                                                                   const Config& config,
                                                                   bool use_cache) {
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  TUNE_RETURN_IF_ERROR(check_subgroup_size(config.launch().subgroup_size, info_));
  const std::string name = source.entry + "{" + config.to_string() + "}";
  // TMA tensor maps (KernelSource::tensor_maps): this variant's specs, before compiling.
  auto tensor_maps = tensor_map_specs(*api_, info_.backend, source, config, name);
  if (!tensor_maps.ok()) return tensor_maps.status();
  auto out =
      compile_for(*compiler_, info_.arch, source, config, use_cache ? cache_.get() : nullptr);
  if (!out.ok()) return out.status();
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  const RelaxedCaptureScope relaxed(*api_);  // module loading during an application's capture

  // The symbol the compiler lowered the entry to, when it reported one (e.g. a mangled
  // template instantiation); else the source's entry name (extern "C").
  const std::string& symbol = out->entry_name.empty() ? source.entry : out->entry_name;
  auto module = loader_.load(out->binary.data(), symbol, name);
  if (!module.ok()) return module.status();
  // What is on disk may have been put there by someone else: a cached binary's parameters must
  // be the kernel's, where the driver can tell.
  if (out->from_cache) {
    if (std::string why =
            loader_.cached_binary_unlike(module->function(), source.signature, tensor_maps->size());
        !why.empty()) {
      module->unload();
      if (cache_)
        cache_->evict(out->cache_key, name + ": its parameters are not the kernel's (" + why + ")");
      return compile_variant(source, config, /*use_cache=*/false);
    }
  }
  return make_kernel(source, config, *out, *module, std::move(*tensor_maps), name);
}

Result<std::unique_ptr<CompiledKernel>> GpuDevice::make_kernel(
    const KernelSource& source, const Config& config, RtcOutput& out, LoadedModule& module,
    std::vector<TensorMapSpec> tensor_maps, const std::string& name) {
  TUNE_ASSIGN_OR_RETURN(const KernelResources res,
                        loader_.resources(module.function(), out.log, name));
  // Limits, checked before any launch: threads per block and shared memory.
  TUNE_ASSIGN_OR_RETURN(const std::uint32_t dyn_limit,
                        loader_.fit_limits(module.function(), config.launch(), res, name));
  // Module globals (KernelSource::module_globals): this variant's values, copied into its
  // module before its first launch, on the queue (ordered before any launch of it).
  if (source.module_globals) {
    std::vector<ModuleGlobal> globals;
    TUNE_RETURN_IF_ERROR(
        call_variant_callback(source.module_globals, config, &globals, "module_globals", name));
    TUNE_RETURN_IF_ERROR(
        loader_.write_globals(module.module(), globals, name, queue_mutex_, stream_));
  }
  std::string log = std::move(out.log);
  if (out.from_cache)
    log = "(binary from the " + std::string(compiler_->binary_kind()) + " cache)\n" + log;
  const Handle function = module.function();
  auto kernel = std::unique_ptr<GpuKernel>(new GpuKernel(this, module.release(), function, name,
                                                         out.from_cache, res, std::move(log),
                                                         dyn_limit, std::move(tensor_maps)));
  kernel->cache_key_ = std::move(out.cache_key);
  return std::unique_ptr<CompiledKernel>(std::move(kernel));
}

Status GpuDevice::launch_locked(const GpuKernel& kernel, const LaunchDims& dims, ArgList args,
                                Handle stream) {
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  // An empty problem (a grid with a zero dimension, as for n = 0) launches nothing and
  // succeeds, as on every backend.
  if (dims.grid.product() == 0) return Status::ok_status();
  // A partly set block ({256, 0, 0}) means what it means everywhere: 256x1x1.
  const Dim3 block = normalized_block(dims.block);
  TUNE_RETURN_IF_ERROR(check_geometry(kernel, dims, block));
  if (dims.shared_bytes > kernel.dynamic_shared_limit_.load(std::memory_order_relaxed))
    TUNE_RETURN_IF_ERROR(allow_dynamic_shared(kernel, dims.shared_bytes));
  const std::size_t maps = kernel.tensor_maps().size();
  if (args.size() + maps > kMaxArgs) {
    return Status(StatusCode::invalid_argument, kernel.name() + ": " +
                                                    std::to_string(args.size() + maps) +
                                                    " arguments (tensor maps included); at most " +
                                                    std::to_string(kMaxArgs) + " are supported");
  }
  // Each parameter points at 8 bytes of storage; the runtime copies as many bytes as the
  // kernel's parameter declares (4 for i32/f32: the low bytes, little-endian).
  std::uint64_t storage[kMaxArgs];
  void* params[kMaxArgs];
  TUNE_RETURN_IF_ERROR(pack_arguments(kernel, args, storage, params));
  if (maps == 0) return driver_launch(kernel, dims, block, stream, params);
  // TMA tensor maps travel by value after the arguments (__grid_constant__ parameters).
  // On the stack: a cache hit of a TMA kernel allocates nothing (compile() bounds their
  // number). Declared after the return above: zeroing this 1.5 KiB array was a third of the
  // host time of every launch without maps (perf, on context_fake_driver_test.cpp's driver).
  EncodedTensorMap encoded[kMaxTensorMaps];
  TUNE_RETURN_IF_ERROR(kernel.tensor_maps().encode(*this, kernel.name(), args, encoded));
  for (std::size_t i = 0; i < maps; ++i) params[args.size() + i] = encoded[i].bytes;
  return driver_launch(kernel, dims, block, stream, params);
}

Status GpuDevice::check_geometry(const GpuKernel& kernel, const LaunchDims& dims,
                                 const Dim3& block) const {
  const std::uint32_t max_threads = kernel.resources().max_threads != 0
                                        ? kernel.resources().max_threads
                                        : info_.max_threads_per_block;
  if (block.product() == 0) {
    return Status(StatusCode::invalid_argument,
                  kernel.name() +
                      ": no block size: LaunchDims::block is unset and the "
                      "configuration sets no block.x (CUDA and HIP need one; only "
                      "Vulkan takes the shader's workgroup size)");
  }
  if (block.product() > max_threads) {
    return Status(StatusCode::out_of_resources,
                  kernel.name() + ": block " + to_string(block) + " exceeds the variant's " +
                      std::to_string(max_threads) + " threads per block");
  }
  if ((info_.max_grid.x != 0 && dims.grid.x > info_.max_grid.x) ||
      (info_.max_grid.y != 0 && dims.grid.y > info_.max_grid.y) ||
      (info_.max_grid.z != 0 && dims.grid.z > info_.max_grid.z)) {
    return Status(StatusCode::out_of_resources, kernel.name() + ": grid " + to_string(dims.grid) +
                                                    " exceeds the device limit " +
                                                    to_string(info_.max_grid));
  }
  if (dims.cluster != Dim3{}) {
    const Dim3& c = dims.cluster;
    if (!api_->has_clusters()) {
      return Status(StatusCode::invalid_argument, kernel.name() + ": cluster " + to_string(c) +
                                                      " requested, but " + info_.backend +
                                                      " has no thread-block clusters (CUDA only)");
    }
    if (c.product() == 0 || dims.grid.x % c.x != 0 || dims.grid.y % c.y != 0 ||
        dims.grid.z % c.z != 0) {
      return Status(StatusCode::invalid_argument, kernel.name() + ": grid " + to_string(dims.grid) +
                                                      " is not a multiple of its cluster " +
                                                      to_string(c));
    }
  }
  return {};
}

Status GpuDevice::allow_dynamic_shared(const GpuKernel& kernel, std::uint32_t bytes) {
  const std::uint64_t total = std::uint64_t{bytes} + kernel.resources().shared_bytes;
  if (total > info_.shared_bytes_per_block_optin) {
    return Status(StatusCode::out_of_resources,
                  kernel.name() + ": " + std::to_string(total) +
                      " bytes of shared memory per block exceed the device's " +
                      std::to_string(info_.shared_bytes_per_block_optin));
  }
  if (int rc = api_->func_set_max_dynamic_shared(kernel.function(), static_cast<int>(bytes));
      rc != 0) {
    return status_.fail(Call::func_set_max_dynamic_shared, rc, StatusCode::out_of_resources,
                        kernel.name());
  }
  const_cast<GpuKernel&>(kernel).dynamic_shared_limit_.store(bytes);
  return {};
}

Status GpuDevice::pack_arguments(const GpuKernel& kernel, ArgList args, std::uint64_t* storage,
                                 void** params) const {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgValue& a = args[i];
    if (a.kind == ArgKind::buffer) {
      if (a.buffer == nullptr) {
        return Status(StatusCode::invalid_argument,
                      kernel.name() + ": argument " + std::to_string(i) + " is a null buffer");
      }
      const GpuBuffer* b = own_buffer(*a.buffer);  // no Result, no string, on success
      if (b == nullptr) {
        return Status(buffer_of(*a.buffer, "argument").status())
            .with_context(kernel.name() + " argument " + std::to_string(i));
      }
      if (a.count * size_of(a.type) > a.buffer->size_bytes()) {
        return Status(StatusCode::invalid_argument,
                      kernel.name() + ": argument " + std::to_string(i) + " claims " +
                          std::to_string(a.count) + " elements but its buffer holds " +
                          std::to_string(a.buffer->size_bytes()) + " bytes");
      }
      storage[i] = b->ptr();
    } else {
      storage[i] = a.bits;
    }
    params[i] = &storage[i];
  }
  return {};
}

Status GpuDevice::driver_launch(const GpuKernel& kernel, const LaunchDims& dims, const Dim3& block,
                                Handle stream, void** params) {
  // launch_locked admitted a cluster other than 1x1x1 only where the vendor has clusters.
  const bool clustered = dims.cluster != Dim3{};
  if (int rc = clustered ? api_->launch_cluster(kernel.function(), dims.grid, block, dims.cluster,
                                                dims.shared_bytes, stream, params)
                         : api_->launch(kernel.function(), dims.grid, block, dims.shared_bytes,
                                        stream, params);
      rc != 0) {
    return status_.fail(Call::launch, rc, StatusCode::launch_failed,
                        kernel.name() + " grid " + to_string(dims.grid) + " block " +
                            to_string(block) +
                            (clustered ? " cluster " + to_string(dims.cluster) : std::string()) +
                            " smem " + std::to_string(dims.shared_bytes));
  }
  return {};
}

Status GpuDevice::check_resets(const LaunchResets& r) const {
  TUNE_RETURN_IF_ERROR(r.check());
  for (const DeviceBuffer* b : r.zero) TUNE_RETURN_IF_ERROR(buffer_of(*b, "time: zero").status());
  for (const BufferRestore& c : r.restore) {
    TUNE_RETURN_IF_ERROR(buffer_of(*c.dst, "time: restore destination").status());
    TUNE_RETURN_IF_ERROR(buffer_of(*c.src, "time: restore source").status());
  }
  return {};
}

Status GpuDevice::enqueue_resets_locked(const LaunchResets& r) {
  for (const DeviceBuffer* b : r.zero) {
    const auto* gb = static_cast<const GpuBuffer*>(b);
    if (int rc = api_->memset_d8(gb->ptr(), 0, LaunchResets::zero_bytes(*b), stream_); rc != 0)
      return status_.fail(Call::memset_d8, rc, StatusCode::internal, "time: zero");
  }
  for (const BufferRestore& c : r.restore) {
    const auto* dst = static_cast<const GpuBuffer*>(c.dst);
    const auto* src = static_cast<const GpuBuffer*>(c.src);
    if (int rc = api_->memcpy_dtod(dst->ptr(), src->ptr(), dst->size_bytes(), stream_); rc != 0)
      return status_.fail(Call::memcpy_dtod, rc, StatusCode::internal, "time: restore");
  }
  return {};
}

Result<std::vector<double>> GpuDevice::time(const CompiledKernel& kernel, const LaunchDims& dims,
                                            ArgList args, const TimingPlan& plan) {
  auto k = kernel_of(kernel);
  if (!k.ok()) return k.status();
  if (plan.reps <= 0) {
    return Status(StatusCode::invalid_argument,
                  "time: reps must be positive, got " + std::to_string(plan.reps));
  }
  const GpuKernel& gk = **k;
  TUNE_RETURN_IF_ERROR(check_resets(plan.resets));
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  const auto reps = static_cast<std::size_t>(plan.reps);
  TUNE_RETURN_IF_ERROR(timer_->prepare(reps, plan.flush_l2));

  for (std::size_t r = 0; r < reps; ++r) {
    TUNE_RETURN_IF_ERROR(enqueue_resets_locked(plan.resets));
    if (plan.flush_l2) TUNE_RETURN_IF_ERROR(timer_->flush(r, stream_));
    TUNE_RETURN_IF_ERROR(timer_->start(r, stream_, gk.name()));
    TUNE_RETURN_IF_ERROR(launch_locked(gk, dims, args, stream_));
    TUNE_RETURN_IF_ERROR(timer_->end(r, stream_, gk.name()));
  }
  return timer_->elapsed_ns(reps, plan.timeout_ms, gk.name());
}

Result<Comparison> GpuDevice::compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                      const CompareSpec& spec) {
  return comparison_.compare(*this, actual, expected, spec);
}

Status GpuDevice::synchronize() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(status_.check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(status_.entered(current));
  if (int rc = api_->stream_sync(stream_); rc != 0)
    return status_.fail(Call::stream_sync, rc, StatusCode::launch_failed, "synchronize");
  return {};
}

// ---------------------------------------------------------------------------------------------
// Interop: the application's streams and memory (StreamInterop)

Status GpuDevice::launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                            const LaunchTarget& target) {
  if (target.is_queue()) return launch(kernel, dims, args);
  const GpuKernel* k = own_kernel(kernel);  // a cache hit's path: no Result to build
  if (k == nullptr) return kernel_of(kernel).status();
  auto stream = interop_.stream_of(target, stream_, "launch");
  if (!stream.ok()) return stream.status();
  // No lock: the launch touches only the application's stream and the kernel's own atomics.
  return launch_locked(*k, dims, args, *stream);
}

Result<bool> GpuDevice::capturing(const LaunchTarget& target) {
  auto stream = interop_.stream_of(target, stream_, "capturing");
  if (!stream.ok()) return stream.status();
  return interop_.capturing(*stream, target);
}

Status GpuDevice::queue_waits_for(const LaunchTarget& target) {
  auto stream = interop_.stream_of(target, stream_, "queue_waits_for");
  if (!stream.ok()) return stream.status();
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return interop_.order(stream_, *stream, "the device's queue waits for " + target.to_string());
}

Status GpuDevice::target_waits_for_queue(const LaunchTarget& target) {
  auto stream = interop_.stream_of(target, stream_, "target_waits_for_queue");
  if (!stream.ok()) return stream.status();
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return interop_.order(*stream, stream_, target.to_string() + " waits for the device's queue");
}

Result<Buffer> GpuDevice::wrap(DevPtr ptr, std::uint64_t bytes) {
  TUNE_RETURN_IF_ERROR(interop_.check_wrappable(ptr, bytes));
  return Buffer(new GpuBuffer(this, ptr, bytes, /*owned=*/false));
}

}  // namespace tune::gpu
