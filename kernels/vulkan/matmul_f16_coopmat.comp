#version 450
// Row-major C[M,N] = A[M,K] B[K,N], f16 storage, f32 accumulation, on the matrix units
// (bundled kernel "matmul_f16_coopmat"): VK_NV_cooperative_matrix with subgroup scope, shape
// LM x LN x LK (one of DeviceInfo::matrix_shapes_f16). Subgroups of 32 invocations: SGM x SGN
// subgroups each own WM x WN accumulators of LM x LN, so a workgroup computes a
// (SGM*WM*LM) x (SGN*WN*LN) tile of C. Tiles of BK columns of A and BK rows of B are staged in
// shared memory (padded rows; VSH: as 16-byte words or as f16 elements); STAGES = 2 loads the
// next tile into registers while the matrix units work on this one. Rows of A and B go through
// 16-byte loads when K and N are multiples of 8, element by element otherwise; out-of-range
// elements are read as zero. Whole tiles are stored straight from the accumulators when N is a
// multiple of 8; edge tiles go through a per-subgroup scratch, written element by element, in
// range only. Every loop of fixed count is unrolled: the accumulators must stay in registers.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer MatA { float16_t A[]; };
layout(std430, binding = 0) readonly buffer MatA4 { uvec4 A4[]; };
layout(std430, binding = 1) readonly buffer MatB { float16_t B[]; };
layout(std430, binding = 1) readonly buffer MatB4 { uvec4 B4[]; };
layout(std430, binding = 2) writeonly buffer MatC { float16_t C[]; };

layout(push_constant) uniform Params { int M; int N; int K; };

#define SUB 32u                       // invocations per subgroup (the space asks warp_size 32)
#define THREADS (SUB * SGM * SGN)
#define BM (SGM * WM * LM)
#define BN (SGN * WN * LN)
#define PAD 8u                        // f16 elements: keeps rows 16-byte aligned, spreads banks
#define SA (BK + PAD)                 // row stride of the A tile
#define SB (BN + PAD)                 // row stride of the B tile
#define A_ALL (BM * BK / 8u)            // 16-byte words in an A tile
#define B_ALL (BK * BN / 8u)
#define A_VECS ((A_ALL + THREADS - 1u) / THREADS)  // per invocation
#define B_VECS ((B_ALL + THREADS - 1u) / THREADS)

// The tiles in shared memory: as 16-byte words (VSH = 1: one store per word, offsets and
// strides of the matrix loads in words) or as f16 elements (VSH = 0).
#if VSH
#define EL 8u
shared uvec4 As[STAGES][BM * SA / 8u];
shared uvec4 Bs[STAGES][BK * SB / 8u];
#else
#define EL 1u
shared float16_t As[STAGES][BM * SA];
shared float16_t Bs[STAGES][BK * SB];
#endif
shared float Cs[SGM * SGN][LM * LN];

uint m, n, kk, row0, col0, tid;
bool vec;  // K and N multiples of 8: 16-byte global loads

// Eight f16 of A's row `row` from column `col` (zero past the edges), element by element.
uvec4 gather_a(uint row, uint col) {
  uvec4 w;
  for (uint i = 0u; i < 4u; ++i) {
    const uint c = col + 2u * i;
    const float16_t x = c < kk ? A[row * kk + c] : float16_t(0.0);
    const float16_t y = c + 1u < kk ? A[row * kk + c + 1u] : float16_t(0.0);
    w[i] = packFloat2x16(f16vec2(x, y));
  }
  return w;
}

uvec4 gather_b(uint row, uint col) {
  uvec4 w;
  for (uint i = 0u; i < 4u; ++i) {
    const uint c = col + 2u * i;
    const float16_t x = c < n ? B[row * n + c] : float16_t(0.0);
    const float16_t y = c + 1u < n ? B[row * n + c + 1u] : float16_t(0.0);
    w[i] = packFloat2x16(f16vec2(x, y));
  }
  return w;
}

// Word v of the A tile at k0: row v / (BK / 8), columns from (v % (BK / 8)) * 8.
uvec4 load_a(uint v, uint k0) {
  const uint r = v / (BK / 8u), c = (v % (BK / 8u)) * 8u;
  const uint gr = row0 + r, gk = k0 + c;
  if (v >= A_ALL || gr >= m || gk >= kk) return uvec4(0u);
  return vec ? A4[(gr * kk + gk) / 8u] : gather_a(gr, gk);
}

// Word v of the B tile at k0: row v / (BN / 8), columns from (v % (BN / 8)) * 8.
uvec4 load_b(uint v, uint k0) {
  const uint r = v / (BN / 8u), c = (v % (BN / 8u)) * 8u;
  const uint gk = k0 + r, gc = col0 + c;
  if (v >= B_ALL || gk >= kk || gc >= n) return uvec4(0u);
  return vec ? B4[(gk * n + gc) / 8u] : gather_b(gk, gc);
}

void store_a(uint s, uint v, uvec4 w) {
  if (v >= A_ALL) return;
  const uint at = (v / (BK / 8u)) * SA + (v % (BK / 8u)) * 8u;
#if VSH
  As[s][at / 8u] = w;
#else
  for (uint i = 0u; i < 4u; ++i) {
    const f16vec2 h = unpackFloat2x16(w[i]);
    As[s][at + 2u * i] = h.x;
    As[s][at + 2u * i + 1u] = h.y;
  }
#endif
}

void store_b(uint s, uint v, uvec4 w) {
  if (v >= B_ALL) return;
  const uint at = (v / (BN / 8u)) * SB + (v % (BN / 8u)) * 8u;
#if VSH
  Bs[s][at / 8u] = w;
#else
  for (uint i = 0u; i < 4u; ++i) {
    const f16vec2 h = unpackFloat2x16(w[i]);
    Bs[s][at + 2u * i] = h.x;
    Bs[s][at + 2u * i + 1u] = h.y;
  }
#endif
}

void main() {
  m = uint(M);
  n = uint(N);
  kk = uint(K);
  tid = gl_LocalInvocationIndex;
  row0 = gl_WorkGroupID.y * BM;
  col0 = gl_WorkGroupID.x * BN;
  vec = (kk % 8u) == 0u && (n % 8u) == 0u;
  const uint sg = tid / SUB, sgm = sg / SGN, sgn = sg % SGN;

  fcoopmatNV<32, gl_ScopeSubgroup, LM, LN> acc[WM][WN];
  [[unroll]] for (uint i = 0u; i < WM; ++i)
    [[unroll]] for (uint j = 0u; j < WN; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>(0.0);

  const uint tiles = (kk + BK - 1u) / BK;
  uvec4 ra[A_VECS];
  uvec4 rb[B_VECS];
  [[unroll]] for (uint v = 0u; v < A_VECS; ++v) store_a(0u, tid + v * THREADS, load_a(tid + v * THREADS, 0u));
  [[unroll]] for (uint v = 0u; v < B_VECS; ++v) store_b(0u, tid + v * THREADS, load_b(tid + v * THREADS, 0u));
  barrier();
  for (uint t = 0u; t < tiles; ++t) {
    const uint s = t % STAGES, next = (t + 1u) % STAGES, k1 = (t + 1u) * BK;
    const bool more = t + 1u < tiles;
    if (STAGES > 1u && more) {  // the next tile's loads in flight during the math
      [[unroll]] for (uint v = 0u; v < A_VECS; ++v) ra[v] = load_a(tid + v * THREADS, k1);
      [[unroll]] for (uint v = 0u; v < B_VECS; ++v) rb[v] = load_b(tid + v * THREADS, k1);
    }
    [[unroll]] for (uint k = 0u; k < BK; k += LK) {
      fcoopmatNV<16, gl_ScopeSubgroup, LM, LK> a[WM];
      fcoopmatNV<16, gl_ScopeSubgroup, LK, LN> b[WN];
      [[unroll]] for (uint i = 0u; i < WM; ++i)
        coopMatLoadNV(a[i], As[s], (((sgm * WM + i) * LM) * SA + k) / EL, SA / EL, false);
      [[unroll]] for (uint j = 0u; j < WN; ++j)
        coopMatLoadNV(b[j], Bs[s], (k * SB + (sgn * WN + j) * LN) / EL, SB / EL, false);
      [[unroll]] for (uint i = 0u; i < WM; ++i)
        [[unroll]] for (uint j = 0u; j < WN; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    if (!more) break;
    if (STAGES == 1u) {
      barrier();  // everyone is done reading stage 0 before it is refilled
      [[unroll]] for (uint v = 0u; v < A_VECS; ++v) ra[v] = load_a(tid + v * THREADS, k1);
      [[unroll]] for (uint v = 0u; v < B_VECS; ++v) rb[v] = load_b(tid + v * THREADS, k1);
    }
    [[unroll]] for (uint v = 0u; v < A_VECS; ++v) store_a(next, tid + v * THREADS, ra[v]);
    [[unroll]] for (uint v = 0u; v < B_VECS; ++v) store_b(next, tid + v * THREADS, rb[v]);
    barrier();
  }

  const bool whole = row0 + BM <= m && col0 + BN <= n && (n % 8u) == 0u;
  [[unroll]] for (uint i = 0u; i < WM; ++i) {
    [[unroll]] for (uint j = 0u; j < WN; ++j) {
      const uint r = row0 + (sgm * WM + i) * LM, c = col0 + (sgn * WN + j) * LN;
      if (whole) {
        fcoopmatNV<16, gl_ScopeSubgroup, LM, LN> h =
            fcoopmatNV<16, gl_ScopeSubgroup, LM, LN>(acc[i][j]);
        coopMatStoreNV(h, C, r * n + c, n, false);
        continue;
      }
      coopMatStoreNV(acc[i][j], Cs[sg], 0u, LN, false);
      subgroupBarrier();  // every lane's part of the scratch written and visible
      for (uint e = tid % SUB; e < LM * LN; e += SUB) {
        const uint er = r + e / LN, ec = c + e % LN;
        if (er < m && ec < n) C[er * n + ec] = float16_t(Cs[sg][e]);
      }
      subgroupBarrier();  // read before the next accumulator overwrites it
    }
  }
}
