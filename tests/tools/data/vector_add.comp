#version 450
// The kernel of t1_vector_add.json (a Kernel Tuner T1 problem for Vulkan): c = a + b over n
// floats. Tunables, defined by the tuner: block_size_x (the workgroup size),
// elems_per_thread (consecutive elements per invocation).
layout(local_size_x = block_size_x, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) writeonly buffer C { float c[]; };
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(push_constant) uniform Params { int n; };

void main() {
  const uint first = gl_GlobalInvocationID.x * elems_per_thread;
  for (uint j = 0u; j < elems_per_thread; ++j) {
    const uint i = first + j;
    if (i < uint(n)) c[i] = a[i] + b[i];
  }
}
