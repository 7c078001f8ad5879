// C = A B with fp16 inputs and output and fp32 accumulation; A is MxK, B is KxN, C is MxN,
// all row-major.
//
// CUDA sm_80+: tensor cores through mma.sync.m16n8k16 (inline PTX, no headers). A block
// computes a BM x BN tile with block.x / 32 warps laid out WARPS_M x WARPS_N; each warp owns a
// (BM/WARPS_M) x (BN/WARPS_N) tile of 16x8 MMA fragments. Tiles of A and B stream through
// NUM_STAGES shared-memory buffers with cp.async (16-byte copies, zero-filled out of range);
// fragments are read with ldmatrix (B transposed by ldmatrix.trans). Shared-memory rows are
// padded by 16 bytes, which makes every ldmatrix phase conflict-free. Blocks are ordered in
// groups of GROUP_M tile rows so that neighbouring blocks share A and B tiles in L2.
// Other targets (HIP, CUDA before sm_80): the same tiles computed on the SIMT cores, one stage.
// Any M, N, K >= 1 works; K % 8 == 0 and N % 8 == 0 take the 16-byte copy path.
#include "prelude.h"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef TUNE_BLOCK_X
#define TUNE_BLOCK_X 128
#endif
#ifndef TUNE_NUM_STAGES
#define TUNE_NUM_STAGES 3
#endif

#define HM_THREADS TUNE_BLOCK_X
#define HM_STAGES TUNE_NUM_STAGES
#define HM_A_LD (BK + 8)  // padded rows, in halves
#define HM_B_LD (BN + 8)

// Block -> (tile row, tile column), grouped along M for L2 reuse (Triton's GROUP_M order).
TUNE_DEVICE void hm_tile_of_block(int M, int N, int* tm, int* tn) {
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const int pid = blockIdx.x;
  const int group = GROUP_M * tiles_n;
  const int first_m = (pid / group) * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  *tm = first_m + (pid % group) % group_rows;
  *tn = (pid % group) / group_rows;
}

#if TUNE_HAS_MMA_SYNC

#define HM_WARPS (HM_THREADS / 32)
#define HM_WARPS_N (HM_WARPS / WARPS_M)
#define HM_WM (BM / WARPS_M)
#define HM_WN (BN / HM_WARPS_N)
#define HM_MI (HM_WM / 16)
#define HM_NI (HM_WN / 8)

TUNE_DEVICE unsigned hm_smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

TUNE_KERNEL void __launch_bounds__(HM_THREADS)
    matmul_f16(const tune_f16* __restrict__ A, const tune_f16* __restrict__ B,
               tune_f16* __restrict__ C, int M, int N, int K) {
  static_assert(HM_THREADS % 32 == 0 && HM_WARPS % WARPS_M == 0, "warps must tile WARPS_M");
  static_assert(HM_WM % 16 == 0 && HM_WN % 16 == 0, "warp tiles are multiples of 16x16");
  static_assert(BK % 16 == 0, "BK is a multiple of the MMA K (16)");
  static_assert((BM * BK / 8) % HM_THREADS == 0, "A tile copies must divide evenly");
  static_assert((BK * BN / 8) % HM_THREADS == 0, "B tile copies must divide evenly");
  static_assert(HM_STAGES >= 2, "the pipeline needs at least two stages");

  TUNE_DYNAMIC_SHARED(tune_f16, smem);
  tune_f16* As = smem;                                // [STAGES][BM][BK + 8]
  tune_f16* Bs = smem + HM_STAGES * BM * HM_A_LD;     // [STAGES][BK][BN + 8]

  int tile_m, tile_n;
  hm_tile_of_block(M, N, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp / HM_WARPS_N) * HM_WM;
  const int wn0 = (warp % HM_WARPS_N) * HM_WN;
  const bool a_vec = (K % 8) == 0, b_vec = (N % 8) == 0;

  auto load_tile = [&](int stage, int k0) {
    tune_f16* as = As + stage * BM * HM_A_LD;
    tune_f16* bs = Bs + stage * BK * HM_B_LD;
#pragma unroll
    for (int i = 0; i < (BM * BK / 8) / HM_THREADS; ++i) {
      const int idx = tid + i * HM_THREADS;
      const int r = idx / (BK / 8), c = (idx % (BK / 8)) * 8;
      const int gr = m0 + r, gc = k0 + c;
      tune_f16* dst = as + r * HM_A_LD + c;
      if (gr >= M || gc >= K) {
        tune_cp_async_16(dst, A, false);
      } else if (a_vec && gc + 7 < K) {
        tune_cp_async_16(dst, A + (long long)gr * K + gc, true);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = gc + e < K ? A[(long long)gr * K + gc + e] : 0;
      }
    }
#pragma unroll
    for (int i = 0; i < (BK * BN / 8) / HM_THREADS; ++i) {
      const int idx = tid + i * HM_THREADS;
      const int r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
      const int gr = k0 + r, gc = n0 + c;
      tune_f16* dst = bs + r * HM_B_LD + c;
      if (gr >= K || gc >= N) {
        tune_cp_async_16(dst, B, false);
      } else if (b_vec && gc + 7 < N) {
        tune_cp_async_16(dst, B + (long long)gr * N + gc, true);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = gc + e < N ? B[(long long)gr * N + gc + e] : 0;
      }
    }
  };

  float acc[HM_MI][HM_NI][4];
#pragma unroll
  for (int mi = 0; mi < HM_MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < HM_NI; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;

  const int ktiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < HM_STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s * BK);
    tune_cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    tune_cp_async_wait<HM_STAGES - 2>();  // tile kt has landed (this thread's copies)
    __syncthreads();                      // everyone's copies; stage kt-1 is free again
    const int next = kt + HM_STAGES - 1;
    if (next < ktiles) load_tile(next % HM_STAGES, next * BK);
    tune_cp_async_commit();

    const tune_f16* as = As + (kt % HM_STAGES) * BM * HM_A_LD;
    const tune_f16* bs = Bs + (kt % HM_STAGES) * BK * HM_B_LD;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned af[HM_MI][4];
      unsigned bf[HM_NI][2];
#pragma unroll
      for (int mi = 0; mi < HM_MI; ++mi) {
        // Lanes 0-15 address rows 0-15 at k, lanes 16-31 the same rows at k + 8:
        // registers a0..a3 = (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
        const tune_f16* p = as + (wm0 + mi * 16 + lane % 16) * HM_A_LD + kk + (lane / 16) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(af[mi][0]), "=r"(af[mi][1]), "=r"(af[mi][2]), "=r"(af[mi][3])
                     : "r"(hm_smem_addr(p)));
      }
#pragma unroll
      for (int ni = 0; ni < HM_NI; ni += 2) {
        // Rows of B are k; .trans hands each thread B[k][n] pairs along k, the "col" operand.
        // Matrices: (k 0-7, n-tile ni), (k 8-15, ni), (k 0-7, ni+1), (k 8-15, ni+1).
        const int k = kk + lane % 8 + ((lane / 8) % 2) * 8;
        const int n = wn0 + (ni + lane / 16) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(bf[ni][0]), "=r"(bf[ni][1]), "=r"(bf[ni + 1][0]), "=r"(bf[ni + 1][1])
                     : "r"(hm_smem_addr(bs + k * HM_B_LD + n)));
      }
#pragma unroll
      for (int mi = 0; mi < HM_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < HM_NI; ++ni)
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
              "{%8,%9}, {%0,%1,%2,%3};\n"
              : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]),
                "+f"(acc[mi][ni][3])
              : "r"(af[mi][0]), "r"(af[mi][1]), "r"(af[mi][2]), "r"(af[mi][3]), "r"(bf[ni][0]),
                "r"(bf[ni][1]));
    }
  }
  tune_cp_async_wait<0>();

  // Accumulator layout: c0,c1 at (lane/4, 2*(lane%4) + {0,1}); c2,c3 eight rows below.
  const bool pair_ok = (N % 2) == 0;
#pragma unroll
  for (int mi = 0; mi < HM_MI; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = m0 + wm0 + mi * 16 + lane / 4 + half * 8;
      if (r >= M) continue;
      tune_f16* crow = C + (long long)r * N;
#pragma unroll
      for (int ni = 0; ni < HM_NI; ++ni) {
        const int c = n0 + wn0 + ni * 8 + (lane % 4) * 2;
        const tune_f16 lo = tune_f32_to_f16(acc[mi][ni][half * 2]);
        const tune_f16 hi = tune_f32_to_f16(acc[mi][ni][half * 2 + 1]);
        if (pair_ok && c + 1 < N) {
          *(unsigned*)(crow + c) = (unsigned)lo | ((unsigned)hi << 16);
        } else {
          if (c < N) crow[c] = lo;
          if (c + 1 < N) crow[c + 1] = hi;
        }
      }
    }
  }
}

#else  // SIMT fallback: HIP, or CUDA before sm_80

#define HF_TCOLS 16                       // threads across N
#define HF_TROWS (HM_THREADS / HF_TCOLS)  // threads across M
#define HF_TM (BM / HF_TROWS)
#define HF_TN (BN / HF_TCOLS)

TUNE_KERNEL void __launch_bounds__(HM_THREADS)
    matmul_f16(const tune_f16* __restrict__ A, const tune_f16* __restrict__ B,
               tune_f16* __restrict__ C, int M, int N, int K) {
  static_assert(HM_THREADS % HF_TCOLS == 0 && BM % HF_TROWS == 0 && BN % HF_TCOLS == 0,
                "the SIMT fallback tiles BM x BN over block.x threads, 16 across N");
  TUNE_DYNAMIC_SHARED(tune_f16, smem);
  tune_f16* As = smem;            // [BM][BK]
  tune_f16* Bs = smem + BM * BK;  // [BK][BN]

  int tile_m, tile_n;
  hm_tile_of_block(M, N, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int tid = threadIdx.x;
  const int ty = tid / HF_TCOLS, tx = tid % HF_TCOLS;

  float acc[HF_TM][HF_TN];
#pragma unroll
  for (int i = 0; i < HF_TM; ++i)
#pragma unroll
    for (int j = 0; j < HF_TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int idx = tid; idx < BM * BK; idx += HM_THREADS) {
      const int r = idx / BK, c = idx % BK;
      As[idx] = (m0 + r < M && k0 + c < K) ? A[(long long)(m0 + r) * K + k0 + c] : 0;
    }
    for (int idx = tid; idx < BK * BN; idx += HM_THREADS) {
      const int r = idx / BN, c = idx % BN;
      Bs[idx] = (k0 + r < K && n0 + c < N) ? B[(long long)(k0 + r) * N + n0 + c] : 0;
    }
    __syncthreads();
    for (int k = 0; k < BK; ++k) {
      float a[HF_TM], b[HF_TN];
#pragma unroll
      for (int i = 0; i < HF_TM; ++i) a[i] = tune_f16_to_f32(As[(ty + i * HF_TROWS) * BK + k]);
#pragma unroll
      for (int j = 0; j < HF_TN; ++j) b[j] = tune_f16_to_f32(Bs[k * BN + tx + j * HF_TCOLS]);
#pragma unroll
      for (int i = 0; i < HF_TM; ++i)
#pragma unroll
        for (int j = 0; j < HF_TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < HF_TM; ++i) {
    const int r = m0 + ty + i * HF_TROWS;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < HF_TN; ++j) {
      const int c = n0 + tx + j * HF_TCOLS;
      if (c < N) C[(long long)r * N + c] = tune_f32_to_f16(acc[i][j]);
    }
  }
}

#endif
