#version 450
// Row-major C[M,N] = A[M,K] B[K,N] in f32 (bundled kernel "matmul_f32").
// A workgroup computes a BM x BN tile of C, stepping over K in BK-wide slices staged in shared
// memory; each invocation accumulates TM x TN outputs in registers (rows ty + i*(BM/TM),
// columns tx + j*(BN/TN), so neighbouring invocations touch neighbouring columns). Workgroup:
// (BN/TN) x (BM/TM), set by the config (block.x, block.y). DB = 1 double-buffers the shared
// tiles: the next slice is loaded while the current one is used, one barrier per slice.
// Out-of-range rows, columns and k are read as zero and never written (ragged M, N, K).
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer MatA { float A[]; };
layout(std430, binding = 1) readonly buffer MatB { float B[]; };
layout(std430, binding = 2) writeonly buffer MatC { float C[]; };

layout(push_constant) uniform Params { int M; int N; int K; };

#define TX (BN / TN)
#define TY (BM / TM)
#define NT (TX * TY)
#if DB
#define NBUF 2
#else
#define NBUF 1
#endif

shared float As[NBUF * BK * BM];  // As[buf][k][m]: A's tile, transposed
shared float Bs[NBUF * BK * BN];  // Bs[buf][k][n]

void load_tiles(uint buf, uint k0, uint row0, uint col0, uint tid) {
  const uint m = uint(M), n = uint(N), kk = uint(K);
  for (uint i = tid; i < BM * BK; i += NT) {
    const uint r = i / BK, k = i % BK;  // consecutive invocations read along a row of A
    const uint gr = row0 + r, gk = k0 + k;
    As[(buf * BK + k) * BM + r] = (gr < m && gk < kk) ? A[gr * kk + gk] : 0.0;
  }
  for (uint i = tid; i < BK * BN; i += NT) {
    const uint k = i / BN, c = i % BN;
    const uint gk = k0 + k, gc = col0 + c;
    Bs[(buf * BK + k) * BN + c] = (gk < kk && gc < n) ? B[gk * n + gc] : 0.0;
  }
}

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * TX + tx;
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  const uint tiles = (uint(K) + BK - 1u) / BK;

  float acc[TM][TN];
  for (uint i = 0u; i < TM; ++i)
    for (uint j = 0u; j < TN; ++j) acc[i][j] = 0.0;

#if DB
  load_tiles(0u, 0u, row0, col0, tid);
  barrier();
#endif
  for (uint t = 0u; t < tiles; ++t) {
#if DB
    const uint cur = t & 1u;
    if (t + 1u < tiles) load_tiles(cur ^ 1u, (t + 1u) * BK, row0, col0, tid);
#else
    const uint cur = 0u;
    load_tiles(0u, t * BK, row0, col0, tid);
    barrier();
#endif
    for (uint k = 0u; k < BK; ++k) {
      float a[TM];
      float b[TN];
      for (uint i = 0u; i < TM; ++i) a[i] = As[(cur * BK + k) * BM + ty + i * TY];
      for (uint j = 0u; j < TN; ++j) b[j] = Bs[(cur * BK + k) * BN + tx + j * TX];
      for (uint i = 0u; i < TM; ++i)
        for (uint j = 0u; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }

  const uint m = uint(M), n = uint(N);
  for (uint i = 0u; i < TM; ++i) {
    const uint r = row0 + ty + i * TY;
    if (r >= m) continue;
    for (uint j = 0u; j < TN; ++j) {
      const uint c = col0 + tx + j * TX;
      if (c < n) C[r * n + c] = acc[i][j];
    }
  }
}
