// The GLSL comparison kernel behind VulkanDevice::compare (tune/backend/comparison_kernel.hpp
// states its contract): each workgroup strides over the elements, reduces its max errors,
// mismatch count and first bad index in shared memory, and adds them to the result buffer
// with one atomic each, so only 16 bytes come back. Compiled by shaderc like any variant.
#pragma once

namespace tune::vk {

inline constexpr const char* kComparisonShader = R"glsl(#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, binding = 0) readonly buffer Actual { uint actual[]; };
layout(std430, binding = 1) readonly buffer Expected { uint expected[]; };
layout(std430, binding = 2) buffer Result { uint result[]; };
layout(push_constant) uniform Params { uint n; float abs_tol; float rel_tol; };

shared float s_abs[TUNE_BLOCK_X];
shared float s_rel[TUNE_BLOCK_X];
shared uint s_bad[TUNE_BLOCK_X];
shared uint s_first[TUNE_BLOCK_X];

// Element i of a buffer of 32-bit words, as a float; `bits` the element's own bits.
#if ELEM_KIND == 0
#define BITS(buf, i) buf[i]
#define VALUE(bits) uintBitsToFloat(bits)
#elif ELEM_KIND == 1
#define BITS(buf, i) ((buf[(i) >> 1] >> (16u * ((i) & 1u))) & 0xffffu)
#define VALUE(bits) unpackHalf2x16(bits).x
#elif ELEM_KIND == 2
#define BITS(buf, i) ((buf[(i) >> 1] >> (16u * ((i) & 1u))) & 0xffffu)
#define VALUE(bits) uintBitsToFloat((bits) << 16)
#elif ELEM_KIND == 3
#define BITS(buf, i) buf[i]
#define VALUE(bits) float(int(bits))
#else
#define BITS(buf, i) buf[i]
#define VALUE(bits) float(bits)
#endif
#define IS_FLOAT (ELEM_KIND <= 2)

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint stride = gl_NumWorkGroups.x * TUNE_BLOCK_X;
  const float inf = uintBitsToFloat(0x7f800000u);
  float max_abs = 0.0;
  float max_rel = 0.0;
  uint bad = 0u;
  uint first = 0xffffffffu;
  for (uint i = gl_WorkGroupID.x * TUNE_BLOCK_X + lid; i < n; i += stride) {
    const uint ab = BITS(actual, i);
    const uint eb = BITS(expected, i);
    const float e = VALUE(eb);
#if IS_FLOAT
    const float a = VALUE(ab);
    if (a == e) continue;
    float d = abs(a - e);
#else
    // Integers: the difference taken exactly, then as a float (nonzero whenever bits differ).
    if (ab == eb) continue;
#if ELEM_KIND == 3
    const uint diff = int(ab) > int(eb) ? ab - eb : eb - ab;
#else
    const uint diff = ab > eb ? ab - eb : eb - ab;
#endif
    float d = float(diff);
#endif
    if (isnan(d)) d = inf;
    const float mag = abs(e);
    const float rel = (mag > 0.0 && !isinf(mag)) ? d / mag : inf;
    max_abs = max(max_abs, d);
    max_rel = max(max_rel, rel);
    if (!isinf(d) && d <= abs_tol + rel_tol * mag) continue;
    if (bad == 0u) first = i;
    ++bad;
  }
  s_abs[lid] = max_abs;
  s_rel[lid] = max_rel;
  s_bad[lid] = bad;
  s_first[lid] = first;
  barrier();
  for (uint half_ = TUNE_BLOCK_X / 2u; half_ > 0u; half_ >>= 1) {
    if (lid < half_) {
      s_abs[lid] = max(s_abs[lid], s_abs[lid + half_]);
      s_rel[lid] = max(s_rel[lid], s_rel[lid + half_]);
      s_bad[lid] += s_bad[lid + half_];
      s_first[lid] = min(s_first[lid], s_first[lid + half_]);
    }
    barrier();
  }
  if (lid == 0u && (s_abs[0] > 0.0 || s_rel[0] > 0.0 || s_bad[0] > 0u)) {
    atomicMax(result[0], floatBitsToUint(s_abs[0]));
    atomicMax(result[1], floatBitsToUint(s_rel[0]));
    atomicAdd(result[2], s_bad[0]);
    atomicMin(result[3], s_first[0]);
  }
}
)glsl";

}  // namespace tune::vk
