// GpuDevice: buffers, compile-and-load, launch and event timing over a GpuApi.
#include "gpu_device.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <thread>
#include <typeinfo>

#include "tune/backend/last_level_cache.hpp"

namespace tune::gpu {
namespace {

constexpr std::uint32_t kDefaultSharedLimit = 48 * 1024;  // without the opt-in attribute
constexpr std::size_t kMaxArgs = 64;
// Tensor maps per variant: a launch encodes them into a stack array of this size (a hit
// allocates nothing); the bundled wgmma kernels use two.
constexpr std::size_t kMaxTensorMaps = 8;

// Calls one of a source's per-variant callbacks (module_globals, tensor_maps) into `out`; an
// exception is callback_failed naming the callback and the variant.
template <class Fn, class T>
Status call_variant_callback(const Fn& fn, const Config& config, T* out, const char* what,
                             const std::string& variant) {
  std::string thrown;
  try {
    *out = fn(config);
  } catch (const std::exception& e) {
    thrown = e.what();
  } catch (...) {
    thrown = "an exception that is not a std::exception";
  }
  if (thrown.empty()) return {};
  return Status(StatusCode::callback_failed,
                std::string(what) + " threw for " + variant + ": " + thrown);
}

// The calling thread may load modules while an application's stream captures a graph in
// global mode (a CaptureMiss::fallback compiles its variant then): relaxed for one scope, the
// thread's own mode put back after.
class RelaxedCaptureScope {
 public:
  explicit RelaxedCaptureScope(GpuApi& api) noexcept
      : api_(api), relaxed_(api.relax_capture_mode(&previous_) == 0) {}
  ~RelaxedCaptureScope() {
    if (relaxed_) api_.restore_capture_mode(previous_);
  }
  RelaxedCaptureScope(const RelaxedCaptureScope&) = delete;
  RelaxedCaptureScope& operator=(const RelaxedCaptureScope&) = delete;

 private:
  GpuApi& api_;
  int previous_ = 0;
  bool relaxed_;
};

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
      tensor_maps_(std::move(tensor_maps)),
      encoded_(tensor_maps_.size()) {
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
  TUNE_RETURN_IF_ERROR(dev->entered(current));
  if (app_stream) {
    dev->stream_ = *app_stream;
    dev->own_stream_ = false;
    return dev;
  }
  if (int rc = dev->api_->stream_create(&dev->stream_); rc != 0)
    return dev->fail(Call::stream_create, rc, StatusCode::unavailable);
  return dev;
}

GpuDevice::GpuDevice(std::unique_ptr<GpuApi> api, std::shared_ptr<RtcCompiler> compiler,
                     std::shared_ptr<BinaryCache> cache, DeviceInfo info)
    : api_(std::move(api)),
      compiler_(std::move(compiler)),
      cache_(std::move(cache)),
      info_(std::move(info)) {}

// The application's stream is synchronised (libtune's work on it must end before its events
// and scratch buffer go), never destroyed.
GpuDevice::~GpuDevice() {
  comparison_.release();
  const CurrentScope current(*api_);
  if (stream_ != nullptr || !own_stream_) (void)api_->stream_sync(stream_);
  for (Handle e : events_) (void)api_->event_destroy(e);
  if (flush_ptr_ != 0) (void)api_->mem_free(flush_ptr_);
  if (stream_ != nullptr && own_stream_) (void)api_->stream_destroy(stream_);
}

Status GpuDevice::fail(Call call, int code, StatusCode fallback, std::string_view context) {
  std::string msg;
  if (!context.empty()) msg = std::string(context) + ": ";
  msg += api_->call_name(call);
  msg += " failed: ";
  msg += api_->error_text(code);
  switch (api_->classify(code)) {
    case ErrorClass::sticky: {
      // Never reset here: the context is shared with the application (and the primary one
      // with every runtime-API user of the process); only the application may reset it.
      msg +=
          " (a sticky error: the context is unusable, and CUDA keeps the process unusable after "
          "an illegal address until it is relaunched; isolated tuning keeps faulting candidates "
          "out of the application's process)";
      std::lock_guard<std::mutex> lock(lost_mutex_);
      if (!lost_.load()) {
        lost_reason_ = msg;
        lost_.store(true);
      }
      return Status(StatusCode::device_lost, msg);
    }
    case ErrorClass::out_of_memory:
    case ErrorClass::out_of_resources:
      return Status(StatusCode::out_of_resources, msg);
    case ErrorClass::bad_image:
      return Status(StatusCode::compile_error, msg);
    case ErrorClass::not_ready:
    case ErrorClass::other:
      break;
  }
  return Status(fallback, msg);
}

Status GpuDevice::entered(const CurrentScope& scope) {
  return scope.rc() == 0 ? Status{}
                         : fail(Call::enter_current, scope.rc(), StatusCode::unavailable);
}

Status GpuDevice::check_lost() const {
  if (!lost_.load()) return {};
  std::lock_guard<std::mutex> lock(lost_mutex_);
  return Status(StatusCode::device_lost,
                "device " + info_.name + " was lost earlier: " + lost_reason_);
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
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  // Zero bytes is a caller's mistake on every backend (the conformance suite holds all alike).
  if (bytes == 0) return Status(StatusCode::invalid_argument, "alloc: a buffer of zero bytes");
  DevPtr ptr = 0;
  if (int rc = api_->mem_alloc(&ptr, bytes); rc != 0)
    return fail(Call::mem_alloc, rc, StatusCode::out_of_resources,
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
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  if (int rc = api_->memcpy_htod((*b)->ptr() + offset, src, bytes, stream_); rc != 0)
    return fail(Call::memcpy_htod, rc, StatusCode::internal, "upload");
  // Synchronous so the caller may reuse `src` at once whatever the runtime's staging rules.
  if (int rc = api_->stream_sync(stream_); rc != 0)
    return fail(Call::stream_sync, rc, StatusCode::internal, "upload");
  return {};
}

Status GpuDevice::download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                           std::uint64_t offset) {
  auto b = buffer_of(src, "download");
  if (!b.ok()) return b.status();
  TUNE_RETURN_IF_ERROR(check_range(src, bytes, offset, "download"));
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  if (int rc = api_->memcpy_dtoh(dst, (*b)->ptr() + offset, bytes, stream_); rc != 0)
    return fail(Call::memcpy_dtoh, rc, StatusCode::internal, "download");
  if (int rc = api_->stream_sync(stream_); rc != 0)
    return fail(Call::stream_sync, rc, StatusCode::internal, "download");
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
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  if (int rc = api_->memset_d32((*b)->ptr() + offset, pattern, bytes / 4, stream_); rc != 0)
    return fail(Call::memset_d32, rc, StatusCode::internal, "fill");
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
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  if (int rc = api_->memcpy_dtod((*d)->ptr(), (*s)->ptr(), bytes, stream_); rc != 0)
    return fail(Call::memcpy_dtod, rc, StatusCode::internal, "copy");
  return {};
}

std::string parameters_unlike(std::span<const std::size_t> sizes, const KernelSignature& sig,
                              std::size_t maps) {
  const auto& decls = sig.decls();
  if (sizes.size() != decls.size() + maps) {
    return std::to_string(sizes.size()) + " parameters, but the kernel has " +
           std::to_string(decls.size()) + " arguments" +
           (maps != 0 ? " and " + std::to_string(maps) + " tensor maps" : std::string());
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t want = i >= decls.size()                  ? std::size_t{128}
                             : decls[i].kind == ArgKind::buffer ? sizeof(DevPtr)
                                                                : size_of(decls[i].type);
    if (sizes[i] != want) {
      return "parameter " + std::to_string(i) + " takes " + std::to_string(sizes[i]) +
             " bytes, but " +
             (i < decls.size() ? "argument '" + decls[i].name + "'" : std::string("a tensor map")) +
             " is " + std::to_string(want);
    }
  }
  return {};
}

std::vector<std::size_t> GpuDevice::parameter_sizes(Handle function) const {
  std::vector<std::size_t> sizes;
  if (!api_->has_param_info()) return sizes;
  std::size_t offset = 0, bytes = 0;
  // Past the last parameter the driver answers an error; 4096 bounds a broken answer.
  while (sizes.size() < 4096 && api_->func_param_info(function, sizes.size(), &offset, &bytes) == 0)
    sizes.push_back(bytes);
  return sizes;
}

Result<std::unique_ptr<CompiledKernel>> GpuDevice::compile(const KernelSource& source,
                                                           const Config& config) {
  return compile_variant(source, config, /*use_cache=*/true);
}

Result<std::unique_ptr<CompiledKernel>> GpuDevice::compile_variant(const KernelSource& source,
                                                                   const Config& config,
                                                                   bool use_cache) {
  TUNE_RETURN_IF_ERROR(check_lost());
  // TMA tensor maps (KernelSource::tensor_maps): this variant's specs, before compiling.
  std::vector<TensorMapSpec> tensor_maps;
  if (source.tensor_maps) {
    const std::string variant = source.entry + "{" + config.to_string() + "}";
    if (!api_->has_tensor_maps()) {
      return Status(StatusCode::invalid_argument,
                    variant + ": a " + info_.backend +
                        " device has no TMA tensor maps (KernelSource::tensor_maps is for CUDA)");
    }
    TUNE_RETURN_IF_ERROR(
        call_variant_callback(source.tensor_maps, config, &tensor_maps, "tensor_maps", variant));
    if (tensor_maps.size() > kMaxTensorMaps) {
      return Status(StatusCode::invalid_argument,
                    variant + ": " + std::to_string(tensor_maps.size()) + " tensor maps; at most " +
                        std::to_string(kMaxTensorMaps) + " are supported");
    }
  }
  auto out =
      compile_for(*compiler_, info_.arch, source, config, use_cache ? cache_.get() : nullptr);
  if (!out.ok()) return out.status();
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  const RelaxedCaptureScope relaxed(*api_);  // module loading during an application's capture

  const std::string name = source.entry + "{" + config.to_string() + "}";
  Handle module = nullptr;
  if (int rc = api_->module_load(&module, out->binary.data()); rc != 0)
    return fail(Call::module_load, rc, StatusCode::compile_error, "loading " + name);
  // From here the module must be unloaded on every failure path.
  auto unload_and = [&](Status s) {
    (void)api_->module_unload(module);
    return s;
  };
  // The symbol the compiler lowered the entry to, when it reported one (e.g. a mangled
  // template instantiation); else the source's entry name (extern "C").
  const std::string& symbol = out->entry_name.empty() ? source.entry : out->entry_name;
  Handle function = nullptr;
  if (int rc = api_->module_get_function(&function, module, symbol.c_str()); rc != 0) {
    return unload_and(fail(
        Call::module_get_function, rc, StatusCode::compile_error,
        "entry point '" + symbol + "' of " + name + " (is it declared extern \"C\" __global__?)"));
  }
  // What is on disk may have been put there by someone else: a cached binary's parameters must
  // be the kernel's, where the driver can tell.
  if (out->from_cache && !source.signature.decls().empty()) {
    if (std::string why =
            parameters_unlike(parameter_sizes(function), source.signature, tensor_maps.size());
        !why.empty() && api_->has_param_info()) {
      (void)api_->module_unload(module);
      if (cache_)
        cache_->evict(out->cache_key, name + ": its parameters are not the kernel's (" + why + ")");
      return compile_variant(source, config, /*use_cache=*/false);
    }
  }

  KernelResources res = parse_resource_log(out->log);  // spill stores come only from here
  int value = 0;
  const std::pair<FuncAttr, std::uint32_t*> attrs[] = {
      {FuncAttr::num_regs, &res.registers},
      {FuncAttr::local_bytes, &res.local_bytes},
      {FuncAttr::shared_bytes, &res.shared_bytes},
      {FuncAttr::max_threads, &res.max_threads},
  };
  for (const auto& [attr, field] : attrs) {
    if (int rc = api_->func_get_attribute(&value, attr, function); rc != 0)
      return unload_and(fail(Call::func_get_attribute, rc, StatusCode::internal, name));
    if (value > 0) *field = static_cast<std::uint32_t>(value);
  }

  // Limits, checked before any launch: threads per block and shared memory.
  const LaunchOptions& lo = config.launch();
  const std::uint64_t threads = normalized_block(lo.block).product();  // 0 when unset
  const std::uint32_t max_threads =
      res.max_threads != 0 ? res.max_threads : info_.max_threads_per_block;
  if (threads > max_threads) {
    return unload_and(Status(StatusCode::out_of_resources,
                             name + ": needs " + std::to_string(threads) +
                                 " threads per block but this variant " + "allows " +
                                 std::to_string(max_threads) + " (" + res.to_string() + ")"));
  }
  const std::uint64_t smem = std::uint64_t{lo.shared_bytes} + res.shared_bytes;
  if (smem > info_.shared_bytes_per_block_optin) {
    return unload_and(Status(StatusCode::out_of_resources,
                             name + ": needs " + std::to_string(smem) +
                                 " bytes of shared memory per block; the device allows " +
                                 std::to_string(info_.shared_bytes_per_block_optin)));
  }
  const std::uint32_t default_limit =
      (info_.shared_bytes_per_block != 0 ? info_.shared_bytes_per_block : kDefaultSharedLimit);
  std::uint32_t dyn_limit = default_limit > res.shared_bytes ? default_limit - res.shared_bytes : 0;
  if (lo.shared_bytes > dyn_limit) {
    if (int rc = api_->func_set_max_dynamic_shared(function, static_cast<int>(lo.shared_bytes));
        rc != 0) {
      return unload_and(fail(Call::func_set_max_dynamic_shared, rc, StatusCode::out_of_resources,
                             name + " asking for " + std::to_string(lo.shared_bytes) +
                                 " bytes of dynamic shared memory"));
    }
    dyn_limit = lo.shared_bytes;
  }
  // Module globals (KernelSource::module_globals): this variant's values, copied into its
  // module before its first launch, on the queue (ordered before any launch of it).
  if (source.module_globals) {
    std::vector<ModuleGlobal> globals;
    if (Status st =
            call_variant_callback(source.module_globals, config, &globals, "module_globals", name);
        !st.ok())
      return unload_and(std::move(st));
    for (const ModuleGlobal& g : globals) {
      DevPtr ptr = 0;
      std::size_t bytes = 0;
      if (int rc = api_->module_get_global(&ptr, &bytes, module, g.name.c_str()); rc != 0) {
        if (api_->classify(rc) != ErrorClass::other)
          return unload_and(fail(Call::module_get_global, rc, StatusCode::internal, name));
        return unload_and(Status(
            StatusCode::invalid_argument,
            "module global '" + g.name + "' of " + name + ": the module has no such symbol (" +
                api_->call_name(Call::module_get_global) + ": " + api_->error_text(rc) +
                "); it must be a __constant__ or __device__ variable at global scope, or its "
                "mangled name"));
      }
      if (bytes != g.bytes.size()) {
        return unload_and(Status(StatusCode::invalid_argument,
                                 "module global '" + g.name + "' of " + name + " is " +
                                     std::to_string(bytes) + " bytes; module_globals gave " +
                                     std::to_string(g.bytes.size())));
      }
      if (bytes == 0) continue;
      std::lock_guard<std::mutex> lock(queue_mutex_);
      if (int rc = api_->memcpy_htod(ptr, g.bytes.data(), bytes, stream_); rc != 0)
        return unload_and(fail(Call::memcpy_htod, rc, StatusCode::internal,
                               "setting module global '" + g.name + "' of " + name));
      // The host bytes are freed when this returns: wait for the copy.
      if (int rc = api_->stream_sync(stream_); rc != 0)
        return unload_and(fail(Call::stream_sync, rc, StatusCode::internal,
                               "setting module global '" + g.name + "' of " + name));
    }
  }
  std::string log = std::move(out->log);
  if (out->from_cache)
    log = "(binary from the " + std::string(compiler_->binary_kind()) + " cache)\n" + log;
  auto kernel =
      std::unique_ptr<GpuKernel>(new GpuKernel(this, module, function, name, out->from_cache, res,
                                               std::move(log), dyn_limit, std::move(tensor_maps)));
  kernel->cache_key_ = std::move(out->cache_key);
  return std::unique_ptr<CompiledKernel>(std::move(kernel));
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

Status GpuDevice::tensor_maps_for(const GpuKernel& kernel, ArgList args, EncodedTensorMap* out) {
  std::lock_guard<std::mutex> lock(kernel.maps_mutex_);
  for (std::size_t i = 0; i < kernel.tensor_maps_.size(); ++i) {
    const TensorMapSpec& spec = kernel.tensor_maps_[i];
    // Messages are built only on failure: a launch of a TMA kernel allocates nothing.
    const auto what = [&] { return kernel.name() + " tensor map " + std::to_string(i); };
    auto arg = [&](int index, ArgKind kind) -> const ArgValue* {
      if (index < 0 || static_cast<std::size_t>(index) >= args.size()) return nullptr;
      return args[index].kind == kind ? &args[index] : nullptr;
    };
    const ArgValue* buf = arg(spec.buffer_arg, ArgKind::buffer);
    const ArgValue* rows_arg = arg(spec.rows_arg, ArgKind::scalar);
    const ArgValue* cols_arg = arg(spec.cols_arg, ArgKind::scalar);
    if (buf == nullptr || buf->buffer == nullptr || rows_arg == nullptr || cols_arg == nullptr) {
      return Status(StatusCode::invalid_argument,
                    what() + ": argument " + std::to_string(spec.buffer_arg) +
                        " must be a buffer and arguments " + std::to_string(spec.rows_arg) +
                        " and " + std::to_string(spec.cols_arg) + " scalars");
    }
    const std::int64_t rows = rows_arg->as_int(), cols = cols_arg->as_int();
    const std::uint64_t elem = size_of(buf->type);
    auto b = buffer_of(*buf->buffer, "tensor map");
    if (!b.ok()) return Status(b.status()).with_context(what());
    const DevPtr ptr = (*b)->ptr();
    const auto shape = [&] {
      return std::to_string(rows) + " x " + std::to_string(cols) + " " +
             std::string(to_string(buf->type));
    };
    if (rows < 1 || cols < 1 ||
        static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * elem >
            buf->buffer->size_bytes()) {
      return Status(StatusCode::invalid_argument,
                    what() + ": a " + shape() + " matrix does not fit argument " +
                        std::to_string(spec.buffer_arg) + " (" +
                        std::to_string(buf->buffer->size_bytes()) + " bytes)");
    }
    // TMA's own rules, named here rather than as the driver's CUDA_ERROR_INVALID_VALUE; or a
    // zero map for a kernel that loads such a matrix without TMA (zeros_when_unaligned).
    if (ptr % 16 != 0 || (static_cast<std::uint64_t>(cols) * elem) % 16 != 0) {
      if (spec.zeros_when_unaligned) {
        out[i] = EncodedTensorMap{};
        continue;
      }
      return Status(StatusCode::invalid_argument,
                    what() + " over argument " + std::to_string(spec.buffer_arg) + " (" + shape() +
                        "): TMA needs a 16-byte aligned address and row stride; the row is " +
                        std::to_string(static_cast<std::uint64_t>(cols) * elem) + " bytes");
    }
    EncodedTensorMap& cached = kernel.encoded_[i];
    if (!cached.valid || cached.ptr != ptr || cached.rows != static_cast<std::uint64_t>(rows) ||
        cached.cols != static_cast<std::uint64_t>(cols) || cached.type != buf->type) {
      cached.valid = false;
      if (int rc = api_->encode_tensor_map(cached.bytes, spec, buf->type, ptr,
                                           static_cast<std::uint64_t>(rows),
                                           static_cast<std::uint64_t>(cols));
          rc != 0) {
        return fail(Call::encode_tensor_map, rc, StatusCode::invalid_argument,
                    what() + " (" + shape() + ", box " + std::to_string(spec.box_rows) + " x " +
                        std::to_string(spec.box_cols) + ")");
      }
      cached.ptr = ptr;
      cached.rows = static_cast<std::uint64_t>(rows);
      cached.cols = static_cast<std::uint64_t>(cols);
      cached.type = buf->type;
      cached.valid = true;
    }
    out[i] = cached;
  }
  return {};
}

Status GpuDevice::launch_locked(const GpuKernel& kernel, const LaunchDims& dims, ArgList args,
                                Handle stream) {
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  const std::uint32_t max_threads = kernel.resources().max_threads != 0
                                        ? kernel.resources().max_threads
                                        : info_.max_threads_per_block;
  // An empty problem (a grid with a zero dimension, as for n = 0) launches nothing and
  // succeeds, as on every backend.
  if (dims.grid.product() == 0) return Status::ok_status();
  // A partly set block ({256, 0, 0}) means what it means everywhere: 256x1x1.
  const Dim3 block = normalized_block(dims.block);
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
  if (dims.shared_bytes > kernel.dynamic_shared_limit_.load(std::memory_order_relaxed)) {
    const std::uint64_t total = std::uint64_t{dims.shared_bytes} + kernel.resources().shared_bytes;
    if (total > info_.shared_bytes_per_block_optin) {
      return Status(StatusCode::out_of_resources,
                    kernel.name() + ": " + std::to_string(total) +
                        " bytes of shared memory per block exceed the device's " +
                        std::to_string(info_.shared_bytes_per_block_optin));
    }
    if (int rc = api_->func_set_max_dynamic_shared(kernel.function(),
                                                   static_cast<int>(dims.shared_bytes));
        rc != 0) {
      return fail(Call::func_set_max_dynamic_shared, rc, StatusCode::out_of_resources,
                  kernel.name());
    }
    const_cast<GpuKernel&>(kernel).dynamic_shared_limit_.store(dims.shared_bytes);
  }
  const std::size_t maps = kernel.tensor_maps_.size();
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
  if (maps == 0) return driver_launch(kernel, dims, block, stream, params);
  // TMA tensor maps travel by value after the arguments (__grid_constant__ parameters).
  // On the stack: a cache hit of a TMA kernel allocates nothing (compile() bounds their
  // number). Declared after the return above: zeroing this 1.5 KiB array was a third of the
  // host time of every launch without maps (perf, on context_fake_driver_test.cpp's driver).
  EncodedTensorMap encoded[kMaxTensorMaps];
  TUNE_RETURN_IF_ERROR(tensor_maps_for(kernel, args, encoded));
  for (std::size_t i = 0; i < maps; ++i) params[args.size() + i] = encoded[i].bytes;
  return driver_launch(kernel, dims, block, stream, params);
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
    return fail(Call::launch, rc, StatusCode::launch_failed,
                kernel.name() + " grid " + to_string(dims.grid) + " block " + to_string(block) +
                    (clustered ? " cluster " + to_string(dims.cluster) : std::string()) + " smem " +
                    std::to_string(dims.shared_bytes));
  }
  return {};
}

Status GpuDevice::ensure_flush_buffer() {
  if (flush_ptr_ != 0) return {};
  const std::uint64_t bytes = flush_bytes_for(info_);  // twice the last-level cache
  if (int rc = api_->mem_alloc(&flush_ptr_, bytes); rc != 0) {
    flush_ptr_ = 0;
    return fail(Call::mem_alloc, rc, StatusCode::out_of_resources,
                "allocating the " + std::to_string(bytes >> 20) + " MiB cache flush buffer");
  }
  flush_bytes_ = bytes;
  return {};
}

Status GpuDevice::ensure_events(std::size_t pairs) {
  while (events_.size() < 2 * pairs) {
    Handle e = nullptr;
    if (int rc = api_->event_create(&e); rc != 0)
      return fail(Call::event_create, rc, StatusCode::internal);
    events_.push_back(e);
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
      return fail(Call::memset_d8, rc, StatusCode::internal, "time: zero");
  }
  for (const BufferRestore& c : r.restore) {
    const auto* dst = static_cast<const GpuBuffer*>(c.dst);
    const auto* src = static_cast<const GpuBuffer*>(c.src);
    if (int rc = api_->memcpy_dtod(dst->ptr(), src->ptr(), dst->size_bytes(), stream_); rc != 0)
      return fail(Call::memcpy_dtod, rc, StatusCode::internal, "time: restore");
  }
  return {};
}

Status GpuDevice::wait_event(Handle event, double timeout_ms, std::string_view what) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit = std::chrono::duration<double, std::milli>(timeout_ms);
  for (int spins = 0;; ++spins) {
    int rc = api_->event_query(event);
    if (rc == 0) return {};
    if (api_->classify(rc) != ErrorClass::not_ready)
      return fail(Call::event_query, rc, StatusCode::launch_failed, what);
    if (clock::now() - start > limit) {
      return Status(StatusCode::timeout,
                    std::string(what) + ": not finished after " + std::to_string(timeout_ms) +
                        " ms (the launch keeps the device busy until it ends)");
    }
    // Spin briefly for short kernels, then back off so a long one does not burn a core.
    if (spins < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
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
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  if (plan.flush_l2) TUNE_RETURN_IF_ERROR(ensure_flush_buffer());
  const auto reps = static_cast<std::size_t>(plan.reps);
  TUNE_RETURN_IF_ERROR(ensure_events(reps));

  for (std::size_t r = 0; r < reps; ++r) {
    TUNE_RETURN_IF_ERROR(enqueue_resets_locked(plan.resets));
    if (plan.flush_l2) {
      if (int rc = api_->memset_d8(flush_ptr_, static_cast<std::uint8_t>(r), flush_bytes_, stream_);
          rc != 0)
        return fail(Call::memset_d8, rc, StatusCode::internal, "cache flush");
    }
    if (int rc = api_->event_record(events_[2 * r], stream_); rc != 0)
      return fail(Call::event_record, rc, StatusCode::internal, gk.name());
    TUNE_RETURN_IF_ERROR(launch_locked(gk, dims, args, stream_));
    if (int rc = api_->event_record(events_[2 * r + 1], stream_); rc != 0)
      return fail(Call::event_record, rc, StatusCode::internal, gk.name());
  }

  std::vector<double> ns(reps);
  for (std::size_t r = 0; r < reps; ++r) {
    TUNE_RETURN_IF_ERROR(wait_event(events_[2 * r + 1], plan.timeout_ms, gk.name()));
    float ms = 0;
    if (int rc = api_->event_elapsed_ms(&ms, events_[2 * r], events_[2 * r + 1]); rc != 0)
      return fail(Call::event_elapsed, rc, StatusCode::internal, gk.name());
    ns[r] = static_cast<double>(ms) * 1e6;
  }
  return ns;
}

Result<Comparison> GpuDevice::compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                      const CompareSpec& spec) {
  return comparison_.compare(*this, actual, expected, spec);
}

Status GpuDevice::synchronize() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  if (int rc = api_->stream_sync(stream_); rc != 0)
    return fail(Call::stream_sync, rc, StatusCode::launch_failed, "synchronize");
  return {};
}

// ---------------------------------------------------------------------------------------------
// Interop: the application's streams and memory

Result<Handle> GpuDevice::target_stream(const LaunchTarget& target, std::string_view what) const {
  if (target.is_queue()) return stream_;
  if (target.kind == LaunchTarget::Kind::stream) return target.handle;
  return Status(StatusCode::unavailable, std::string(what) + ": a " + info_.backend +
                                             " device cannot use a " + target.to_string() +
                                             "; give a stream (LaunchTarget::stream)");
}

Status GpuDevice::launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                            const LaunchTarget& target) {
  if (target.is_queue()) return launch(kernel, dims, args);
  const GpuKernel* k = own_kernel(kernel);  // a cache hit's path: no Result to build
  if (k == nullptr) return kernel_of(kernel).status();
  auto stream = target_stream(target, "launch");
  if (!stream.ok()) return stream.status();
  // No lock: the launch touches only the application's stream and the kernel's own atomics.
  return launch_locked(*k, dims, args, *stream);
}

Result<bool> GpuDevice::capturing(const LaunchTarget& target) {
  auto stream = target_stream(target, "capturing");
  if (!stream.ok()) return stream.status();
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  bool on = false;
  if (int rc = api_->stream_is_capturing(&on, *stream); rc != 0)
    return fail(Call::stream_is_capturing, rc, StatusCode::invalid_argument, target.to_string());
  return on;
}

Status GpuDevice::order(Handle waiter, Handle signaller, std::string_view what) {
  if (waiter == signaller) return {};
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  Handle event = nullptr;
  if (int rc = api_->event_create_ordering(&event); rc != 0)
    return fail(Call::event_create, rc, StatusCode::internal, what);
  Status st;
  if (int rc = api_->event_record(event, signaller); rc != 0)
    st = fail(Call::event_record, rc, StatusCode::invalid_argument, what);
  else if (int rc2 = api_->stream_wait_event(waiter, event); rc2 != 0)
    st = fail(Call::stream_wait_event, rc2, StatusCode::invalid_argument, what);
  (void)api_->event_destroy(event);  // released by the driver once the wait is satisfied
  return st;
}

Status GpuDevice::queue_waits_for(const LaunchTarget& target) {
  auto stream = target_stream(target, "queue_waits_for");
  if (!stream.ok()) return stream.status();
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return order(stream_, *stream, "the device's queue waits for " + target.to_string());
}

Status GpuDevice::target_waits_for_queue(const LaunchTarget& target) {
  auto stream = target_stream(target, "target_waits_for_queue");
  if (!stream.ok()) return stream.status();
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return order(*stream, stream_, target.to_string() + " waits for the device's queue");
}

Result<Buffer> GpuDevice::wrap(DevPtr ptr, std::uint64_t bytes) {
  if (ptr == 0 || bytes == 0) {
    return Status(StatusCode::invalid_argument,
                  "wrap_buffer: a null pointer or zero bytes (" + std::to_string(bytes) + ")");
  }
  TUNE_RETURN_IF_ERROR(check_lost());
  const CurrentScope current(*api_);
  TUNE_RETURN_IF_ERROR(entered(current));
  DevPtr base = 0;
  std::size_t size = 0;
  if (int rc = api_->mem_get_address_range(&base, &size, ptr); rc != 0) {
    return fail(
        Call::mem_get_address_range, rc, StatusCode::invalid_argument,
        "wrap_buffer: the pointer is not device memory of this " + info_.backend + " context");
  }
  if (ptr + bytes > base + size) {
    return Status(StatusCode::invalid_argument, "wrap_buffer: " + std::to_string(bytes) +
                                                    " bytes from the pointer overrun its "
                                                    "allocation (" +
                                                    std::to_string(base + size - ptr) +
                                                    " bytes left in it)");
  }
  return Buffer(new GpuBuffer(this, ptr, bytes, /*owned=*/false));
}

Result<int> select_device(const std::vector<DeviceListing>& devices, std::string_view selector,
                          std::string_view backend) {
  if (selector.empty()) return 0;
  int index = 0;
  const char* end = selector.data() + selector.size();
  if (std::from_chars(selector.data(), end, index).ptr == end) {
    if (index < 0 || index >= static_cast<int>(devices.size())) {
      return Status(StatusCode::not_found, std::string(backend) + " device index " +
                                               std::string(selector) + " out of range (" +
                                               std::to_string(devices.size()) + " devices)");
    }
    return index;
  }
  for (const auto& d : devices)
    if (d.name.find(selector) != std::string::npos) return d.index;
  return Status(StatusCode::not_found, "no " + std::string(backend) + " device name contains '" +
                                           std::string(selector) + "'");
}

DeviceListing listing_of(const DeviceInfo& info, int index, std::string_view units) {
  return {info.backend, index, info.name,
          info.arch + ", " + std::to_string(info.compute_units) + " " + std::string(units) + ", " +
              std::to_string(info.global_memory_bytes >> 20) + " MiB, " + info.driver_version +
              ", " + info.compiler_version};
}

Handle native_function(const CompiledKernel& kernel, std::string_view backend) {
  if (typeid(kernel) != typeid(GpuKernel)) return nullptr;
  const auto& k = static_cast<const GpuKernel&>(kernel);
  return k.owner()->info().backend == backend ? k.function() : nullptr;
}

Handle native_stream(const Device& device, std::string_view backend) {
  const auto* d = dynamic_cast<const GpuDevice*>(&device);
  return d != nullptr && d->info().backend == backend ? d->stream() : nullptr;
}

Result<Buffer> wrap_buffer(Device& device, std::string_view backend, DevPtr ptr,
                           std::uint64_t bytes) {
  auto* d = dynamic_cast<GpuDevice*>(&device);
  if (d == nullptr || d->info().backend != backend) {
    return Status(StatusCode::invalid_argument,
                  std::string(backend) + "::wrap_buffer: " + device.info().name + " is not a " +
                      std::string(backend) + " device");
  }
  return d->wrap(ptr, bytes);
}

}  // namespace tune::gpu
