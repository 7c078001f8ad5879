// Device: the one interface between the backend-agnostic core and a backend (CUDA, HIP,
// Vulkan). Small on purpose: buffers, compile one variant per configuration, launch, time.
//
// Ownership: a Device owns its context/queues; DeviceBuffer and CompiledKernel objects it
// returns are owned by the caller (unique_ptr) and must be destroyed before the Device.
// Thread safety: a Device may be called from several threads; implementations serialise
// queue access internally. compile() must be safe to call concurrently with itself and with
// launch()/time() (backends may compile variants in parallel while others are timed).
// Blocking: launch(), upload(), fill() and copy() are ordered on the device's one queue and
// may return before completion; download(), synchronize() and time() block until done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tune/args.hpp"
#include "tune/comparison.hpp"
#include "tune/config.hpp"
#include "tune/device_info.hpp"
#include "tune/status.hpp"

namespace tune {

// Backend-owned device memory. Opaque to the core.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual std::uint64_t size_bytes() const noexcept = 0;
};
using Buffer = std::unique_ptr<DeviceBuffer>;

enum class Language : std::uint8_t { glsl, cuda_hip, simulated };
std::string_view to_string(Language l) noexcept;

// Source text of one kernel in one language. `entry` is the function name (CUDA/HIP) or
// "main" (GLSL). The core hashes `text` + `entry` to key compiled-binary and tuning caches.
//
// CUDA/HIP: an entry with template arguments, "scale<EPT, NEG>", names a __global__ function
// template; each variant instantiates it with the configuration's values substituted for
// arguments that name a config parameter (others, such as `float`, stay as written), here
// "scale<4, true>" for EPT=4,NEG=true (tune::name_expression), through the compiler's name
// expressions (nvrtcAddNameExpression / hiprtcAddNameExpression), and launches the mangled
// name the compiler reports. Only whole top-level arguments are substituted (not names inside a
// nested argument such as g<EPT>), and only parameters, not launch options (num_stages, ...). A
// parameter substituted this way is not a -D macro anywhere in the source (it would rewrite the
// template's own parameter names); every other config parameter is.
//
// Kernels as programs write them (README, "Kernels with headers, options and module globals"):
// `#include` lines find the in-memory `headers` first (by the name as written), then, for a
// "quoted" name, the including file's directory, then each of `include_dirs` in order; CUDA
// also reaches the toolkit's headers (CUB, cuda/std, cuda_fp16.h: TUNE_CUDA_INCLUDE_DIR).
// `options` are extra compiler options for every variant, after libtune's own. The text of
// every file an #include may open is part of hash() and of the binary-cache key
// (tune/backend/includes.hpp says exactly which files), so an edited header is a miss.
struct KernelHeader {
  std::string name;  // as written in the #include: "tile.cuh", "common/math.glsl"
  std::string text;
  friend bool operator==(const KernelHeader&, const KernelHeader&) = default;
};

// A CUDA/HIP module global (a __constant__ or __device__ variable) and the bytes a variant's
// module gets before its first launch: cuModuleGetGlobal / hipModuleGetGlobal, then a copy.
// `name` is the symbol: a variable at global scope is its own name (one in a namespace has a
// mangled name). `bytes` must be exactly the variable's size.
struct ModuleGlobal {
  std::string name;
  std::vector<std::byte> bytes;

  template <class T>
  requires std::is_trivially_copyable_v<T>
  static ModuleGlobal of(std::string name, const T& value) {
    return of(std::move(name), std::span<const T>(&value, 1));
  }
  template <class T>
  requires std::is_trivially_copyable_v<T>
  static ModuleGlobal of(std::string name, std::span<const T> values) {
    const auto raw = std::as_bytes(values);
    return {std::move(name), std::vector<std::byte>(raw.begin(), raw.end())};
  }
};
// The module globals of one variant, computed from its configuration. Runs in
// Device::compile after the module loads; an exception is that configuration's failure
// (callback_failed). Not part of any hash: a cached binary is loaded and then set.
using ModuleGlobalsFn = std::function<std::vector<ModuleGlobal>(const Config&)>;

// CUDA only (sm_90+): a TMA tensor map (CUtensorMap) over a row-major matrix passed in a buffer
// argument, which the kernel receives by value after the signature's arguments, in the order
// listed, declared `const __grid_constant__ T name` with T a 64-byte-aligned 128-byte struct.
// The configuration fixes the box and swizzle (KernelSource::tensor_maps runs once per variant
// in Device::compile); the call's arguments fix the address and extent: the backend encodes
// the map at launch (cuTensorMapEncodeTiled) and keeps the last one per map of each variant, so
// a call on the same buffer and sizes reuses it and one on other buffers re-encodes (about a
// microsecond on the host, no device work). Elements outside the matrix read as zeros.
// Why by value and not a __constant__ module global: the map holds the buffer's address, which
// changes from call to call while a module (and its globals) is shared by every call, and
// possibly by launches still in flight; a __grid_constant__ parameter travels with its launch.
// TMA needs a 16-byte aligned address and row stride (cols x element size). A call that
// breaks that rule is invalid_argument naming the map, unless `zeros_when_unaligned`: then
// the kernel receives 128 zero bytes for that map (nothing is encoded) and must not use it;
// it decides so from the same arguments and loads that matrix another way (matmul_wgmma.cu's
// copy path). The rule is checked on every launch anyway, so aligned calls pay nothing more.
struct TensorMapSpec {
  enum class Swizzle : std::uint8_t { none, bytes32, bytes64, bytes128 };
  int buffer_arg = 0;          // index of the buffer argument (the matrix's first element)
  int rows_arg = 0;            // index of the integer scalar giving the row count
  int cols_arg = 0;            // ... and the column count (contiguous; row stride = cols elements)
  std::uint32_t box_rows = 0;  // the box one TMA copy moves: at most 256 each; box_cols
  std::uint32_t box_cols = 0;  // times the element size within the swizzle span, if any
  Swizzle swizzle = Swizzle::none;
  bool zeros_when_unaligned = false;  // see above: a zero map instead of invalid_argument
  friend bool operator==(const TensorMapSpec&, const TensorMapSpec&) = default;
};
using TensorMapsFn = std::function<std::vector<TensorMapSpec>(const Config&)>;

struct KernelSource {
  Language language = Language::glsl;
  std::string entry = "main";
  std::string text;
  std::vector<std::string> include_dirs = {};  // searched in order
  std::vector<KernelHeader> headers = {};      // found before any directory
  // Extra options: NVRTC / hiprtc options ("-use_fast_math", "--std=c++20", "-lineinfo"); for
  // GLSL the glslc spellings libtune maps onto shaderc (README). An option a backend cannot
  // honour fails the compile with invalid_argument naming it and the backend.
  std::vector<std::string> options = {};
  // CUDA/HIP only: Vulkan has no module globals (use specialization or push constants) and
  // refuses a source that sets this, with invalid_argument.
  ModuleGlobalsFn module_globals = {};
  // CUDA only: compile for the architecture-specific target of the device (sm_90 -> sm_90a),
  // whose features (wgmma, setmaxnreg) exist on exactly that architecture. Part of hash().
  // hiprtc and Vulkan refuse a source that sets it (invalid_argument).
  bool arch_specific = false;
  // CUDA only: the TMA tensor maps the kernel receives after its arguments (TensorMapSpec).
  // Runs in Device::compile; an exception is that configuration's failure (callback_failed).
  // HIP and Vulkan refuse a source that sets it (invalid_argument).
  TensorMapsFn tensor_maps = {};
  // Vulkan only: a precompiled SPIR-V module (compute, entry point "main"), used as it is
  // instead of compiling `text` (which then only documents it: the GLSL it was built from, or
  // empty). Each of the variant's definitions (tune/definitions.hpp: every parameter, then the
  // TUNE_ launch options) sets the module's specialization constant of the same name (its
  // OpName; keep names in the module), parsed as that constant's type: booleans 1 / 0,
  // integers, floats. A definition with no such constant is ignored, as an unused macro is; a
  // value that does not parse is invalid_argument naming the constant. The workgroup size goes
  // to the constants the module takes it from, as for GLSL. The module: entry point "main",
  // SPIR-V up to what the device's Vulkan version consumes (1.1: 1.3, 1.2: 1.5, 1.3: 1.6), and
  // LocalSizeId (SPIR-V 1.6 compilers' workgroup size) only where maintenance4 is enabled:
  // libtune's own devices enable it wherever Vulkan 1.3 has it; an application's device says so
  // in vulkan::EnabledFeatures. For modules only a newer compiler than libtune's can build. CUDA
  // and HIP refuse a source that sets it (invalid_argument). Part of hash().
  std::vector<std::uint32_t> spirv = {};
  // The kernel's arguments in call order (KernelDef::signature), when known: the Autotuner
  // fills it in from the definition's signature. A backend that reads a compiled module's
  // interface checks every module against it before use, fresh or from a binary cache
  // (Vulkan: one storage-buffer binding per buffer argument, the push-constant block of the
  // scalar arguments); a cached module that does not match exactly is evicted and compiled
  // afresh. Empty: unchecked until launch. Not part of hash().
  KernelSignature signature = {};
  // Of everything above but module_globals, tensor_maps and signature, and of the text of every
  // file the source's #include lines may open (read now: include_closure in
  // tune/backend/includes.hpp). The same as before these fields existed for a source that has none
  // and includes nothing.
  std::uint64_t hash() const;
};

// What the compiler and driver report about one compiled variant; zero when unknown.
struct KernelResources {
  std::uint32_t registers = 0;     // per thread
  std::uint32_t spill_bytes = 0;   // local-memory spill stores
  std::uint32_t local_bytes = 0;   // per-thread local memory
  std::uint32_t shared_bytes = 0;  // static shared memory
  std::uint32_t max_threads = 0;   // max threads per block for this variant
  std::string to_string() const;   // "regs=64 spill=0 smem=16384"; empty when nothing known
};

// One compiled variant. Owned by the caller of Device::compile.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  const KernelResources& resources() const noexcept { return resources_; }
  const std::string& compile_log() const noexcept { return log_; }
  // True when the binary (CUBIN, HSACO, SPIR-V) was read from a binary cache, in memory or on
  // disk, instead of being compiled for this call. compile_log() then starts with a note for
  // people ("(binary from the cubin cache)"); programs read this flag, never that text.
  bool from_binary_cache() const noexcept { return from_binary_cache_; }

 protected:
  KernelResources resources_;
  std::string log_;
  bool from_binary_cache_ = false;
};

struct LaunchDims {
  Dim3 grid;                       // blocks / workgroups per dimension
  Dim3 block;                      // threads per block / workgroup size
  std::uint32_t shared_bytes = 0;  // dynamic shared memory
  // Thread-block clusters (CUDA, sm_90 and later): blocks per cluster in each dimension; each
  // grid dimension must be a multiple of it. The default, one block, launches as before (the
  // plain launch call). HIP and Vulkan refuse any other cluster (invalid_argument, HIP's
  // naming the kernel); so does CUDA for a grid that is not a multiple of it, and its driver
  // refuses clusters before sm_90 (launch_failed).
  Dim3 cluster;

  LaunchDims() = default;
  // Positional like the aggregate this type once was ({grid, block, shared}).
  LaunchDims(Dim3 g, Dim3 b, std::uint32_t shared = 0, Dim3 c = {})
      : grid(g), block(b), shared_bytes(shared), cluster(c) {}
};

// A buffer put back from a snapshot: `dst` receives dst->size_bytes() bytes of `src`.
struct BufferRestore {
  DeviceBuffer* dst = nullptr;
  const DeviceBuffer* src = nullptr;  // at least as large as dst
};

// Device work that puts buffers back before a launch (KernelDef::reset_to_zero and
// restore_value): the zero fills, then the restores, in the order listed. Every buffer belongs
// to the device that applies them.
struct LaunchResets {
  // Zero-filled over zero_bytes(): their size rounded down to a multiple of 4 (fill()'s unit).
  std::vector<DeviceBuffer*> zero;
  std::vector<BufferRestore> restore;

  bool empty() const noexcept { return zero.empty() && restore.empty(); }
  static std::uint64_t zero_bytes(const DeviceBuffer& b) noexcept {
    return b.size_bytes() & ~std::uint64_t{3};
  }
  // invalid_argument for a null buffer or a restore source smaller than its destination.
  Status check() const;
};

// One timing request: `reps` launches, each timed alone with device timestamps.
struct TimingPlan {
  int reps = 1;
  // Overwrite an L2-sized scratch buffer before each timed launch (outside the timed span).
  bool flush_l2 = true;
  // Before each timed launch (and its L2 flush), outside the timed span: the backend records
  // these fills and copies on its queue beside the launches, so repetitions still batch.
  LaunchResets resets;
  // A launch that has not finished after this long is a timeout (the config is dropped).
  double timeout_ms = 10000.0;
};

// Where a launch goes. The default is the device's own queue (what every Device call uses).
// The other kinds name work of the application that libtune shares:
//   stream:          a CUstream / hipStream_t of the application, on the device's context.
//                    nullptr is the legacy default stream (what the runtime API's stream 0
//                    means); the per-thread default stream is its own handle
//                    (CU_STREAM_PER_THREAD / hipStreamPerThread).
//   command_buffer:  a VkCommandBuffer of the application, in the recording state, allocated
//                    from a pool of the device's queue family: the dispatch is recorded into
//                    it and runs when the application submits it.
// A LaunchTarget borrows the handle; the application keeps it valid for the call (and, for a
// command buffer, keeps libtune's kernels alive until that submission completes).
struct LaunchTarget {
  enum class Kind : std::uint8_t { device_queue, stream, command_buffer };
  Kind kind = Kind::device_queue;
  void* handle = nullptr;

  static constexpr LaunchTarget queue() noexcept { return {}; }
  static constexpr LaunchTarget stream(void* s) noexcept { return {Kind::stream, s}; }
  static constexpr LaunchTarget command_buffer(void* cb) noexcept {
    return {Kind::command_buffer, cb};
  }
  constexpr bool is_queue() const noexcept { return kind == Kind::device_queue; }
  // "device queue", "stream 0x7f..", "command buffer 0x55.." (error messages).
  std::string to_string() const;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual const DeviceInfo& info() const noexcept = 0;
  // The kernel language this device compiles.
  virtual Language language() const noexcept = 0;

  virtual Result<Buffer> alloc(std::uint64_t bytes) = 0;
  virtual Status upload(DeviceBuffer& dst, const void* src, std::uint64_t bytes,
                        std::uint64_t offset = 0) = 0;
  virtual Status download(const DeviceBuffer& src, void* dst, std::uint64_t bytes,
                          std::uint64_t offset = 0) = 0;
  // Fills `bytes` from `offset` with a repeated 32-bit pattern (bytes must be a multiple of 4).
  virtual Status fill(DeviceBuffer& dst, std::uint32_t pattern, std::uint64_t bytes,
                      std::uint64_t offset = 0) = 0;
  virtual Status copy(DeviceBuffer& dst, const DeviceBuffer& src, std::uint64_t bytes) = 0;

  // Compiles `source` with exactly tune::definitions(config, source) as macro definitions
  // (definitions.hpp: parameters, then the launch options that are set) and the launch options
  // applied. A compile failure is a Status with
  // code compile_error whose message holds the compiler log; a variant that exceeds a device
  // limit is out_of_resources. Never crashes on a bad configuration.
  virtual Result<std::unique_ptr<CompiledKernel>> compile(const KernelSource& source,
                                                          const Config& config) = 0;
  // Drops the binary `kernel` was built from from this device's binary caches, in memory and
  // on disk, so that the next compile of its source and configuration runs the compiler: for a
  // cached binary that computed a wrong output (a damaged or forged entry). `why` goes to the
  // log. Returns whether anything was dropped; the default (no binary cache) drops nothing.
  // Thread safety: as compile().
  virtual bool evict_binary(const CompiledKernel& kernel, std::string_view why);

  virtual Status launch(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args) = 0;

  // Runs plan.reps launches and returns each one's device-timestamp duration in nanoseconds.
  virtual Result<std::vector<double>> time(const CompiledKernel& kernel, const LaunchDims& dims,
                                           ArgList args, const TimingPlan& plan) = 0;

  virtual Status synchronize() = 0;

  // Compares spec.count elements of `actual` with `expected` (both this device's buffers) by
  // compare_host's rule, after the work queued before it. Backends run a comparison kernel, so
  // that only the Comparison's few bytes come back; the default downloads both buffers and
  // compares on the host. Blocks until the result is known; thread safety as launch().
  virtual Result<Comparison> compare(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                     const CompareSpec& spec);

  // --- launch targets (interop with the application's own streams and command buffers) ----
  //
  // Every call below that takes a target treats LaunchTarget::queue() as the device's own
  // queue. The defaults: launch_on() forwards the queue target to launch() and refuses any
  // other kind with `unavailable` naming the backend; capturing() is false; the two
  // ordering calls do nothing for the queue target and refuse other kinds.

  // launch() on `target`: enqueued on the stream (asynchronous, no synchronisation, no
  // allocation once the kernel has run with these buffers before) or recorded into the
  // command buffer. Thread safety: as launch(); a stream or command buffer is the caller's to
  // serialise (Vulkan forbids concurrent recording into one command buffer).
  virtual Status launch_on(const CompiledKernel& kernel, const LaunchDims& dims, ArgList args,
                           const LaunchTarget& target);
  // Whether work queued on `target` now would be captured into a graph (cuStreamIsCapturing,
  // hipStreamIsCapturing) instead of running. Never blocks.
  virtual Result<bool> capturing(const LaunchTarget& target);
  // The device's own queue waits (on the device, not the host) for the work already queued
  // on `target`: an event recorded on the stream and waited for by the queue. Never blocks
  // the host. Vulkan: the command-buffer target has nothing to wait for (its commands run
  // only when the application submits it, after this call returns).
  virtual Status queue_waits_for(const LaunchTarget& target);
  // Work queued on `target` from now on waits (on the device) for everything queued so far on
  // the device's own queue. Never blocks the host. Vulkan: nothing to do for a command
  // buffer: libtune's own submissions before it are ordered by the barrier a Vulkan queue
  // gives work submitted later (see tune/vulkan_interop.hpp).
  virtual Status target_waits_for_queue(const LaunchTarget& target);
};

// `resets` done now through dev.fill() and dev.copy() (for launches outside Device::time).
Status apply_resets(Device& dev, const LaunchResets& resets);

}  // namespace tune
