#version 450
// Row-major C[M,N] = A[M,K] B[K,N] with f16 storage and f32 accumulation (bundled kernel
// "matmul_f16"). Needs storageBuffer16BitAccess; the backend reports the variant unavailable
// on devices without it. A workgroup of T x (T/WPT) invocations computes a T x T tile of C;
// each invocation computes WPT rows of one column. Tiles of A and B go through shared memory
// as f32. Out-of-range elements are read as zero and never written.
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer MatA { float16_t A[]; };
layout(std430, binding = 1) readonly buffer MatB { float16_t B[]; };
layout(std430, binding = 2) writeonly buffer MatC { float16_t C[]; };

layout(push_constant) uniform Params { int M; int N; int K; };

#define RS (T / WPT)  // rows of invocations in the workgroup

shared float As[T * T];
shared float Bs[T * T];

void main() {
  const uint m = uint(M), n = uint(N), kk = uint(K);
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint row0 = gl_WorkGroupID.y * T, col = gl_WorkGroupID.x * T + tx;
  float acc[WPT];
  for (uint r = 0u; r < WPT; ++r) acc[r] = 0.0;

  for (uint k0 = 0u; k0 < kk; k0 += T) {
    for (uint r = 0u; r < WPT; ++r) {
      const uint lr = ty + r * RS;
      const uint ga = row0 + lr, gak = k0 + tx;
      As[lr * T + tx] = (ga < m && gak < kk) ? float(A[ga * kk + gak]) : 0.0;
      const uint gbk = k0 + lr;
      Bs[lr * T + tx] = (gbk < kk && col < n) ? float(B[gbk * n + col]) : 0.0;
    }
    barrier();
    for (uint k = 0u; k < T; ++k) {
      const float b = Bs[k * T + tx];
      for (uint r = 0u; r < WPT; ++r) acc[r] += As[(ty + r * RS) * T + k] * b;
    }
    barrier();
  }
  for (uint r = 0u; r < WPT; ++r) {
    const uint row = row0 + ty + r * RS;
    if (row < m && col < n) C[row * n + col] = float16_t(acc[r]);
  }
}
