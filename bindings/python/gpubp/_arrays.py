"""Arrays in and out: the pointer, shape, dtype and memory space of whatever the user passes.

Accepted, in this order of preference:

1. NumPy arrays (and subclasses): host memory;
2. anything with ``__cuda_array_interface__`` (CuPy, Numba, CUDA torch tensors): GPU memory.
   Version 3's ``stream`` is honoured: the package synchronises on it before libgpubp uses the
   pointer;
3. anything with ``__dlpack__`` / ``__dlpack_device__`` (torch CPU tensors, JAX, ...): host memory
   for ``kDLCPU``, ``kDLCUDAHost`` (pinned) and ``kDLCUDAManaged`` (libgpubp counts managed memory
   as host, as ADIOS2 does), GPU memory for ``kDLCUDA``; CUDA producers are asked for the data on
   the legacy default stream (``stream=1``), which is then synchronised;
4. anything with the buffer protocol (``bytearray``, ``array.array``, ``memoryview``): host memory.

The memory space always comes from the array's own description: nothing is guessed from the
pointer. Only C-contiguous (row-major, dense) arrays are accepted; ``copy=True`` makes a
contiguous copy instead of raising :class:`NotContiguousError` (when writing only: a read must
fill the caller's own memory).
"""

import ctypes
from ctypes import POINTER, Structure, c_int, c_int64, c_uint8, c_uint16, c_uint32, c_uint64

import numpy as np

from . import _cuda
from .lowlevel import MemorySpace


class NotContiguousError(ValueError):
    """The array is not C-contiguous (pass copy=True to write a contiguous copy)."""


class ArrayInfo:
    """What libgpubp needs of an array: address, shape, dtype, memory space.

    ``keep`` holds the objects that must stay alive while the address is used."""

    __slots__ = ("ptr", "shape", "dtype", "space", "readonly", "keep", "obj")

    def __init__(self, ptr, shape, dtype, space, readonly, keep, obj):
        self.ptr = ptr
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.space = space
        self.readonly = readonly
        self.keep = keep
        self.obj = obj

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize


def _c_contiguous(shape, strides, itemsize):
    """Whether byte strides describe a dense row-major layout (size-1 dims may have any)."""
    if strides is None:
        return True
    if any(d == 0 for d in shape):
        return True
    expect = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expect:
            return False
        expect *= d
    return True


def _describe(obj):
    return type(obj).__module__.split(".")[0] + "." + type(obj).__name__


def _not_contiguous(obj, writing):
    hint = (" Pass copy=True to write a contiguous copy, or make one (numpy.ascontiguousarray, "
            "cupy.ascontiguousarray, tensor.contiguous())." if writing else
            " A read fills the caller's buffer in place, so it must be contiguous.")
    return NotContiguousError("%s array is not C-contiguous (row-major and dense).%s"
                              % (_describe(obj), hint))


# --- NumPy and the buffer protocol ------------------------------------------------------------

def _from_numpy(arr, obj, writing, copy):
    if not arr.dtype.isnative:
        if not (writing and copy):
            raise TypeError("%s array has dtype %s, not in the machine's byte order%s"
                            % (_describe(obj), arr.dtype.str,
                               " (pass copy=True to convert it)" if writing else ""))
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.c_contiguous:
        if not (writing and copy):
            raise _not_contiguous(obj, writing)
        arr = np.ascontiguousarray(arr)
    return ArrayInfo(arr.ctypes.data, arr.shape, arr.dtype, MemorySpace.HOST,
                     not arr.flags.writeable, arr, obj)


# --- __cuda_array_interface__ -----------------------------------------------------------------

def _contiguous_device_copy(obj):
    """A C-contiguous copy of a device array, made by its own library."""
    mod = type(obj).__module__.split(".")[0]
    if mod == "cupy":
        import cupy
        return cupy.ascontiguousarray(obj)
    if hasattr(obj, "contiguous"):          # torch.Tensor
        return obj.contiguous()
    raise TypeError("copy=True: do not know how to make a contiguous copy of %s on the device; "
                    "make one with its own library" % _describe(obj))


def _from_cai(obj, writing, copy):
    cai = obj.__cuda_array_interface__
    shape = tuple(cai["shape"])
    dtype = np.dtype(cai["typestr"])
    ptr, readonly = cai["data"]
    if cai.get("mask") is not None:
        raise TypeError("%s: masked __cuda_array_interface__ arrays are not supported"
                        % _describe(obj))
    if not _c_contiguous(shape, cai.get("strides"), dtype.itemsize):
        if not (writing and copy):
            raise _not_contiguous(obj, writing)
        return _from_cai(_contiguous_device_copy(obj), writing, False)
    if not dtype.isnative:
        raise TypeError("%s array has dtype %s, not in the machine's byte order"
                        % (_describe(obj), dtype.str))
    # Version 3: synchronise on the producer's stream before using the pointer.
    if cai.get("version", 0) >= 3 or "stream" in cai:
        _cuda.wait_stream(cai.get("stream"))
    return ArrayInfo(ptr or 0, shape, dtype, MemorySpace.GPU, bool(readonly), obj, obj)


# --- DLPack -----------------------------------------------------------------------------------

class _DLDevice(Structure):
    _fields_ = [("device_type", c_int), ("device_id", c_int)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", c_int),
                ("dtype", _DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class _DLManagedTensorVersioned(Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", c_uint64), ("dl_tensor", _DLTensor)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_FLAG_READ_ONLY = 1
_DL_CODES = {0: "i", 1: "u", 2: "f", 5: "c"}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def _dl_space(dev_type):
    if dev_type == _DL_CUDA:
        return MemorySpace.GPU
    if dev_type in (_DL_CPU, _DL_CUDA_HOST, _DL_CUDA_MANAGED):
        return MemorySpace.HOST
    raise TypeError("DLPack device type %d is not supported by libgpubp (CPU, CUDA, CUDA host "
                    "and CUDA managed memory are)" % dev_type)


def _from_dlpack(obj, writing, copy):
    dev_type, _dev_id = obj.__dlpack_device__()
    dev_type = int(dev_type)
    space = _dl_space(dev_type)
    if dev_type in (_DL_CUDA, _DL_CUDA_MANAGED):
        capsule = obj.__dlpack__(stream=1)  # ordered on the legacy default stream ...
        _cuda.wait_stream(1)                # ... which is then complete
    else:
        capsule = obj.__dlpack__()
    name = _get_name(capsule)
    if name == b"dltensor":
        mt = _DLManagedTensor.from_address(_get_pointer(capsule, name))
        readonly = False
    elif name == b"dltensor_versioned":
        mt = _DLManagedTensorVersioned.from_address(_get_pointer(capsule, name))
        readonly = bool(mt.flags & _DL_FLAG_READ_ONLY)
    else:
        raise TypeError("%s.__dlpack__() returned a capsule named %r" % (_describe(obj), name))
    t = mt.dl_tensor
    if t.dtype.lanes != 1 or t.dtype.code not in _DL_CODES:
        raise TypeError("%s: DLPack dtype (code %d, %d bits, %d lanes) has no gpubp type"
                        % (_describe(obj), t.dtype.code, t.dtype.bits, t.dtype.lanes))
    dtype = np.dtype("%s%d" % (_DL_CODES[t.dtype.code], t.dtype.bits // 8))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (None if not t.strides else
               tuple(t.strides[i] * dtype.itemsize for i in range(t.ndim)))
    if not _c_contiguous(shape, strides, dtype.itemsize):
        if not (writing and copy):
            raise _not_contiguous(obj, writing)
        if hasattr(obj, "contiguous"):
            return _from_dlpack(obj.contiguous(), writing, False)
        raise TypeError("copy=True: do not know how to make a contiguous copy of %s"
                        % _describe(obj))
    ptr = (t.data or 0) + t.byte_offset
    # The capsule stays unconsumed and alive with the info: its destructor frees the tensor.
    return ArrayInfo(ptr, shape, dtype, space, readonly, (obj, capsule), obj)


# --- entry point ------------------------------------------------------------------------------

def array_info(obj, writing, copy=False):
    """Describes `obj` for a put (writing=True) or a get into it (writing=False).

    Raises TypeError for objects that are not arrays, NotContiguousError for non-contiguous ones
    (unless writing with copy=True)."""
    if isinstance(obj, np.ndarray):
        return _from_numpy(obj, obj, writing, copy)
    try:
        has_cai = hasattr(obj, "__cuda_array_interface__")
    except Exception:  # some producers raise other errors for host tensors
        has_cai = False
    if has_cai:
        return _from_cai(obj, writing, copy)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj, writing, copy)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise TypeError("%s is not an array: expected a NumPy array, an object with "
                        "__cuda_array_interface__ or __dlpack__, or a buffer"
                        % _describe(obj)) from None
    return _from_numpy(np.asarray(mv), obj, writing, copy)
