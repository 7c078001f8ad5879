#include "flush_check.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>

#include "input_rotation.hpp"
#include "race.hpp"
#include "stats.hpp"
#include "tune/backend/last_level_cache.hpp"

namespace tune {
namespace {

constexpr std::uint32_t kBlock = 256;
constexpr std::uint32_t kFlushCheckMaxGroups = 4096;  // each block strides over the rest

// Sums the buffer and stores the sum only when it equals a value the zero-filled buffer never
// sums to, so the compiler must keep every load and the kernel writes nothing.
constexpr const char* kReadCuda = R"cuda(
extern "C" __global__ void tune_read(const unsigned* in, unsigned* out, unsigned n) {
  unsigned acc = 0u;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc += in[i];
  if (acc == 0x9e3779b9u) out[0] = acc;
}
)cuda";

constexpr const char* kReadGlsl = R"glsl(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer In { uint data[]; };
layout(std430, binding = 1) buffer Out { uint result[]; };
layout(push_constant) uniform Params { uint n; };
void main() {
  uint acc = 0u;
  const uint stride = gl_NumWorkGroups.x * TUNE_BLOCK_X;
  for (uint i = gl_WorkGroupID.x * TUNE_BLOCK_X + gl_LocalInvocationID.x; i < n; i += stride)
    acc += data[i];
  if (acc == 0x9e3779b9u) result[0] = acc;
}
)glsl";

KernelSource read_kernel(Language language) {
  KernelSource s;
  s.language = language;
  if (language == Language::glsl) {
    s.entry = "main";
    s.text = kReadGlsl;
  } else {
    s.entry = "tune_read";
    s.text = kReadCuda;  // the simulated device compiles any text
  }
  return s;
}

Result<double> median_of(Result<std::vector<double>> samples) {
  if (!samples.ok()) return samples.status();
  if (samples->empty()) return Status(StatusCode::internal, "device returned no timing samples");
  return summarize(*samples).median;
}

}  // namespace

std::string FlushCheck::to_string() const {
  char line[160];
  std::string out;
  out += "last-level cache: " + byte_size_text(llc_bytes) + " (" +
         std::string(tune::to_string(llc_source)) + "), flush writes " +
         byte_size_text(flush_bytes) + ", read buffer " + byte_size_text(buffer_bytes) + "\n";
  std::snprintf(line, sizeof line, "warm read   : %10.1f us (median of %d)\n", warm_ns / 1e3, reps);
  out += line;
  std::snprintf(line, sizeof line, "after flush : %10.1f us  cold/warm %.2fx  flush %s\n",
                cold_ns / 1e3, cold_ratio(), flush_works() ? "works" : "shows no effect");
  out += line;
  if (rotate_sets >= 2) {
    std::snprintf(line, sizeof line, "rotating    : %10.1f us  rotate/warm %.2fx  (%zu sets)  %s\n",
                  rotate_ns / 1e3, rotate_ratio(), rotate_sets,
                  rotate_works() ? "cold" : "shows no effect");
    out += line;
  } else {
    out += "rotating    : not measured: " + rotate_fallback + "\n";
  }
  std::snprintf(line, sizeof line, "(works: at least %.2fx the warm read)\n", works_ratio);
  out += line;
  return out;
}

Result<FlushCheck> measure_flush_effect(Device& dev, const FlushCheckOptions& opts) {
  const DeviceInfo& info = dev.info();
  FlushCheck r;
  r.llc_bytes = info.llc_bytes;
  r.llc_source = info.llc_source;
  r.flush_bytes = flush_bytes_for(info);
  r.reps = opts.reps;
  r.works_ratio = opts.works_ratio;
  r.buffer_bytes =
      (opts.buffer_bytes != 0 ? opts.buffer_bytes : info.llc_bytes / 2) & ~std::uint64_t{3};
  const std::uint64_t words = r.buffer_bytes / 4;
  if (opts.reps < 1)
    return Status(StatusCode::invalid_argument,
                  "FlushCheckOptions::reps must be >= 1, not " + std::to_string(opts.reps));
  if (words == 0 || words > 0xffffffffu)
    return Status(
        StatusCode::invalid_argument,
        "the flush check's buffer of " + std::to_string(r.buffer_bytes) +
            " bytes must hold 1 to 2^32-1 32-bit words (FlushCheckOptions::buffer_bytes)");

  auto in = dev.alloc(r.buffer_bytes);
  if (!in.ok()) return Status(in.status()).with_context("the flush check's read buffer");
  auto out = dev.alloc(4);
  if (!out.ok()) return Status(out.status()).with_context("the flush check's result word");
  TUNE_RETURN_IF_ERROR(dev.fill(**in, 0, r.buffer_bytes));
  TUNE_RETURN_IF_ERROR(dev.fill(**out, 0, 4));
  Config c;
  c.launch().block = Dim3{kBlock, 1, 1};
  auto kernel = dev.compile(read_kernel(dev.language()), c);
  if (!kernel.ok())
    return Status(kernel.status()).with_context("compiling the flush check's read kernel");
  const auto n = static_cast<std::uint32_t>(words);
  const std::array<ArgValue, 3> args = {ArgValue::buf(**in, ElemType::u32, words),
                                        ArgValue::buf(**out, ElemType::u32, 1), ArgValue(n)};
  LaunchDims dims;
  dims.block = Dim3{kBlock, 1, 1};
  dims.grid = Dim3{std::min(kFlushCheckMaxGroups, (n + kBlock - 1) / kBlock), 1, 1};
  // Module load and first-touch costs land here, not in a sample.
  TUNE_RETURN_IF_ERROR(dev.launch(**kernel, dims, args));
  TUNE_RETURN_IF_ERROR(dev.synchronize());

  TimingPolicy bench;
  bench.cache = TimingCache::none;  // warm: each repetition reads what the previous one cached
  TUNE_ASSIGN_OR_RETURN(r.warm_ns,
                        median_of(time_reps(dev, **kernel, dims, args, bench, opts.reps)));
  bench.cache = TimingCache::flush;
  TUNE_ASSIGN_OR_RETURN(r.cold_ns,
                        median_of(time_reps(dev, **kernel, dims, args, bench, opts.reps)));

  auto rotation = InputRotation::make(dev, args, {}, 0);
  if (!rotation.ok())
    return Status(rotation.status()).with_context("the flush check's rotating copies");
  r.rotate_sets = rotation->sets();
  r.rotate_fallback = rotation->fallback();
  if (rotation->active()) {
    bench.cache = TimingCache::rotate;
    TUNE_ASSIGN_OR_RETURN(r.rotate_ns, median_of(time_reps(dev, **kernel, dims, args, bench,
                                                           opts.reps, {}, &*rotation)));
  }
  return r;
}

}  // namespace tune
