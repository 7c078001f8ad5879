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
// Compile time (NVRTC compiles every variant at tuning time): only the main loop and the
// interior-tile paths are unrolled; the edge-tile paths and the prologue are rolled loops.
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
#define HM_KSTEPS (BK / 16)
#define HM_C_LD (BN + 8)  // the epilogue's padded C tile, in halves
#define HM_A_STAGE (BM * HM_A_LD)
#define HM_B_STAGE (BK * HM_B_LD)
#define HM_A_PASSES ((BM * BK / 8) / HM_THREADS)  // 16-byte copies per thread per A tile
#define HM_B_PASSES ((BK * BN / 8) / HM_THREADS)
#define HM_A_ROWS_PER_PASS (HM_THREADS / (BK / 8))
#define HM_B_ROWS_PER_PASS (HM_THREADS / (BN / 8))
#define HM_OUT_ROWS (HM_THREADS / (BN / 8))  // C rows one pass of 16-byte stores covers

TUNE_DEVICE unsigned hm_smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// Two floats to a pair of halves, round to nearest even (lo in the low 16 bits).
TUNE_DEVICE unsigned hm_pack_f16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// A 16-byte cp.async whose source is known to be in range (no zero-fill operand).
TUNE_DEVICE void hm_cp_async_16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(hm_smem_addr(smem)), "l"(gmem));
}

// The main loop is software-pipelined at two levels (the CUTLASS sm80 multistage scheme):
// global->shared tiles run HM_STAGES - 1 tiles ahead through cp.async, and the ldmatrix
// fragments of k-step ks + 1 are read (into the other of two register buffers) while the MMAs of
// k-step ks issue, across tile boundaries too. The barrier for tile kt + 1 sits just before the
// first fragment read of that tile, and the copy into the stage freed by tile kt - 1 is issued at
// the first k-step of tile kt; every warp read that stage for the last time before the previous
// barrier. Interior tiles copy with no bounds checks; edge tiles zero-fill. The epilogue stages
// the C tile through shared memory and writes 16-byte rows.
TUNE_KERNEL void __launch_bounds__(HM_THREADS)
    matmul_f16(const tune_f16* __restrict__ A, const tune_f16* __restrict__ B,
               tune_f16* __restrict__ C, int M, int N, int K) {
  static_assert(HM_THREADS % 32 == 0 && HM_WARPS % WARPS_M == 0, "warps must tile WARPS_M");
  static_assert(HM_WM % 16 == 0 && HM_WN % 16 == 0, "warp tiles are multiples of 16x16");
  static_assert(BK % 32 == 0, "BK is a multiple of two MMA k-steps (fragment double buffer)");
  static_assert((BM * BK / 8) % HM_THREADS == 0, "A tile copies must divide evenly");
  static_assert((BK * BN / 8) % HM_THREADS == 0, "B tile copies must divide evenly");
  static_assert(HM_THREADS % (BK / 8) == 0 && HM_THREADS % (BN / 8) == 0,
                "a pass of copies covers whole tile rows");
  static_assert((BM * BN / 8) % HM_THREADS == 0, "C tile stores must divide evenly");
  static_assert(HM_STAGES >= 2, "the pipeline needs at least two stages");
#ifdef TUNE_SHARED_BYTES
  static_assert(TUNE_SHARED_BYTES >= HM_STAGES * (HM_A_STAGE + HM_B_STAGE) * 2 &&
                    TUNE_SHARED_BYTES >= BM * HM_C_LD * 2,
                "dynamic shared memory covers the pipeline and the C tile");
#endif

  TUNE_DYNAMIC_SHARED(tune_f16, smem);
  tune_f16* As = smem;                           // [STAGES][BM][BK + 8]
  tune_f16* Bs = smem + HM_STAGES * HM_A_STAGE;  // [STAGES][BK][BN + 8]

  int tile_m, tile_n;
  hm_tile_of_block(M, N, &tile_m, &tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp / HM_WARPS_N) * HM_WM;
  const int wn0 = (warp % HM_WARPS_N) * HM_WN;
  const bool a_vec = (K % 8) == 0, b_vec = (N % 8) == 0;
  const bool interior = a_vec && b_vec && m0 + BM <= M && n0 + BN <= N;

  // This thread's copies: row and column of its first 16-byte chunk in each tile.
  const int a_r = tid / (BK / 8), a_c = (tid % (BK / 8)) * 8;
  const int b_r = tid / (BN / 8), b_c = (tid % (BN / 8)) * 8;
  const tune_f16* a_src = A + (long long)(m0 + a_r) * K + a_c;  // advanced by k0
  const tune_f16* b_src = B + (long long)b_r * N + n0 + b_c;    // advanced by k0 * N
  const long long a_pass = (long long)HM_A_ROWS_PER_PASS * K;
  const long long b_pass = (long long)HM_B_ROWS_PER_PASS * N;

  auto load_tile = [&](int stage, int k0) {
    tune_f16* as = As + stage * HM_A_STAGE;
    tune_f16* bs = Bs + stage * HM_B_STAGE;
    if (interior && k0 + BK <= K) {
      const tune_f16* ga = a_src + k0;
      const tune_f16* gb = b_src + (long long)k0 * N;
#pragma unroll
      for (int i = 0; i < HM_A_PASSES; ++i)
        hm_cp_async_16(as + (a_r + i * HM_A_ROWS_PER_PASS) * HM_A_LD + a_c, ga + i * a_pass);
#pragma unroll
      for (int i = 0; i < HM_B_PASSES; ++i)
        hm_cp_async_16(bs + (b_r + i * HM_B_ROWS_PER_PASS) * HM_B_LD + b_c, gb + i * b_pass);
      return;
    }
    // Edge tiles: one rolled loop over this thread's A then B copies. Edge tiles occur only at
    // the borders of the matrices; unrolled, this path at every call site was most of the
    // variant's code and of its NVRTC compile time.
#pragma unroll 1
    for (int i = 0; i < HM_A_PASSES + HM_B_PASSES; ++i) {
      const bool is_a = i < HM_A_PASSES;
      const int r =
          is_a ? a_r + i * HM_A_ROWS_PER_PASS : b_r + (i - HM_A_PASSES) * HM_B_ROWS_PER_PASS;
      const int c = is_a ? a_c : b_c;
      const int gr = (is_a ? m0 : k0) + r, gc = (is_a ? k0 : n0) + c;
      const int rows = is_a ? M : K, cols = is_a ? K : N;  // of the source matrix
      const tune_f16* g = is_a ? A : B;
      tune_f16* dst = is_a ? as + r * HM_A_LD + c : bs + r * HM_B_LD + c;
      if (gr >= rows || gc >= cols) {
        tune_cp_async_16(dst, g, false);
      } else if ((is_a ? a_vec : b_vec) && gc + 7 < cols) {
        tune_cp_async_16(dst, g + (long long)gr * cols + gc, true);
      } else {
#pragma unroll 1
        for (int e = 0; e < 8; ++e) dst[e] = gc + e < cols ? g[(long long)gr * cols + gc + e] : 0;
      }
    }
  };

  // ldmatrix lane addresses (bytes, shared window) in stage 0 at k-step 0.
  // A: lanes 0-15 address rows 0-15 at k, lanes 16-31 the same rows at k + 8: registers
  // a0..a3 = (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
  // B (rows are k; .trans hands each thread B[k][n] pairs along k, the "col" operand):
  // matrices (k 0-7, n-tile ni), (k 8-15, ni), (k 0-7, ni+1), (k 8-15, ni+1).
  const unsigned a_lane = hm_smem_addr(As + (wm0 + lane % 16) * HM_A_LD + (lane / 16) * 8);
  const unsigned b_lane =
      hm_smem_addr(Bs + (lane % 8 + ((lane / 8) % 2) * 8) * HM_B_LD + wn0 + (lane / 16) * 8);

  unsigned af[2][HM_MI][4];
  unsigned bf[2][HM_NI][2];
  auto load_frags = [&](int buf, int stage, int ks) {
    const unsigned a_base = a_lane + (stage * HM_A_STAGE + ks * 16) * 2;
    const unsigned b_base = b_lane + (stage * HM_B_STAGE + ks * 16 * HM_B_LD) * 2;
#pragma unroll
    for (int mi = 0; mi < HM_MI; ++mi)
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(af[buf][mi][0]), "=r"(af[buf][mi][1]), "=r"(af[buf][mi][2]),
                     "=r"(af[buf][mi][3])
                   : "r"(a_base + mi * 16 * HM_A_LD * 2));
#pragma unroll
    for (int ni = 0; ni < HM_NI; ni += 2)
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(bf[buf][ni][0]), "=r"(bf[buf][ni][1]), "=r"(bf[buf][ni + 1][0]),
                     "=r"(bf[buf][ni + 1][1])
                   : "r"(b_base + ni * 8 * 2));
  };

  float acc[HM_MI][HM_NI][4];
#pragma unroll
  for (int mi = 0; mi < HM_MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < HM_NI; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;

  const int ktiles = (K + BK - 1) / BK;
  // Rolled: one copy of load_tile here rather than HM_STAGES - 1 (compile time; runs once).
#pragma unroll 1
  for (int s = 0; s < HM_STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s * BK);
    tune_cp_async_commit();
  }
  tune_cp_async_wait<HM_STAGES - 2>();  // tile 0 has landed (this thread's copies)
  __syncthreads();                      // everyone's
  int rd_stage = 0, wr_stage = HM_STAGES - 1;
  load_frags(0, 0, 0);

  for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
    for (int ks = 0; ks < HM_KSTEPS; ++ks) {
      if (ks == 0) {
        // Into the stage tile kt - 1 used: all warps left it before the last barrier.
        const int next = kt + HM_STAGES - 1;
        if (next < ktiles) load_tile(wr_stage, next * BK);
        tune_cp_async_commit();
        wr_stage = wr_stage + 1 == HM_STAGES ? 0 : wr_stage + 1;
      }
      if (ks == HM_KSTEPS - 1) {
        tune_cp_async_wait<HM_STAGES - 2>();  // tile kt + 1 has landed
        __syncthreads();
        rd_stage = rd_stage + 1 == HM_STAGES ? 0 : rd_stage + 1;
      }
      // Fragments of the next k-step (of tile kt + 1 after the last one; past the last tile
      // they are read from a stale stage and never used).
      load_frags((ks + 1) % 2, rd_stage, (ks + 1) % HM_KSTEPS);
#pragma unroll
      for (int mi = 0; mi < HM_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < HM_NI; ++ni)
          asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
              "{%8,%9}, {%0,%1,%2,%3};\n"
              : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]), "+f"(acc[mi][ni][2]),
                "+f"(acc[mi][ni][3])
              : "r"(af[ks % 2][mi][0]), "r"(af[ks % 2][mi][1]), "r"(af[ks % 2][mi][2]),
                "r"(af[ks % 2][mi][3]), "r"(bf[ks % 2][ni][0]), "r"(bf[ks % 2][ni][1]));
    }
  }
  tune_cp_async_wait<0>();
  __syncthreads();  // every warp is done with the pipeline's shared memory

  // Accumulator layout: c0,c1 at (lane/4, 2*(lane%4) + {0,1}); c2,c3 eight rows below.
  // Stage the block's C tile in shared memory as fp16 (padded rows: conflict-free stores).
  tune_f16* Cs = smem;  // [BM][BN + 8]
  tune_f16* cs_lane = Cs + (wm0 + lane / 4) * HM_C_LD + wn0 + (lane % 4) * 2;
#pragma unroll
  for (int mi = 0; mi < HM_MI; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int ni = 0; ni < HM_NI; ++ni)
        *(unsigned*)(cs_lane + (mi * 16 + half * 8) * HM_C_LD + ni * 8) =
            hm_pack_f16x2(acc[mi][ni][half * 2], acc[mi][ni][half * 2 + 1]);
  __syncthreads();
  // Each thread copies 16-byte pieces of C rows: column o_c of rows o_r + i * HM_OUT_ROWS.
  const int o_r = tid / (BN / 8), o_c = (tid % (BN / 8)) * 8;
  if (interior) {  // the whole tile is in range and its rows are 16-byte aligned
    const tune_f16* src = Cs + o_r * HM_C_LD + o_c;
    tune_f16* dst = C + (long long)(m0 + o_r) * N + n0 + o_c;
    const long long dst_pass = (long long)HM_OUT_ROWS * N;
#pragma unroll
    for (int i = 0; i < BM / HM_OUT_ROWS; ++i)
      *(int4*)(dst + i * dst_pass) = *(const int4*)(src + i * HM_OUT_ROWS * HM_C_LD);
    return;
  }
  // Edge tiles: rolled, like load_tile's edge path.
#pragma unroll 1
  for (int i = 0; i < BM / HM_OUT_ROWS; ++i) {
    const int r = o_r + i * HM_OUT_ROWS;
    const int gr = m0 + r, gc = n0 + o_c;
    if (gr >= M) break;
    const tune_f16* src = Cs + r * HM_C_LD + o_c;
    tune_f16* dst = C + (long long)gr * N + gc;
    if (b_vec && gc + 7 < N) {
      *(int4*)dst = *(const int4*)src;
    } else {
#pragma unroll 1
      for (int e = 0; e < 8 && gc + e < N; ++e) dst[e] = src[e];
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
