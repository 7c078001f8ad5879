#version 450
// out[0] += sum(x[0..n)) (bundled kernel "reduce_sum"; out is zeroed before each launch).
// Each invocation sums EPT strided elements; the workgroup reduces them with subgroupAdd and a
// small shared array (SUBGROUP = 1) or a shared-memory tree (SUBGROUP = 0); one invocation per
// workgroup adds the partial sum to out[0] with an atomicCompSwap loop on the float's bits.
// The workgroup size (a power of two) comes from config block.x (specialization constant 0).
#if SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Out { uint out_bits[]; };

layout(push_constant) uniform Params { int n; };

shared float partial[TUNE_BLOCK_X];

void atomic_add_out(float v) {
  uint old = out_bits[0];
  for (;;) {
    const uint want = floatBitsToUint(uintBitsToFloat(old) + v);
    const uint seen = atomicCompSwap(out_bits[0], old, want);
    if (seen == old) break;
    old = seen;
  }
}

void main() {
  const uint N = uint(n);
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint base = group * (TUNE_BLOCK_X * EPT) + lid;
  float s = 0.0;
  for (uint j = 0u; j < EPT; ++j) {
    const uint i = base + j * TUNE_BLOCK_X;
    if (i < N) s += x[i];
  }
#if SUBGROUP
  s = subgroupAdd(s);
  if (subgroupElect()) partial[gl_SubgroupID] = s;
  barrier();
  if (lid == 0u) {
    float t = 0.0;
    for (uint k = 0u; k < gl_NumSubgroups; ++k) t += partial[k];
    atomic_add_out(t);
  }
#else
  partial[lid] = s;
  barrier();
  for (uint stride = TUNE_BLOCK_X / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier();
  }
  if (lid == 0u) atomic_add_out(partial[0]);
#endif
}
