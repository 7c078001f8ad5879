"""Triton's autotuned fp16/bf16 matmul against cuBLAS (torch.matmul), side by side in one run.

    python bench/triton_matmul.py [--rounds 8] [--reps 20]

Issue 16's third column: what a Triton user gets on this GPU, as a ratio to cuBLAS, next to
libtune's wgmma / cuBLAS from `bench_cuda --matmul-hopper` (bench/RESULTS.md). The kernel is
the usual Triton tiled matmul (row-major A and B, fp32 accumulation, grouped tile order, masked
edges) autotuned by `triton.autotune` over tile shapes, stages and warps typical for Hopper,
keyed on M, N, K. Each shape's output is checked against torch.matmul. Timing: every launch
follows an L2 flush (a 512 MiB write) and is timed with CUDA events; the two contenders are
interleaved round by round (`--rounds` rounds of `--reps` launches each), so a clock change
hits both alike; TFLOP/s from the medians.
"""
import argparse
import statistics

import torch
import triton
import triton.language as tl

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 512), (3001, 4104, 2056)]


def hopper_configs():
    out = []
    for bm, bn, bk, stages, warps in [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8),
                                      (128, 128, 64, 4, 4), (128, 128, 64, 4, 8),
                                      (128, 256, 32, 4, 8), (128, 128, 32, 5, 4),
                                      (64, 256, 64, 4, 4), (128, 64, 64, 4, 4)]:
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, num_stages=stages,
                                 num_warps=warps))
    return out


@triton.autotune(configs=hopper_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    in_group = GROUP * tiles_n
    first_m = (pid // in_group) * GROUP
    rows = min(tiles_m - first_m, GROUP)
    tm = first_m + (pid % in_group) % rows
    tn = (pid % in_group) // rows
    offs_m = tm * BM + tl.arange(0, BM)
    offs_n = tn * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + offs_k
        ta = tl.load(a + offs_m[:, None] * K + ks[None, :],
                     mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        tb = tl.load(b + ks[:, None] * N + offs_n[None, :],
                     mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(ta, tb, acc)
    tl.store(c + offs_m[:, None] * N + offs_n[None, :], acc.to(c.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def triton_matmul(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    matmul_kernel[grid](a, b, c, M, N, K)


def timed(fn, flush, reps):
    """Per-launch times in ns, each launch after an L2 flush."""
    out = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e6)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--shapes", default="", help="MxNxK,... (default: every shape above)")
    ap.add_argument("--types", default="f16,bf16")
    args = ap.parse_args()
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s] or SHAPES
    dev = torch.cuda.get_device_name()
    print(f"== Triton {triton.__version__} autotuned matmul vs cuBLAS (torch {torch.__version__}) "
          f"on {dev}; TFLOP/s, medians of {args.rounds} interleaved rounds x {args.reps} "
          "L2-flushed launches")
    print(f"{'type':5} {'MxNxK':18} {'triton':>8} {'cuBLAS':>8} {'tr/cuBLAS':>9}  "
          "max rel err  triton config")
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    torch.manual_seed(0)
    types = [(t, n) for t, n in [(torch.float16, "f16"), (torch.bfloat16, "bf16")]
             if n in args.types.split(",")]
    for dtype, name in types:
        for (M, N, K) in shapes:
            a = torch.randn(M, K, device="cuda", dtype=dtype)
            b = torch.randn(K, N, device="cuda", dtype=dtype)
            c = torch.empty(M, N, device="cuda", dtype=dtype)
            triton_matmul(a, b, c)  # tunes this key
            ref = torch.matmul(a.float(), b.float())
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            contenders = {"triton": lambda: triton_matmul(a, b, c),
                          "cublas": lambda: torch.matmul(a, b, out=c)}
            samples = {k: [] for k in contenders}
            for _ in range(args.rounds):
                for k, fn in contenders.items():
                    samples[k] += timed(fn, flush, args.reps)
            tflop = 2.0 * M * N * K / 1e12
            med = {k: statistics.median(v) for k, v in samples.items()}
            tr, cb = tflop / (med["triton"] * 1e-9), tflop / (med["cublas"] * 1e-9)
            cfg = matmul_kernel.best_config
            print(f"{name:5} {f'{M}x{N}x{K}':18} {tr:8.1f} {cb:8.1f} {tr / cb:9.2f}  "
                  f"{err:11.2e}  {cfg}", flush=True)
            if err > 2e-2:
                raise SystemExit(f"triton's {name} {M}x{N}x{K} output is wrong: max rel err {err}")


if __name__ == "__main__":
    main()
