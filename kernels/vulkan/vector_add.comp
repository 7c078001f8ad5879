#version 450
// c = a + b over n floats (bundled kernel "vector_add"; exact, IEEE addition).
// Tunables (macros): EPT elements per invocation, VEC4 (1: 16-byte loads and stores, the last
// n % 4 elements done by the first invocations of workgroup 0). The workgroup size comes from
// config block.x through specialization constant 0 (TUNE_BLOCK_X holds the same value).
// Grid: enough workgroups to cover n, split over x and y (maxComputeWorkGroupCount).
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
// The same buffers seen as vec4 arrays (aliases of bindings 0-2).
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 2) writeonly buffer C4 { vec4 c4[]; };

layout(push_constant) uniform Params { int n; };

void main() {
  const uint N = uint(n);
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + lid;
#if VEC4
  const uint n4 = N / 4u;
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < n4) c4[i] = a4[i] + b4[i];
  }
  if (group == 0u && lid < (N & 3u)) {
    const uint i = n4 * 4u + lid;
    c[i] = a[i] + b[i];
  }
#else
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < N) c[i] = a[i] + b[i];
  }
#endif
}
