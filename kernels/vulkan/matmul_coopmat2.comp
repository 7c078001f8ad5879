#version 450
// Row-major C[M,N] = A[M,K] B[K,N], f16 or bf16 storage (ELEM), f32 accumulation, on the matrix
// units through workgroup-scope cooperative matrices (bundled kernels "matmul_f16_coopmat2" and,
// built with TUNE_BF16 defined, "matmul_bf16_coopmat2"; VK_NV_cooperative_matrix2): each
// workgroup owns one BM x BN tile of C as a single coopmat<float, gl_ScopeWorkgroup, BM, BN> and
// walks K in steps of BK, loading BM x BK of A and BK x BN of B with coopMatLoadTensorNV (the
// driver stages workgroup-scope operands through shared memory itself). The K loop of the fast
// path is unrolled UNROLL times.
//
// Fast path (uniform per workgroup): the tile lies inside C, K is a multiple of BK and K, N are
// multiples of 8 (16-byte rows); its tensor layouts have no bounds checks. Edge path: layouts
// with clamp mode Constant (value 0): elements outside A and B read as zero, stores outside C
// dropped. Any shape is valid.
//
// GL_NV_cooperative_matrix2 needs SPIR-V 1.6, which Debian 12's glslang cannot emit: the
// modules are built offline (scripts/build-coopmat2-spirv.sh: glslang 15 for f16, 16 for
// GL_EXT_bfloat16) into matmul_f16_coopmat2.spv and matmul_bf16_coopmat2.spv beside this file,
// and libtune runs them as precompiled modules (KernelSource::spirv). Edit this file, then run
// that script: a test compares the hashes.
//
// Specialization constants (set by name): BM, BN, BK (the tile), GROUP_M (tile raster: 0 = row
// by row, g > 0 = groups of g tile-rows, as in Triton), UNROLL; the workgroup size is spec id 0
// (local_size_x_id). Dispatch: tilesM * tilesN workgroups as a 2D grid, linearised y * X + x.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#ifdef TUNE_BF16
#extension GL_EXT_bfloat16 : require
#define ELEM bfloat16_t
#else
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#endif
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint GROUP_M = 8;
layout(constant_id = 5) const uint UNROLL = 4;

layout(std430, binding = 0) readonly buffer MatA { ELEM A[]; };
layout(std430, binding = 1) readonly buffer MatB { ELEM B[]; };
layout(std430, binding = 2) writeonly buffer MatC { ELEM C[]; };

layout(push_constant) uniform Params { int M_; int N_; int K_; };

#define MAT_A coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
#define MAT_ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define MAT_OUT coopmat<ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

void main() {
  const uint M = uint(max(M_, 0)), N = uint(max(N_, 0)), K = uint(max(K_, 0));
  const uint tilesM = (M + BM - 1u) / BM;
  const uint tilesN = (N + BN - 1u) / BN;
  const uint pid = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (pid >= tilesM * tilesN) return;  // the surplus groups of the grid's last row (uniform)
  uint tm, tn;
  if (GROUP_M == 0u) {
    tm = pid / tilesN;
    tn = pid % tilesN;
  } else {
    const uint inGroup = GROUP_M * tilesN;
    const uint firstM = (pid / inGroup) * GROUP_M;
    const uint rows = min(tilesM - firstM, GROUP_M);
    tm = firstM + (pid % inGroup) % rows;
    tn = (pid % inGroup) / rows;
  }
  const uint row0 = tm * BM;
  const uint col0 = tn * BN;

  MAT_ACC acc = MAT_ACC(0.0);
  const bool fast = row0 + BM <= M && col0 + BN <= N && K > 0u && (K % BK) == 0u &&
                    (K % 8u) == 0u && (N % 8u) == 0u;
  if (fast) {
    // Alignment hints: K and N are multiples of 8 here.
    const uint Ka = K & ~7u;
    const uint Na = N & ~7u;
    tensorLayoutNV<2> tA = createTensorLayoutNV(2);
    tA = setTensorLayoutDimensionNV(tA, M, Ka);
    tA = setTensorLayoutStrideNV(tA, Ka, 1);
    tensorLayoutNV<2> tB = createTensorLayoutNV(2);
    tB = setTensorLayoutDimensionNV(tB, Ka, Na);
    tB = setTensorLayoutStrideNV(tB, Na, 1);
    const uint kBig = BK * UNROLL;
    uint k = 0u;
    [[dont_unroll]] for (; k + kBig <= Ka; k += kBig) {
      [[unroll]] for (uint u = 0u; u < UNROLL; ++u) {
        MAT_A a;
        MAT_B b;
        coopMatLoadTensorNV(a, A, 0, sliceTensorLayoutNV(tA, row0, BM, k + u * BK, BK));
        coopMatLoadTensorNV(b, B, 0, sliceTensorLayoutNV(tB, k + u * BK, BK, col0, BN));
        acc = coopMatMulAdd(a, b, acc);
      }
    }
    [[dont_unroll]] for (; k < Ka; k += BK) {
      MAT_A a;
      MAT_B b;
      coopMatLoadTensorNV(a, A, 0, sliceTensorLayoutNV(tA, row0, BM, k, BK));
      coopMatLoadTensorNV(b, B, 0, sliceTensorLayoutNV(tB, k, BK, col0, BN));
      acc = coopMatMulAdd(a, b, acc);
    }
    MAT_OUT d = MAT_OUT(acc);
    tensorLayoutNV<2> tC = createTensorLayoutNV(2);
    tC = setTensorLayoutDimensionNV(tC, M, Na);
    tC = setTensorLayoutStrideNV(tC, Na, 1);
    coopMatStoreTensorNV(d, C, 0, sliceTensorLayoutNV(tC, row0, BM, col0, BN));
    return;
  }

  // Edge path: zero-filled loads outside A and B, dropped stores outside C.
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> eA =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  eA = setTensorLayoutDimensionNV(eA, M, K);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> eB =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  eB = setTensorLayoutDimensionNV(eB, K, N);
  [[dont_unroll]] for (uint k = 0u; k < K; k += BK) {
    MAT_A a;
    MAT_B b;
    coopMatLoadTensorNV(a, A, 0, sliceTensorLayoutNV(eA, row0, BM, k, BK));
    coopMatLoadTensorNV(b, B, 0, sliceTensorLayoutNV(eB, k, BK, col0, BN));
    acc = coopMatMulAdd(a, b, acc);
  }
  MAT_OUT d = MAT_OUT(acc);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> eC =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  eC = setTensorLayoutDimensionNV(eC, M, N);
  coopMatStoreTensorNV(d, C, 0, sliceTensorLayoutNV(eC, row0, BM, col0, BN));
}
