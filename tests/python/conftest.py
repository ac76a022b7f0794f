"""Shared fixtures of the Python package tests.

Device backends for the GPU cases (test_gpu_sequences.py): each makes device arrays, copies them to
and from NumPy, and names the open parameters its files need.
  sim    the simulated device of libgpubp ("device=simulated"), through libgpubp_pysim's hook;
         runs anywhere (ctest python_simdevice);
  cupy   CuPy arrays on a CUDA device, with a CUDA build of libgpubp;
  torch  CUDA torch tensors, with a CUDA build of libgpubp.
A backend that cannot run here is skipped with the reason.
"""

import ctypes
import os
import sys

import numpy as np
import pytest

# GPUBP_TEST_INSTALLED=1 (.ci/run's wheel stage): the package under test is the one pip installed,
# never the source tree's; otherwise the source tree's bindings/python comes first.
INSTALLED = os.environ.get("GPUBP_TEST_INSTALLED") == "1"
SOURCE_PACKAGE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "bindings",
                                              "python"))
if not INSTALLED:
    sys.path.insert(0, SOURCE_PACKAGE)

import gpubp  # noqa: E402

if INSTALLED and os.path.abspath(gpubp.__file__).startswith(SOURCE_PACKAGE + os.sep):
    raise RuntimeError("GPUBP_TEST_INSTALLED=1 but gpubp was imported from the source tree (%s): "
                       "unset PYTHONPATH" % gpubp.__file__)


@pytest.fixture
def tmp_bp(tmp_path):
    """A function giving fresh dataset paths in a temporary folder."""
    n = [0]

    def make(name=None):
        n[0] += 1
        return str(tmp_path / (name or "t%d.bp" % n[0]))
    return make


# --- the simulated device --------------------------------------------------------------------

class SimDeviceArray:
    """A C-ordered array in simulated-device memory, exposing __cuda_array_interface__ v3."""

    def __init__(self, lib, shape, dtype, stream=None):
        self._lib = lib
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.ptr = lib.gpubp_test_sim_alloc(max(self.nbytes, 1))
        assert self.ptr
        self.stream = stream
        self.strides = None

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "version": 3, "strides": self.strides, "stream": self.stream}

    def host(self):
        """The bytes seen as a NumPy array (simulated device memory is host memory)."""
        raw = (ctypes.c_char * max(self.nbytes, 1)).from_address(self.ptr)
        return np.frombuffer(raw, dtype=self.dtype, count=self.nbytes // self.dtype.itemsize
                             ).reshape(self.shape).copy()

    def fill(self, arr):
        arr = np.ascontiguousarray(arr, dtype=self.dtype)
        assert arr.nbytes == self.nbytes
        ctypes.memmove(self.ptr, arr.ctypes.data, self.nbytes)

    def __del__(self):
        if self.ptr:
            self._lib.gpubp_test_sim_free(self.ptr)
            self.ptr = None


class SimBackend:
    name = "sim"
    params = "device=simulated"

    def __init__(self):
        lib = gpubp.lowlevel.lib()
        if not hasattr(lib, "gpubp_test_sim_alloc"):
            pytest.skip("simulated device: the loaded library has no test hook (these cases run "
                        "in ctest python_simdevice, with GPUBP_LIBRARY=libgpubp_pysim.so)")
        lib.gpubp_test_sim_alloc.restype = ctypes.c_void_p
        lib.gpubp_test_sim_alloc.argtypes = [ctypes.c_size_t]
        lib.gpubp_test_sim_free.restype = None
        lib.gpubp_test_sim_free.argtypes = [ctypes.c_void_p]
        self.lib = lib

    def zeros(self, shape, dtype):
        a = SimDeviceArray(self.lib, shape, dtype)
        a.fill(np.zeros(shape, dtype))
        return a

    def from_numpy(self, arr):
        a = SimDeviceArray(self.lib, arr.shape, arr.dtype)
        a.fill(arr)
        return a

    def to_numpy(self, a):
        return a.host()


def _unavailable(reason):
    """Skips a GPU backend that cannot run here, or fails when GPUBP_REQUIRE_GPU=1 (run_gpu.sh:
    on the GPU machine a skipped case would hide a broken setup)."""
    if os.environ.get("GPUBP_REQUIRE_GPU") == "1":
        pytest.fail("GPUBP_REQUIRE_GPU=1 but " + reason)
    pytest.skip(reason)


def _import(name, what):
    try:
        return __import__(name)
    except ImportError as e:
        _unavailable("%s is not installed (%s)" % (what, e))


def _need_cuda_library():
    if not gpubp.has_cuda():
        _unavailable("libgpubp at %s was built without CUDA (-DGPUBP_USE_CUDA=ON)"
                     % gpubp.library_path())


class CupyBackend:
    name = "cupy"
    params = None

    def __init__(self):
        cp = _import("cupy", "CuPy")
        try:
            n = cp.cuda.runtime.getDeviceCount()
        except Exception as e:  # no driver, no device
            _unavailable("CuPy: no CUDA device (%s)" % e)
        if n < 1:
            _unavailable("CuPy: no CUDA device")
        _need_cuda_library()
        self.cp = cp

    def zeros(self, shape, dtype):
        return self.cp.zeros(shape, dtype=dtype)

    def from_numpy(self, arr):
        return self.cp.asarray(arr)

    def to_numpy(self, a):
        return self.cp.asnumpy(a)

    def stream(self):
        """A non-blocking stream and the context that makes it current."""
        st = self.cp.cuda.Stream(non_blocking=True)
        return st, st


class TorchBackend:
    name = "torch"
    params = None

    def __init__(self):
        torch = _import("torch", "PyTorch")
        if not torch.cuda.is_available():
            _unavailable("PyTorch: no CUDA device")
        _need_cuda_library()
        self.torch = torch

    def _dtype(self, dtype):
        return getattr(self.torch, np.dtype(dtype).name)

    def zeros(self, shape, dtype):
        return self.torch.zeros(shape, dtype=self._dtype(dtype), device="cuda")

    def from_numpy(self, arr):
        return self.torch.from_numpy(np.ascontiguousarray(arr)).to("cuda")

    def to_numpy(self, a):
        return a.cpu().numpy()

    def stream(self):
        st = self.torch.cuda.Stream()
        return st, self.torch.cuda.stream(st)


BACKENDS = {"sim": SimBackend, "cupy": CupyBackend, "torch": TorchBackend}


@pytest.fixture(params=sorted(BACKENDS))
def device(request):
    """A device backend (skipped when it cannot run here)."""
    return BACKENDS[request.param]()
