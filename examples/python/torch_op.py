"""A PyTorch custom op whose CUDA kernel is tuned by libtune, called like any torch function.

    python examples/python/torch_op.py      # needs a CUDA GPU, PyTorch and the libtune module

`libtune_axpy(x, y, a)` computes a * x + y. Its kernel has two tunable parameters (threads per
block and elements per thread); the first call with a new size bucket (the key: n rounded up to
a power of two) tunes it on the tensors' own GPU, on the current stream, and every later call
launches the winner (a cache hit: no lock, no allocation, no synchronisation). Tuned results
persist in libtune's cache directory, so the next process starts tuned.
"""
import torch

import libtune

AXPY_CUDA = r"""
extern "C" __global__ void axpy(const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ out, float a, long long n) {
  long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * ELEMS;
  #pragma unroll
  for (int i = 0; i < ELEMS; ++i) {
    long long j = base + i;
    if (j < n) out[j] = a * x[j] + y[j];
  }
}
"""

_kernel = libtune.Kernel(
    "axpy",
    AXPY_CUDA,
    language="cuda",
    signature=["x: f32[]", "y: f32[]", "out: f32[]", "a: f32", "n: i64"],
    space={"block.x": [128, 256, 512, 1024], "ELEMS": [1, 2, 4, 8]},
    key=[libtune.pow2("n")],
    dims=libtune.grid_1d("n", ["block.x", "ELEMS"]),  # no Python call per launch
    outputs=["out"],
)
_tuner = libtune.Tuner(_kernel)


@torch.library.custom_op("libtune::axpy", mutates_args=())
def libtune_axpy(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    if x.shape != y.shape or x.dtype != torch.float32 or y.dtype != torch.float32:
        raise ValueError("libtune_axpy: x and y must be float32 tensors of one shape")
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    # The tensors' device (its primary context, PyTorch's) and, by default, the current stream.
    _tuner(libtune.cuda_device(x), x, y, out, a, x.numel())
    return out


@libtune_axpy.register_fake
def _(x, y, a):
    return torch.empty_like(x)


def main():
    if not torch.cuda.is_available():
        raise SystemExit("torch_op.py needs a CUDA GPU")
    torch.manual_seed(0)
    for n in (1000, 1 << 20, (1 << 24) + 3):
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        out = torch.ops.libtune.axpy(x, y, 0.5)  # or libtune_axpy(x, y, 0.5)
        torch.testing.assert_close(out, 0.5 * x + y)
        compiled = torch.compile(lambda a, b: libtune_axpy(a, b, 2.0) * 2)
        torch.testing.assert_close(compiled(x, y), (2.0 * x + y) * 2)
    for r in _tuner.reports():
        print(f"{r['kernel']} {r['key']}: winner {r['winner']} after {r['wall_ms']:.0f} ms "
              f"({len(r['results'])} configurations)")
    try:
        import pandas as pd

        print(pd.DataFrame(_tuner.report())[["key", "block.x", "ELEMS", "median_ns", "status",
                                             "winner"]].to_string())
    except ImportError:
        pass
    print("libtune_axpy matches a * x + y")


if __name__ == "__main__":
    main()
