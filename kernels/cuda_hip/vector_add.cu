// c = a + b over n floats. Tunable: threads per block (block.x), elements per thread (EPT),
// float4 loads (VEC, needs EPT % 4 == 0). Ragged n: full float4 groups take the vector path,
// the last partial group is done element by element.
#include "prelude.h"

#ifndef TUNE_BLOCK_X
#define TUNE_BLOCK_X 256
#endif
#ifndef EPT
#define EPT 4
#endif
#ifndef VEC
#define VEC 0
#endif

TUNE_KERNEL void __launch_bounds__(TUNE_BLOCK_X)
    vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int n) {
  const long long base = (long long)blockIdx.x * (TUNE_BLOCK_X * EPT);
#if VEC
  static_assert(EPT % 4 == 0, "VEC needs EPT to be a multiple of 4");
#pragma unroll
  for (int j = 0; j < EPT / 4; ++j) {
    const long long i = base + ((long long)j * TUNE_BLOCK_X + threadIdx.x) * 4;
    if (i + 3 < n) {
      const float4 x = *(const float4*)(a + i);
      const float4 y = *(const float4*)(b + i);
      *(float4*)(c + i) = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    } else {
      for (long long e = i; e < n && e < i + 4; ++e) c[e] = a[e] + b[e];
    }
  }
#else
#pragma unroll
  for (int j = 0; j < EPT; ++j) {
    const long long i = base + (long long)j * TUNE_BLOCK_X + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
  }
#endif
}
