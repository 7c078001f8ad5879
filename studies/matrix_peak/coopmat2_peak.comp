#version 450
// matrix_peak's workgroup-scope loop (VK_NV_cooperative_matrix2): each workgroup multiplies a
// BM x BK and a BK x BN f16 matrix, built once from its id, into one BM x BN f32 accumulator
// `iters` times, then stores it (row-major, BM x BN floats per workgroup). With s = q / 32,
// q = workgroup id % 4 + 1, every element ends at iters x BK x q^2 / 1024 exactly (fp32 holds
// it for iters x BK <= 2^19). Built offline (GL_NV_cooperative_matrix2 needs glslang 15 and
// SPIR-V 1.6): see matrix_peak.cpp.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;

layout(std430, binding = 0) writeonly buffer Out { float O[]; };
layout(push_constant) uniform Params { int iters; };

void main() {
  const float16_t s = float16_t(float(gl_WorkGroupID.x % 4u + 1u) / 32.0);
  coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a =
      coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>(s);
  coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b =
      coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>(s);
  coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
      coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
  [[dont_unroll]] for (int it = 0; it < iters; ++it) acc = coopMatMulAdd(a, b, acc);
  coopMatStore(acc, O, gl_WorkGroupID.x * BM * BN, BN, gl_CooperativeMatrixLayoutRowMajor);
}
