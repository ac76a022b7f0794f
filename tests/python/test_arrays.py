"""How arrays are described to libgpubp: __cuda_array_interface__ (with its v3 stream), DLPack
devices, contiguity. Runs without a GPU: device arrays are stand-ins whose pointers are never
dereferenced here (the simulated-device and real-GPU cases are in test_gpu_sequences.py)."""

import numpy as np
import pytest

import gpubp
from gpubp import MemorySpace, Status
from gpubp import _arrays, _cuda


class FakeCAI:
    def __init__(self, shape=(2, 3), typestr="<f4", ptr=0x1000, **extra):
        self.__cuda_array_interface__ = dict(
            {"shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3,
             "strides": None}, **extra)


@pytest.fixture
def synced(monkeypatch):
    calls = []
    monkeypatch.setattr(_cuda, "synchronize", calls.append)
    return calls


def test_cai_is_gpu_memory_with_its_shape_and_dtype(synced):
    info = _arrays.array_info(FakeCAI((4, 5), "<i8", ptr=0xabc0, stream=None), writing=True)
    assert (info.ptr, info.shape, info.dtype, info.space) == \
        (0xabc0, (4, 5), np.dtype(np.int64), MemorySpace.GPU)
    assert info.nbytes == 160
    assert synced == []


def test_cai_v3_stream_is_synchronised_before_use(synced):
    _arrays.array_info(FakeCAI(stream=0x5555), writing=True)
    _arrays.array_info(FakeCAI(stream=1), writing=False)
    _arrays.array_info(FakeCAI(stream=2), writing=False)
    assert synced == [0x5555, 1, 2]


def test_cai_stream_zero_is_refused(synced):
    with pytest.raises(ValueError, match="stream 0"):
        _arrays.array_info(FakeCAI(stream=0), writing=True)


def test_cai_v2_without_stream(synced):
    obj = FakeCAI()
    obj.__cuda_array_interface__["version"] = 2
    _arrays.array_info(obj, writing=True)
    assert synced == []


def test_cai_strides(synced):
    ok = FakeCAI((2, 3), "<f8", strides=(24, 8))
    assert _arrays.array_info(ok, writing=True).shape == (2, 3)
    ones = FakeCAI((1, 3), "<f8", strides=(999, 8))  # a size-1 dim may have any stride
    assert _arrays.array_info(ones, writing=True).shape == (1, 3)
    transposed = FakeCAI((3, 2), "<f8", strides=(8, 24))
    with pytest.raises(gpubp.NotContiguousError, match="not C-contiguous"):
        _arrays.array_info(transposed, writing=True)
    with pytest.raises(TypeError, match="contiguous copy"):
        _arrays.array_info(transposed, writing=True, copy=True)  # no library to copy with
    with pytest.raises(gpubp.NotContiguousError):
        _arrays.array_info(transposed, writing=False)


def test_cai_mask_and_readonly(synced):
    with pytest.raises(TypeError, match="masked"):
        _arrays.array_info(FakeCAI(mask=FakeCAI()), writing=True)
    ro = FakeCAI()
    ro.__cuda_array_interface__["data"] = (0x1000, True)
    assert _arrays.array_info(ro, writing=False).readonly


def test_gpu_write_without_cuda_is_a_clear_error(tmp_bp, synced):
    if gpubp.has_cuda():
        pytest.skip("this library has CUDA")
    with gpubp.Stream(tmp_bp(), "w") as s:
        with pytest.raises(gpubp.Error) as e:
            s.write("g", FakeCAI(stream=7))
        assert e.value.status == Status.ERR_NOT_SUPPORTED
        assert "GPU" in e.value.message
    assert synced == [7]


class FakeDLPack:
    """NumPy's own capsule, presented as coming from another device."""

    def __init__(self, arr, device_type):
        self.arr = arr
        self.device_type = device_type
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.arr.__dlpack__()

    def __dlpack_device__(self):
        return (self.device_type, 0)


@pytest.fixture
def need_dlpack():
    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("numpy without DLPack")


@pytest.mark.parametrize("device_type,space", [(1, MemorySpace.HOST), (2, MemorySpace.GPU),
                                               (3, MemorySpace.HOST), (13, MemorySpace.HOST)])
def test_dlpack_devices(need_dlpack, synced, device_type, space):
    arr = np.arange(12, dtype=np.uint16).reshape(3, 4)
    obj = FakeDLPack(arr, device_type)
    info = _arrays.array_info(obj, writing=True)
    assert (info.ptr, info.shape, info.dtype, info.space) == \
        (arr.ctypes.data, (3, 4), np.dtype(np.uint16), space)
    if device_type in (2, 13):  # CUDA producers: legacy default stream, then synchronised
        assert obj.streams == [1] and synced == [1]
    else:
        assert obj.streams == [None] and synced == []


def test_dlpack_unsupported_device_and_strides(need_dlpack):
    with pytest.raises(TypeError, match="device type 10"):
        _arrays.array_info(FakeDLPack(np.zeros(3), 10), writing=True)
    arr = np.zeros((4, 4))[:, ::2]
    with pytest.raises((gpubp.NotContiguousError, BufferError)):
        _arrays.array_info(FakeDLPack(arr, 1), writing=True)


def test_dlpack_offset_views(need_dlpack):
    arr = np.arange(10, dtype=np.int32)
    info = _arrays.array_info(FakeDLPack(arr[3:7], 1), writing=True)
    assert info.ptr == arr.ctypes.data + 12 and info.shape == (4,)
