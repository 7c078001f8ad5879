"""CUDA kernels tuned on PyTorch and CuPy tensors (the GPU machine): wrapped, never copied;
launched on the tensor's device and the current stream; outputs against a CPU reference;
bfloat16 through DLPack. Every case skips, with the reason, without a CUDA backend, a GPU, or
the library it uses."""
import numpy as np
import pytest

import libtune
from kernels import FAST, SAXPY_CUDA, saxpy

N = 1 << 20 | 77


def cuda_device_or_skip():
    if "cuda" not in libtune.backends():
        pytest.skip("libtune was built without the CUDA backend")
    try:
        return libtune.cuda_device(0)
    except libtune.TuneError as e:
        pytest.skip(f"no CUDA device: {e}")


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


def cuda_saxpy(**kw):
    return saxpy(source=SAXPY_CUDA, language="cuda", **kw)


def test_torch_tensors_on_the_current_stream(torch):
    dev = cuda_device_or_skip()
    tuner = libtune.Tuner(cuda_saxpy(), **FAST)
    gen = torch.Generator(device="cuda").manual_seed(5)
    x = torch.rand(N, device="cuda", generator=gen) * 2 - 1
    y = torch.rand(N, device="cuda", generator=gen) * 2 - 1
    want = (0.25 * x.double() + y.double()).cpu().numpy()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        tuner(dev, x, y, 0.25, N, reference={"y": torch.from_numpy(want).float().cuda()},
              atol=1e-6)
        tuner(dev, x, y, 0.0, N)  # a hit on the same (non-default) stream: y unchanged
    stream.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
    rows = tuner.report()
    assert rows and all(r["status"] == "ok" for r in rows), rows
    assert sum(r["winner"] for r in rows) == 1


def test_torch_default_stream_and_device_of_a_tensor(torch):
    cuda_device_or_skip()
    x = torch.ones(4096, device="cuda")
    y = torch.zeros(4096, device="cuda")
    dev = libtune.cuda_device(x)  # the tensor's device
    assert dev is libtune.cuda_device(0) or dev.info["fingerprint"] == libtune.cuda_device(0).info["fingerprint"]
    tuner = libtune.Tuner(cuda_saxpy(), **FAST)
    tuner(dev, x, y, 3.0, 4096)
    torch.cuda.synchronize()
    assert torch.all(y == 3.0).item()


def test_torch_errors_name_the_culprit(torch):
    dev = cuda_device_or_skip()
    tuner = libtune.Tuner(cuda_saxpy(), **FAST)
    x = torch.ones(1024, device="cuda")
    y = torch.zeros(1024, device="cuda")
    with pytest.raises(TypeError, match="argument 'x': dtype float64 does not match"):
        tuner(dev, x.double(), y, 1.0, 1024)
    with pytest.raises(ValueError, match="argument 'x': the tensor is not contiguous"):
        tuner(dev, torch.ones(1024, 2, device="cuda")[:, 0], y, 1.0, 1024)
    if torch.cuda.device_count() > 1:
        with pytest.raises(ValueError, match="is on cuda:1 but the device is cuda:0"):
            tuner(dev, x.to("cuda:1"), y, 1.0, 1024)


def test_bfloat16_through_dlpack(torch):
    dev = cuda_device_or_skip()
    src = r"""
    #include <cuda_bf16.h>
    extern "C" __global__ void twice(const __nv_bfloat16* x, __nv_bfloat16* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = __float2bfloat16(2.0f * __bfloat162float(x[i]));
    }"""
    k = libtune.Kernel("twice", src, language="cuda", signature=["x: bf16[]", "y: bf16[]", "n: i32"],
                       space={"block.x": [64, 128]}, key=["n"], dims=libtune.grid_1d("n"),
                       outputs=["y"])
    tuner = libtune.Tuner(k, **FAST)
    x = torch.randn(5000, device="cuda").bfloat16()
    y = torch.empty_like(x)
    tuner(dev, x, y, 5000, reference={"y": x.float() * 2}, rtol=1e-2, atol=1e-2)
    torch.cuda.synchronize()
    assert torch.equal(y, (x.float() * 2).bfloat16())


def test_cupy_arrays():
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    dev = cuda_device_or_skip()
    tuner = libtune.Tuner(cuda_saxpy(), **FAST)
    rng = np.random.default_rng(7)
    xh = rng.uniform(-1, 1, N).astype(np.float32)
    yh = rng.uniform(-1, 1, N).astype(np.float32)
    x, y = cp.asarray(xh), cp.asarray(yh)
    cp.cuda.Device().synchronize()  # the copies ran on the null stream, unordered with s
    with cp.cuda.Stream(non_blocking=True) as s:
        tuner(dev, x, y, 1.5, N)
        s.synchronize()
    np.testing.assert_allclose(cp.asnumpy(y), np.float32(1.5) * xh + yh, rtol=1e-6, atol=1e-6)


def test_numpy_arrays_on_a_cuda_device():
    dev = cuda_device_or_skip()
    tuner = libtune.Tuner(cuda_saxpy(), **FAST)
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, 10000).astype(np.float32)
    y = rng.uniform(-1, 1, 10000).astype(np.float32)
    want = np.float32(2.0) * x + y
    tuner(dev, x, y, 2.0, 10000)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
