// out[0] += sum(x[0..n)). Each block sums block.x * EPT elements (coalesced strided loads),
// reduces them with warp shuffles and one shared-memory step, and adds its partial sum to
// out[0] with one atomicAdd. out must be zeroed before the launch (reset_to_zero = {"out"}).
#include "prelude.h"

#ifndef TUNE_BLOCK_X
#define TUNE_BLOCK_X 256
#endif
#ifndef EPT
#define EPT 4
#endif

#define RS_WARPS (TUNE_BLOCK_X / TUNE_WARP_SIZE)

TUNE_KERNEL void __launch_bounds__(TUNE_BLOCK_X)
    reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
  static_assert(TUNE_BLOCK_X % TUNE_WARP_SIZE == 0, "block.x must be a multiple of the warp");
  static_assert(RS_WARPS <= TUNE_WARP_SIZE, "one warp reduces the per-warp sums");
  __shared__ float warp_sums[RS_WARPS];
  const long long base = (long long)blockIdx.x * (TUNE_BLOCK_X * EPT);
  float v = 0.0f;
#pragma unroll
  for (int j = 0; j < EPT; ++j) {
    const long long i = base + (long long)j * TUNE_BLOCK_X + threadIdx.x;
    if (i < n) v += x[i];
  }
  v = tune_warp_sum(v);
  const int lane = threadIdx.x % TUNE_WARP_SIZE;
  const int warp = threadIdx.x / TUNE_WARP_SIZE;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < RS_WARPS ? warp_sums[lane] : 0.0f;
    v = tune_warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}
