"""dtype <-> gpubp type mapping."""

import numpy as np

from .lowlevel import Type

# Every numeric gpubp type and its NumPy dtype (native byte order).
TYPE_TO_DTYPE = {
    Type.INT8: np.dtype(np.int8),
    Type.INT16: np.dtype(np.int16),
    Type.INT32: np.dtype(np.int32),
    Type.INT64: np.dtype(np.int64),
    Type.UINT8: np.dtype(np.uint8),
    Type.UINT16: np.dtype(np.uint16),
    Type.UINT32: np.dtype(np.uint32),
    Type.UINT64: np.dtype(np.uint64),
    Type.FLOAT: np.dtype(np.float32),
    Type.DOUBLE: np.dtype(np.float64),
    Type.FLOAT_COMPLEX: np.dtype(np.complex64),
    Type.DOUBLE_COMPLEX: np.dtype(np.complex128),
    # C++ `char` variables written by ADIOS2 (read only): signed bytes.
    Type.CHAR: np.dtype(np.int8),
}

# long double: the x87 80-bit format in 16 bytes (BP4 type 7, as ADIOS2 writes it on x86-64),
# which is numpy.longdouble on x86-64 Linux. Elsewhere numpy.longdouble is another format and
# long double data has no dtype here (read it through the low-level layer's 16-byte elements).
LONG_DOUBLE_NATIVE = np.dtype(np.longdouble).itemsize == 16 and np.finfo(np.longdouble).nmant == 63
if LONG_DOUBLE_NATIVE:
    TYPE_TO_DTYPE[Type.LONG_DOUBLE] = np.dtype(np.longdouble)

_KIND_SIZE_TO_TYPE = {
    ("i", 1): Type.INT8, ("i", 2): Type.INT16, ("i", 4): Type.INT32, ("i", 8): Type.INT64,
    ("u", 1): Type.UINT8, ("u", 2): Type.UINT16, ("u", 4): Type.UINT32, ("u", 8): Type.UINT64,
    ("f", 4): Type.FLOAT, ("f", 8): Type.DOUBLE,
    ("c", 8): Type.FLOAT_COMPLEX, ("c", 16): Type.DOUBLE_COMPLEX,
}
if LONG_DOUBLE_NATIVE:
    _KIND_SIZE_TO_TYPE[("f", 16)] = Type.LONG_DOUBLE


def gpubp_type(dtype):
    """The gpubp type of a NumPy dtype (or anything np.dtype() takes); TypeError if none fits."""
    dt = np.dtype(dtype)
    if dt.kind in "US":
        return Type.STRING
    t = _KIND_SIZE_TO_TYPE.get((dt.kind, dt.itemsize))
    if t is None:
        hint = ""
        if dt.kind == "b":
            hint = " (BP4 has no boolean type: write it as uint8)"
        elif dt.kind == "f":
            hint = " (convert to float32 or float64%s)" % (
                ", or numpy.longdouble on x86-64" if not LONG_DOUBLE_NATIVE else "")
        raise TypeError("no gpubp type for dtype %s%s" % (dt, hint))
    if not dt.isnative:
        raise TypeError("dtype %s is not in the machine's byte order" % dt.str)
    return t


def dtype_of(t):
    """The NumPy dtype of a numeric gpubp type; TypeError for strings."""
    try:
        return TYPE_TO_DTYPE[Type(t)]
    except (KeyError, ValueError):
        raise TypeError("gpubp type %r has no NumPy dtype" % (t,)) from None
