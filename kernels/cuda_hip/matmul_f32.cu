// C = A B in fp32 on the SIMT cores; A is MxK, B is KxN, C is MxN, all row-major.
//
// Tiling: a block computes a BM x BN tile of C, walking K in steps of BK. Its warps tile the
// block; a warp covers (WARP/WTN)*TM rows by WTN*TN columns, and each thread a TM x TN
// register tile. Tiles of A (stored transposed, so a thread's TM values are contiguous) and B
// stream through NUM_STAGES shared-memory buffers with asynchronous copies (cp.async on
// sm_80+), so loads of later K steps overlap the math of the current one. Out-of-range rows,
// columns and K are zero-filled on load and masked on store: any M, N, K >= 1 works.
// Shared memory is dynamic: NUM_STAGES * BK * ((BM + 4) + (BN + 4)) floats.
#include "prelude.h"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WTN
#define WTN 8
#endif
#ifndef TUNE_BLOCK_X
#define TUNE_BLOCK_X 256
#endif
#ifndef TUNE_NUM_STAGES
#define TUNE_NUM_STAGES 2
#endif

#define MM_THREADS TUNE_BLOCK_X
#define MM_STAGES TUNE_NUM_STAGES
#define MM_WTM (TUNE_WARP_SIZE / WTN)  // threads along M in a warp
#define MM_WM (MM_WTM * TM)            // warp tile
#define MM_WN (WTN * TN)
#define MM_WARPS_N (BN / MM_WN)
#define MM_AS_LD (BM + 4)  // padded leading dimensions in shared memory
#define MM_BS_LD (BN + 4)

TUNE_KERNEL void __launch_bounds__(MM_THREADS)
    matmul_f32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
               int M, int N, int K) {
  static_assert(TUNE_WARP_SIZE % WTN == 0, "WTN must divide the warp size");
  static_assert(BM % MM_WM == 0 && BN % MM_WN == 0, "warp tiles must tile the block tile");
  static_assert((BM / MM_WM) * (BN / MM_WN) * TUNE_WARP_SIZE == MM_THREADS,
                "block.x must equal warps * warp size");
  static_assert((BM * BK) % MM_THREADS == 0, "A tile loads must divide evenly");
  static_assert((BK * BN / 4) % MM_THREADS == 0, "B tile loads must divide evenly");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read as float4");
  static_assert(MM_STAGES >= 2, "the pipeline needs at least two stages");

  TUNE_DYNAMIC_SHARED(float, smem);
  float* As = smem;                              // [STAGES][BK][BM + 4]
  float* Bs = smem + MM_STAGES * BK * MM_AS_LD;  // [STAGES][BK][BN + 4]

  const int tid = threadIdx.x;
  const int warp = tid / TUNE_WARP_SIZE;
  const int lane = tid % TUNE_WARP_SIZE;
  const int row0 = (warp / MM_WARPS_N) * MM_WM + (lane / WTN) * TM;  // in the block tile
  const int col0 = (warp % MM_WARPS_N) * MM_WN + (lane % WTN) * TN;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  const bool b_vec = (N % 4) == 0;  // rows of B are 16-byte aligned

  auto load_tile = [&](int stage, int k0) {
    float* as = As + stage * BK * MM_AS_LD;
    float* bs = Bs + stage * BK * MM_BS_LD;
#pragma unroll
    for (int i = 0; i < (BM * BK) / MM_THREADS; ++i) {
      const int idx = tid + i * MM_THREADS;
      const int r = idx / BK, c = idx % BK;  // consecutive threads: consecutive k (coalesced)
      const int gr = m0 + r, gc = k0 + c;
      const bool ok = gr < M && gc < K;
      tune_cp_async_4(as + c * MM_AS_LD + r, ok ? A + (long long)gr * K + gc : A, ok);
    }
#pragma unroll
    for (int i = 0; i < (BK * BN / 4) / MM_THREADS; ++i) {
      const int idx = tid + i * MM_THREADS;
      const int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
      const int gr = k0 + r, gc = n0 + c;
      float* dst = bs + r * MM_BS_LD + c;
      if (b_vec && gr < K && gc + 3 < N) {
        tune_cp_async_16(dst, B + (long long)gr * N + gc, true);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const bool ok = gr < K && gc + e < N;
          tune_cp_async_4(dst + e, ok ? B + (long long)gr * N + gc + e : B, ok);
        }
      }
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int ktiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < MM_STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s * BK);
    tune_cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    tune_cp_async_wait<MM_STAGES - 2>();  // tile kt has landed
    __syncthreads();                      // ... for every thread; stage kt-1 is free again
    const int next = kt + MM_STAGES - 1;
    if (next < ktiles) load_tile(next % MM_STAGES, next * BK);
    tune_cp_async_commit();

    const float* as = As + (kt % MM_STAGES) * BK * MM_AS_LD;
    const float* bs = Bs + (kt % MM_STAGES) * BK * MM_BS_LD;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float ra[TM], rb[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *(const float4*)(as + k * MM_AS_LD + row0 + i);
        ra[i] = v.x, ra[i + 1] = v.y, ra[i + 2] = v.z, ra[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *(const float4*)(bs + k * MM_BS_LD + col0 + j);
        rb[j] = v.x, rb[j + 1] = v.y, rb[j + 2] = v.z, rb[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
  }
  tune_cp_async_wait<0>();

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = m0 + row0 + i;
    if (r >= M) break;
    float* crow = C + (long long)r * N;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int c = n0 + col0 + j;
      if (b_vec && c + 3 < N) {
        *(float4*)(crow + c) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (c + e < N) crow[c + e] = acc[i][j + e];
      }
    }
  }
}
