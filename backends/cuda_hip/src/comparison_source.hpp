// The CUDA/HIP comparison kernel behind GpuDevice::compare (one source, compiled by NVRTC or
// hiprtc; tune/backend/comparison_kernel.hpp states its contract): each block strides over
// the elements, reduces its max errors, mismatch count and first bad index in shared memory
// and adds them to the result with one atomic each, so only 16 bytes come back. No headers:
// halves are decoded by hand, so hiprtc and NVRTC need nothing from their toolkits.
#pragma once

namespace tune::gpu {

inline constexpr const char* kComparisonSource = R"cuda(
__device__ float tune_half_to_float(unsigned h) {
  const unsigned s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0u) return (s ? -1.0f : 1.0f) * (float)m * 5.9604644775390625e-8f;
  if (e == 31u) return __uint_as_float(s | 0x7f800000u | (m << 13));
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}

#if ELEM_KIND == 0
#define BITS(buf, i) buf[i]
#define VALUE(bits) __uint_as_float(bits)
#elif ELEM_KIND == 1
#define BITS(buf, i) ((buf[(i) >> 1] >> (16u * ((i) & 1u))) & 0xffffu)
#define VALUE(bits) tune_half_to_float(bits)
#elif ELEM_KIND == 2
#define BITS(buf, i) ((buf[(i) >> 1] >> (16u * ((i) & 1u))) & 0xffffu)
#define VALUE(bits) __uint_as_float((bits) << 16)
#elif ELEM_KIND == 3
#define BITS(buf, i) buf[i]
#define VALUE(bits) (float)(int)(bits)
#else
#define BITS(buf, i) buf[i]
#define VALUE(bits) (float)(bits)
#endif
#define IS_FLOAT (ELEM_KIND <= 2)

extern "C" __global__ void tune_compare(const unsigned* actual, const unsigned* expected,
                                        unsigned* result, unsigned n, float abs_tol,
                                        float rel_tol) {
  __shared__ float s_abs[TUNE_BLOCK_X];
  __shared__ float s_rel[TUNE_BLOCK_X];
  __shared__ unsigned s_bad[TUNE_BLOCK_X];
  __shared__ unsigned s_first[TUNE_BLOCK_X];
  const unsigned lid = threadIdx.x;
  const unsigned stride = gridDim.x * TUNE_BLOCK_X;
  const float inf = __uint_as_float(0x7f800000u);
  float max_abs = 0.0f, max_rel = 0.0f;
  unsigned bad = 0u, first = 0xffffffffu;
  for (unsigned i = blockIdx.x * TUNE_BLOCK_X + lid; i < n; i += stride) {
    const unsigned ab = BITS(actual, i), eb = BITS(expected, i);
    const float e = VALUE(eb);
#if IS_FLOAT
    const float a = VALUE(ab);
    if (a == e) continue;
    float d = fabsf(a - e);
#else
    // Integers: the difference taken exactly, then as a float (nonzero whenever bits differ).
    if (ab == eb) continue;
#if ELEM_KIND == 3
    const unsigned diff = (int)ab > (int)eb ? ab - eb : eb - ab;
#else
    const unsigned diff = ab > eb ? ab - eb : eb - ab;
#endif
    float d = (float)diff;
#endif
    if (isnan(d)) d = inf;
    const float mag = fabsf(e);
    const float rel = (mag > 0.0f && !isinf(mag)) ? d / mag : inf;
    max_abs = fmaxf(max_abs, d);
    max_rel = fmaxf(max_rel, rel);
    if (!isinf(d) && d <= abs_tol + rel_tol * mag) continue;
    if (bad == 0u) first = i;
    ++bad;
  }
  s_abs[lid] = max_abs;
  s_rel[lid] = max_rel;
  s_bad[lid] = bad;
  s_first[lid] = first;
  __syncthreads();
  for (unsigned half = TUNE_BLOCK_X / 2u; half > 0u; half >>= 1) {
    if (lid < half) {
      s_abs[lid] = fmaxf(s_abs[lid], s_abs[lid + half]);
      s_rel[lid] = fmaxf(s_rel[lid], s_rel[lid + half]);
      s_bad[lid] += s_bad[lid + half];
      s_first[lid] = min(s_first[lid], s_first[lid + half]);
    }
    __syncthreads();
  }
  if (lid == 0u && (s_abs[0] > 0.0f || s_rel[0] > 0.0f || s_bad[0] > 0u)) {
    atomicMax(result + 0, __float_as_uint(s_abs[0]));
    atomicMax(result + 1, __float_as_uint(s_rel[0]));
    atomicAdd(result + 2, s_bad[0]);
    atomicMin(result + 3, s_first[0]);
  }
}
)cuda";

}  // namespace tune::gpu
