"""Kernels the Python tests tune: GLSL for Vulkan (lavapipe here), CUDA for the GPU machine."""
import libtune

SAXPY_GLSL = r"""#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; int n; };
void main() {
  uint base = gl_GlobalInvocationID.x * ELEMS;
  for (uint i = 0; i < ELEMS; ++i) {
    uint j = base + i;
#if defined(WRONG_AT) && ELEMS == WRONG_AT
    if (j < uint(n)) y[j] = a * x[j];  // a deliberately wrong variant: forgets y
#else
    if (j < uint(n)) y[j] = a * x[j] + y[j];
#endif
  }
}"""

# out[i] += x[i]: accumulates, so tuning it needs reset_to_zero.
ACCUMULATE_GLSL = r"""#version 450
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer O { float o[]; };
layout(push_constant) uniform P { int n; };
void main() {
  uint j = gl_GlobalInvocationID.x;
  if (j < uint(n)) o[j] += x[j];
}"""

SAXPY_CUDA = r"""
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * ELEMS;
  for (int i = 0; i < ELEMS; ++i) {
    int j = base + i;
    if (j < n) y[j] = a * x[j] + y[j];
  }
}
"""

FAST = dict(warmup_ms=1, rep_ms=4, persistent=False)
SPACE = {"block.x": [32, 64, 128], "ELEMS": [1, 2, 4]}


def saxpy(source=SAXPY_GLSL, language="glsl", name="saxpy", **kw):
    args = dict(
        language=language,
        signature=["x: f32[]", "y: f32[]", "a: f32", "n: i32"],
        space=dict(SPACE),
        key=[libtune.pow2("n")],
        restore_value=["y"],
        dims=libtune.grid_1d("n", ["block.x", "ELEMS"]),
        outputs=["y"],
    )
    args.update(kw)
    return libtune.Kernel(name, source, **args)


def wrong_saxpy(wrong_at=4, **kw):
    """saxpy whose ELEMS == wrong_at variant computes a * x (verify must drop it)."""
    source = SAXPY_GLSL.replace("#version 450\n", f"#version 450\n#define WRONG_AT {wrong_at}\n")
    return saxpy(source=source, **kw)
