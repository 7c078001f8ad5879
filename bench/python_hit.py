"""Host time of a cache-hit call from Python: libtune vs Triton's autotune vs the C++ call.

    PYTHONPATH=<build>/python python bench/python_hit.py [--bench-cuda build/gpu/bench/bench_cuda]

Each contender launches the same elementwise kernel (y = a * x + y, float32, n = 4096: far less
GPU time per launch than host time, so the queue never fills) on torch tensors on the current
stream, after its tuning is done. A sample is the wall time of a batch of calls divided by the
batch size; the GPU is synchronised between batches, outside the timed span, and the contenders
are interleaved batch by batch so a clock change hits all of them alike. Prints the median and
p20-p80 per call and, with --bench-cuda, the C++ figure of the same run from bench_cuda's
BM_stream_dispatch (libtune's hit on a stream vs a raw cuLaunchKernel). Target (issue 18):
libtune from Python under half of Triton's.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

import torch

import libtune

AXPY_CUDA = r"""
extern "C" __global__ void axpy(const float* x, float* y, float a, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * ELEMS;
  for (int i = 0; i < ELEMS; ++i) {
    int j = base + i;
    if (j < n) y[j] = a * x[j] + y[j];
  }
}
"""


def libtune_call(n):
    k = libtune.Kernel("axpy_bench", AXPY_CUDA, language="cuda", entry="axpy",
                       signature=["x: f32[]", "y: f32[]", "a: f32", "n: i32"],
                       space={"block.x": [64, 128, 256], "ELEMS": [1, 2, 4]},
                       key=[libtune.pow2("n")], restore_value=["y"],
                       dims=libtune.grid_1d("n", ["block.x", "ELEMS"]), outputs=["y"])
    tuner = libtune.Tuner(k, persistent=False)
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    dev = libtune.cuda_device(x)
    tuner(dev, x, y, 0.5, n)  # tunes
    return lambda: tuner(dev, x, y, 0.5, n)


def triton_call(n):
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w)
                              for b in (256, 512, 1024) for w in (2, 4, 8)], key=["n"])
    @triton.jit
    def axpy(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, a * x + y, mask=mask)

    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")

    def call():
        axpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, 0.5, n)

    call()  # tunes
    return call


def torch_call(n):
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    return lambda: y.add_(x, alpha=0.5)


def bench_cuda_figure(path):
    out = subprocess.run([path, "--benchmark_filter=BM_stream_dispatch", "--benchmark_format=json",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    # bench_cuda prints its summary table after Google Benchmark's JSON: decode the JSON alone.
    doc, _ = json.JSONDecoder().raw_decode(out[out.index("{"):])
    return {b["name"]: b["real_time"] for b in doc["benchmarks"]
            if b.get("aggregate_name") == "median"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--bench-cuda", help="path of bench_cuda, for the C++ figure of this run")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("python_hit.py needs a CUDA GPU")

    contenders = {"libtune (Python)": libtune_call(args.n), "torch add_ (no tuning)": torch_call(args.n)}
    triton_fn = triton_call(args.n)
    if triton_fn is None:
        print("triton not installed: its row is missing")
    else:
        contenders["triton.autotune"] = triton_fn
    samples = {name: [] for name in contenders}
    for name, fn in contenders.items():  # warm
        for _ in range(args.batch):
            fn()
    torch.cuda.synchronize()
    for _ in range(args.rounds):
        for name, fn in contenders.items():
            t0 = time.perf_counter_ns()
            for _ in range(args.batch):
                fn()
            t1 = time.perf_counter_ns()
            torch.cuda.synchronize()
            samples[name].append((t1 - t0) / args.batch / 1000.0)

    print(f"host time per cache-hit call, n={args.n}, {args.rounds} batches of {args.batch} "
          f"({torch.cuda.get_device_name()}, torch {torch.__version__}):")
    print("| call | median us | p20-p80 us |")
    print("|---|---|---|")
    med = {}
    for name, s in samples.items():
        q = statistics.quantiles(s, n=5)
        med[name] = statistics.median(s)
        print(f"| {name} | {med[name]:.2f} | {q[0]:.2f}-{q[3]:.2f} |")
    if args.bench_cuda:
        for name, ns in bench_cuda_figure(args.bench_cuda).items():
            print(f"| C++ {name} | {ns / 1000.0:.2f} | |")
    if "triton.autotune" in med:
        ratio = med["libtune (Python)"] / med["triton.autotune"]
        print(f"libtune from Python / Triton: {ratio:.2f}x (target: under 0.5x)")


if __name__ == "__main__":
    main()
