"""How the binding reads GPU tensors, checked here without a GPU: a stand-in `torch` module (a
class with PyTorch's tensor methods) and objects with a __cuda_array_interface__ reach the
point where their memory would be wrapped; on a Vulkan device that is refused by name. Element
types, contiguity and the arguments they belong to are checked first, with errors naming them.
(The real PyTorch/CuPy runs are test_cuda.py, on the GPU machine.) A process of its own: the
stand-in replaces `torch` in sys.modules."""
import sys
import types

import numpy as np
import pytest

import libtune
from kernels import FAST, saxpy


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name

    def __hash__(self):
        return id(self)


def install_fake_torch():
    if "torch" in sys.modules and not getattr(sys.modules["torch"], "FAKE", False):
        pytest.skip("the real PyTorch is imported: test_cuda.py covers it")
    torch = types.ModuleType("torch")
    torch.FAKE = True
    c = types.ModuleType("torch._C")
    for n in ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32",
              "int64", "bool", "complex64"):
        setattr(torch, n, FakeDtype(n))
    c._cuda_getCurrentRawStream = lambda device: 0x1234
    torch._C = c

    class Tensor:
        is_cuda = True

        def __init__(self, dtype, shape, contiguous=True):
            self.dtype, self.shape, self.contiguous = dtype, shape, contiguous

        def is_contiguous(self):
            return self.contiguous

        def data_ptr(self):
            return 0x7F0000000000

        def get_device(self):
            return 0

    torch.Tensor = Tensor
    sys.modules["torch"], sys.modules["torch._C"] = torch, c
    return torch


class CudaArray:
    """What CuPy or Numba export (interface version 3, with the producer's stream)."""

    def __init__(self, typestr="<f4", shape=(10,), strides=None):
        self.__cuda_array_interface__ = {"typestr": typestr, "shape": shape, "strides": strides,
                                         "data": (0x7F0000000000, False), "version": 3,
                                         "stream": 1}


def test_torch_tensors_are_read_and_checked(vulkan_device):
    torch = install_fake_torch()
    tuner = libtune.Tuner(saxpy(), **FAST)
    y = np.zeros(10, np.float32)
    with pytest.raises(libtune.TuneError, match="CUDA memory given to a vulkan device") as e:
        tuner(vulkan_device, torch.Tensor(torch.float32, (10,)), y, 1.0, 10)
    assert e.value.code == "invalid_argument"
    with pytest.raises(TypeError, match="argument 'x': dtype float64 does not match the declared float32"):
        tuner(vulkan_device, torch.Tensor(torch.float64, (10,)), y, 1.0, 10)
    with pytest.raises(TypeError, match="argument 'y': unsupported dtype 'torch.complex64'"):
        tuner(vulkan_device, y, torch.Tensor(torch.complex64, (10,)), 1.0, 10)
    with pytest.raises(ValueError, match="argument 'x': the tensor is not contiguous"):
        tuner(vulkan_device, torch.Tensor(torch.float32, (10,), contiguous=False), y, 1.0, 10)


def test_cuda_array_interface_is_read_and_checked(vulkan_device):
    tuner = libtune.Tuner(saxpy(), **FAST)
    y = np.zeros(10, np.float32)
    with pytest.raises(libtune.TuneError, match="CUDA memory given to a vulkan device"):
        tuner(vulkan_device, CudaArray(), y, 1.0, 10)
    with pytest.raises(TypeError, match="argument 'x': unsupported dtype '<c8'"):
        tuner(vulkan_device, CudaArray("<c8"), y, 1.0, 10)
    with pytest.raises(TypeError, match="argument 'x': dtype int32 does not match"):
        tuner(vulkan_device, CudaArray("<i4"), y, 1.0, 10)
    with pytest.raises(ValueError, match="argument 'x': the tensor is not contiguous"):
        tuner(vulkan_device, CudaArray(shape=(10, 2), strides=(4, 40)), y, 1.0, 10)
    with pytest.raises(ValueError, match="argument 'x': the array is empty"):
        tuner(vulkan_device, CudaArray(shape=(0,)), y, 1.0, 10)
