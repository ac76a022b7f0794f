"""The C API of libgpubp, one function for one function.

Every ``gpubp_*`` function of ``gpubp.h`` has a wrapper of the same name here. The rules that turn
the C signature into the Python one are the same everywhere:

- out-parameters become return values (a tuple when there are several);
- a negative status raises :class:`Error` carrying the status and ``gpubp_last_error()``; the
  positive statuses of ``gpubp_begin_step`` (``END_OF_STREAM``, ``NOT_READY``) are returned;
- handles (``gpubp_file *``, ``gpubp_variable *``) are plain integers; a variable handle lives
  until ``gpubp_close`` of its file, exactly as in C;
- a ``(ndims, dims)`` pair is one sequence (its length is ``ndims``); ``None`` is ``NULL``;
- data pointers are integers (addresses), ``None``, ``bytes`` or ctypes objects: this layer checks
  nothing about buffers, exactly as the C API does not. :mod:`gpubp` (the ``Stream`` class) is the
  layer that knows arrays;
- strings go in as ``str`` (UTF-8) and come out as ``str``.

The enumerations are :class:`enum.IntEnum` classes whose values are those of the header.
"""

import ctypes
import enum
from ctypes import (POINTER, byref, c_char_p, c_int, c_size_t, c_uint, c_void_p)

from . import _loader


class Status(enum.IntEnum):
    OK = 0
    END_OF_STREAM = 1
    NOT_READY = 2
    ERR_INVALID_ARG = -1
    ERR_NOT_FOUND = -2
    ERR_INVALID_SELECTION = -3
    ERR_INVALID_DIMS = -4
    ERR_INVALID_STEP = -5
    ERR_WRONG_MODE = -6
    ERR_TYPE_MISMATCH = -7
    ERR_FORMAT = -8
    ERR_NOT_BP4 = -9
    ERR_BP5 = -10
    ERR_IO = -11
    ERR_NOMEM = -12
    ERR_NOT_SUPPORTED = -13
    ERR_DEVICE = -14
    ERR_MEMORY_SPACE = -15
    ERR_PARAM = -16
    ERR_EXISTS = -17
    ERR_CODEC = -18
    ERR_UNSUPPORTED_TYPE = -19
    ERR_INTERNAL = -99


class Type(enum.IntEnum):
    INT8 = 0
    INT16 = 1
    INT32 = 2
    INT64 = 4
    FLOAT = 5
    DOUBLE = 6
    LONG_DOUBLE = 7
    STRING = 9
    FLOAT_COMPLEX = 10
    DOUBLE_COMPLEX = 11
    STRING_ARRAY = 12
    UINT8 = 50
    UINT16 = 51
    UINT32 = 52
    UINT64 = 54
    CHAR = 55
    STRUCT = 56  # read only: ADIOS2 BP5 struct variables (gpubp_variable_struct)


class Mode(enum.IntEnum):
    WRITE = 0
    APPEND = 1
    READ = 2
    READ_RANDOM_ACCESS = 3


class MemorySpace(enum.IntEnum):
    DETECT = 0
    HOST = 1
    GPU = 2


class Launch(enum.IntEnum):
    SYNC = 0
    DEFERRED = 1


class ShapeKind(enum.IntEnum):
    GLOBAL_VALUE = 0
    GLOBAL_ARRAY = 1
    LOCAL_VALUE = 2
    LOCAL_ARRAY = 3
    JOINED_ARRAY = 4


# ADIOS2's LocalValueDim: the shape (LOCAL_VALUE_DIM,) defines a local value.
LOCAL_VALUE_DIM = (1 << (8 * ctypes.sizeof(c_size_t))) - 3

FEATURE_CUDA = 1
FEATURE_MPI = 2
FEATURE_ZLIB = 4


class Error(Exception):
    """A libgpubp call failed.

    ``status`` is the C status (an int, a :class:`Status` value when known), ``message`` the
    library's message from ``gpubp_last_error()``, ``errno`` the value of ``gpubp_last_errno()``
    (the system or GPU runtime error behind ``ERR_IO`` / ``ERR_DEVICE``, else 0)."""

    def __init__(self, status, message, errno=0, function=None):
        try:
            status = Status(status)
        except ValueError:
            pass
        self.status = status
        self.message = message
        self.errno = errno
        self.function = function
        name = status.name if isinstance(status, Status) else str(int(status))
        text = message or gpubp_strerror(int(status))
        super().__init__("%s [%s]" % (text, name))


_S = c_size_t
_PS = POINTER(c_size_t)
_P = c_void_p
_PP = POINTER(c_void_p)
_NAMES = POINTER(c_char_p)

# name: (restype, argtypes). Statuses are c_int unless stated.
_PROTOTYPES = {
    "gpubp_version": (c_char_p, []),
    "gpubp_features": (c_uint, []),
    "gpubp_codec_versions": (c_char_p, []),
    "gpubp_strerror": (c_char_p, [c_int]),
    "gpubp_last_error": (c_char_p, []),
    "gpubp_last_errno": (c_int, []),
    "gpubp_open": (c_int, [_PP, c_char_p, c_int, c_char_p]),
    "gpubp_close": (c_int, [_P]),
    "gpubp_begin_step": (c_int, [_P]),
    "gpubp_end_step": (c_int, [_P]),
    "gpubp_steps": (c_int, [_P, _PS]),
    "gpubp_current_step": (c_int, [_P, _PS]),
    "gpubp_define_variable": (c_int, [_PP, _P, c_char_p, c_int, _S, _PS, _PS, _PS]),
    "gpubp_inquire_variable": (c_int, [_PP, _P, c_char_p]),
    "gpubp_variable_name": (c_int, [_P, POINTER(c_char_p)]),
    "gpubp_set_shape": (c_int, [_P, _S, _PS]),
    "gpubp_set_selection": (c_int, [_P, _S, _PS, _PS]),
    "gpubp_set_block_selection": (c_int, [_P, _S]),
    "gpubp_set_step_selection": (c_int, [_P, _S, _S]),
    "gpubp_set_memory_space": (c_int, [_P, c_int]),
    "gpubp_variable_memory_space": (c_int, [_P, POINTER(c_int)]),
    "gpubp_variable_shape": (c_int, [_P, c_int, _PS]),
    "gpubp_variable_ndims": (c_int, [_P, _PS]),
    "gpubp_variable_type": (c_int, [_P, POINTER(c_int)]),
    "gpubp_variable_shape_kind": (c_int, [_P, POINTER(c_int)]),
    "gpubp_variable_steps": (c_int, [_P, _PS]),
    "gpubp_variable_blocks": (c_int, [_P, _S, _PS]),
    "gpubp_variable_dataset_step": (c_int, [_P, _S, _PS]),
    "gpubp_variable_minmax": (c_int, [_P, _P, _P]),
    "gpubp_variable_minmax_missing": (c_int, [_P, POINTER(c_int)]),
    "gpubp_variable_block_writer": (c_int, [_P, _S, _S, _PS]),
    "gpubp_variable_joined_dim": (c_int, [_P, _PS]),
    "gpubp_variable_block_info": (c_int, [_P, _S, _S, _PS, _PS, _P, _P]),
    "gpubp_selection_size": (c_int, [_P, _PS]),
    "gpubp_variable_element_size": (c_int, [_P, _PS]),
    "gpubp_variable_expression": (c_int, [_P, POINTER(c_char_p)]),
    "gpubp_variable_block_operator": (c_int, [_P, _S, _S, c_char_p, _S]),
    "gpubp_variable_struct": (c_int, [_P, POINTER(c_char_p), _PS, _PS]),
    "gpubp_variable_struct_field": (c_int, [_P, _S, POINTER(c_char_p), POINTER(c_int), _PS, _PS]),
    "gpubp_set_memory_selection": (c_int, [_P, _S, _PS, _PS]),
    "gpubp_available_variables": (c_int, [_P, _PS, POINTER(_NAMES)]),
    "gpubp_put": (c_int, [_P, _P, _P, c_int]),
    "gpubp_get": (c_int, [_P, _P, _P, c_int]),
    "gpubp_perform_puts": (c_int, [_P]),
    "gpubp_perform_gets": (c_int, [_P]),
    "gpubp_define_attribute": (c_int, [_P, c_char_p, c_int, _P, _S]),
    "gpubp_define_variable_attribute": (c_int, [_P, c_char_p, c_char_p, c_int, _P, _S]),
    "gpubp_available_attributes": (c_int, [_P, _PS, POINTER(_NAMES)]),
    "gpubp_inquire_attribute": (c_int, [_P, c_char_p, POINTER(c_int), _PS, POINTER(c_int)]),
    "gpubp_attribute_data": (c_int, [_P, c_char_p, _P]),
    "gpubp_attribute_string": (c_int, [_P, c_char_p, _S, POINTER(c_char_p)]),
    "gpubp_type_size": (c_size_t, [c_int]),
    "gpubp_type_name": (c_char_p, [c_int]),
    "gpubp_long_double_from_double": (c_int, [_P, ctypes.c_double]),
    "gpubp_long_double_to_double": (c_int, [_P, POINTER(ctypes.c_double)]),
    "gpubp_variable_add_operation": (c_int, [_P, c_char_p, c_char_p]),
    # <gpubp/cuda.h>
    "gpubp_set_stream": (c_int, [_P, _P]),
}

_c = None


def lib():
    """The ctypes.CDLL of libgpubp with every prototype declared (loaded on first use)."""
    global _c
    if _c is None:
        cdll = _loader.load()
        for name, (res, args) in _PROTOTYPES.items():
            try:
                fn = getattr(cdll, name)
            except AttributeError:  # an older library: the call says so when made
                continue
            fn.restype = res
            fn.argtypes = args
        _c = cdll
    return _c


def _fn(name):
    try:
        return getattr(lib(), name)
    except AttributeError:
        raise Error(Status.ERR_NOT_SUPPORTED, "%s is not in the libgpubp %s loaded from %s"
                    % (name, gpubp_version(), library_path()), 0, name) from None


def library_path():
    """Where the library was loaded from."""
    lib()
    return _loader.path()


def _enc(s):
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8")


def _dec(b):
    return None if b is None else b.decode("utf-8", "surrogateescape")


def _check(rc, fn):
    if rc < 0:
        c = lib()
        raise Error(rc, _dec(c.gpubp_last_error()), c.gpubp_last_errno(), fn)
    return rc


def _size_out(name, *args):
    """Calls the C function `name` with args and a size_t out-parameter last; returns its value."""
    n = c_size_t()
    _check(getattr(lib(), name)(*args, byref(n)), name)
    return n.value


def _dims(seq):
    """(ndims, size_t array or None) of a sequence of ints or None."""
    if seq is None:
        return 0, None
    vals = [int(x) for x in seq]
    for x in vals:
        if x < 0:
            raise ValueError("dimensions must not be negative: %r" % (tuple(seq),))
    return len(vals), (c_size_t * len(vals))(*vals) if vals else None


def _ndims(*seqs):
    for s in seqs:
        if s is not None:
            return len(s)
    return 0


def _names(n, arr):
    return [_dec(arr[i]) for i in range(n.value)]


# --- library ---------------------------------------------------------------------------------

def gpubp_version():
    return _dec(lib().gpubp_version())


def gpubp_features():
    return lib().gpubp_features()


def gpubp_codec_versions():
    return _dec(_fn("gpubp_codec_versions")())


def gpubp_strerror(status):
    return _dec(lib().gpubp_strerror(int(status)))


def gpubp_last_error():
    return _dec(lib().gpubp_last_error())


def gpubp_last_errno():
    return lib().gpubp_last_errno()


# --- files and steps -------------------------------------------------------------------------

def gpubp_open(path, mode, params=None):
    """Returns the new file handle (release it with gpubp_close)."""
    out = c_void_p()
    _check(lib().gpubp_open(byref(out), _enc(path), int(mode), _enc(params)), "gpubp_open")
    return out.value


def gpubp_close(f):
    return _check(lib().gpubp_close(f), "gpubp_close")


def gpubp_begin_step(f):
    """Returns Status.OK, Status.END_OF_STREAM or Status.NOT_READY."""
    return Status(_check(lib().gpubp_begin_step(f), "gpubp_begin_step"))


def gpubp_end_step(f):
    return _check(lib().gpubp_end_step(f), "gpubp_end_step")


def gpubp_steps(f):
    return _size_out("gpubp_steps", f)


def gpubp_current_step(f):
    return _size_out("gpubp_current_step", f)


# --- variables -------------------------------------------------------------------------------

def gpubp_define_variable(f, name, type, shape=None, start=None, count=None):
    """ndims is the length of count (or shape); all None defines a single value."""
    nd = _ndims(count, shape, start)
    for s in (shape, start, count):
        if s is not None and len(s) != nd:
            raise ValueError("shape, start and count must have the same length")
    _, cs = _dims(shape)
    _, st = _dims(start)
    _, cc = _dims(count)
    out = c_void_p()
    _check(lib().gpubp_define_variable(byref(out), f, _enc(name), int(type), nd, cs, st, cc),
           "gpubp_define_variable")
    return out.value


def gpubp_inquire_variable(f, name):
    out = c_void_p()
    _check(lib().gpubp_inquire_variable(byref(out), f, _enc(name)), "gpubp_inquire_variable")
    return out.value


def gpubp_variable_name(v):
    s = c_char_p()
    _check(lib().gpubp_variable_name(v, byref(s)), "gpubp_variable_name")
    return _dec(s.value)


def gpubp_set_shape(v, shape):
    nd, cs = _dims(shape)
    return _check(lib().gpubp_set_shape(v, nd, cs), "gpubp_set_shape")


def gpubp_set_selection(v, start, count):
    """start may be None (local arrays: zeros)."""
    nd = _ndims(count, start)
    _, st = _dims(start)
    _, cc = _dims(count)
    return _check(lib().gpubp_set_selection(v, nd, st, cc), "gpubp_set_selection")


def gpubp_set_block_selection(v, block_id):
    return _check(lib().gpubp_set_block_selection(v, int(block_id)), "gpubp_set_block_selection")


def gpubp_set_step_selection(v, step_start, step_count):
    return _check(lib().gpubp_set_step_selection(v, int(step_start), int(step_count)),
                  "gpubp_set_step_selection")


def gpubp_set_memory_space(v, space):
    return _check(lib().gpubp_set_memory_space(v, int(space)), "gpubp_set_memory_space")


def gpubp_variable_memory_space(v):
    s = c_int()
    _check(lib().gpubp_variable_memory_space(v, byref(s)), "gpubp_variable_memory_space")
    return MemorySpace(s.value)


def gpubp_variable_ndims(v):
    return _size_out("gpubp_variable_ndims", v)


def gpubp_variable_shape(v, space):
    """The shape as a tuple, in the layout of `space` (see gpubp.h)."""
    nd = gpubp_variable_ndims(v)
    dims = (c_size_t * max(nd, 1))()
    _check(lib().gpubp_variable_shape(v, int(space), dims), "gpubp_variable_shape")
    return tuple(dims[i] for i in range(nd))


def gpubp_variable_type(v):
    t = c_int()
    _check(lib().gpubp_variable_type(v, byref(t)), "gpubp_variable_type")
    return _type(t.value)


def gpubp_variable_shape_kind(v):
    k = c_int()
    _check(lib().gpubp_variable_shape_kind(v, byref(k)), "gpubp_variable_shape_kind")
    return ShapeKind(k.value)


def gpubp_variable_steps(v):
    return _size_out("gpubp_variable_steps", v)


def gpubp_variable_blocks(v, step):
    return _size_out("gpubp_variable_blocks", v, int(step))


def gpubp_variable_dataset_step(v, step):
    return _size_out("gpubp_variable_dataset_step", v, int(step))


def _element_buffers(v):
    size = max(gpubp_type_size(gpubp_variable_type(v)), 1)
    return ctypes.create_string_buffer(size), ctypes.create_string_buffer(size)


def _element_value(v, buf):
    from ._types import dtype_of
    import numpy as np
    return np.frombuffer(buf.raw, dtype=dtype_of(gpubp_variable_type(v)))[0]


def gpubp_variable_minmax(v):
    """(min, max) as NumPy scalars of the variable's type."""
    lo, hi = _element_buffers(v)
    _check(lib().gpubp_variable_minmax(v, lo, hi), "gpubp_variable_minmax")
    return _element_value(v, lo), _element_value(v, hi)


def gpubp_variable_minmax_missing(v):
    """True when some block of the variable was written without min/max."""
    m = c_int(0)
    _check(lib().gpubp_variable_minmax_missing(v, byref(m)), "gpubp_variable_minmax_missing")
    return bool(m.value)


def gpubp_variable_block_writer(v, step, block):
    """The rank of the writer of one block (BP5 datasets)."""
    return _size_out("gpubp_variable_block_writer", v, int(step), int(block))


def gpubp_variable_block_operator(v, step, block):
    """The ADIOS2 name of the operator that stored one block ("blosc", "bzip2", ...), "" if none."""
    buf = ctypes.create_string_buffer(600)
    _check(lib().gpubp_variable_block_operator(v, int(step), int(block), buf, len(buf)),
           "gpubp_variable_block_operator")
    return _dec(buf.value)


def gpubp_variable_joined_dim(v):
    """The joined dimension of a joined array (file order)."""
    return _size_out("gpubp_variable_joined_dim", v)


def gpubp_variable_block_info(v, step, block):
    """(start, count, min, max) of one block; start and count are tuples."""
    nd = gpubp_variable_ndims(v)
    st = (c_size_t * max(nd, 1))()
    cc = (c_size_t * max(nd, 1))()
    numeric = gpubp_variable_type(v) not in (Type.STRING, Type.STRUCT)
    lo, hi = _element_buffers(v) if numeric else (None, None)
    _check(lib().gpubp_variable_block_info(v, int(step), int(block), st, cc, lo, hi),
           "gpubp_variable_block_info")
    mm = (_element_value(v, lo), _element_value(v, hi)) if numeric else (None, None)
    return (tuple(st[i] for i in range(nd)), tuple(cc[i] for i in range(nd))) + mm


def gpubp_selection_size(v):
    return _size_out("gpubp_selection_size", v)


def gpubp_variable_element_size(v):
    """Bytes of one element (a struct variable's record size; 0 for strings)."""
    return _size_out("gpubp_variable_element_size", v)


def gpubp_variable_expression(v):
    """The expression of a derived variable ADIOS2 wrote without data, else None."""
    e = c_char_p()
    _check(lib().gpubp_variable_expression(v, byref(e)), "gpubp_variable_expression")
    return _dec(e.value)


def gpubp_variable_struct(v):
    """(name, record size, field count) of a struct variable."""
    name, size, nf = c_char_p(), c_size_t(), c_size_t()
    _check(lib().gpubp_variable_struct(v, byref(name), byref(size), byref(nf)),
           "gpubp_variable_struct")
    return _dec(name.value), size.value, nf.value


def gpubp_variable_struct_field(v, i):
    """(name, type, byte offset, element count) of field i of a struct variable."""
    name, t, off, cnt = c_char_p(), c_int(), c_size_t(), c_size_t()
    _check(lib().gpubp_variable_struct_field(v, int(i), byref(name), byref(t), byref(off),
                                             byref(cnt)), "gpubp_variable_struct_field")
    return _dec(name.value), _type(t.value), off.value, cnt.value


def gpubp_set_memory_selection(v, start, count):
    """start/count None (or empty) clears the memory selection."""
    if not count:
        return _check(lib().gpubp_set_memory_selection(v, 0, None, None),
                      "gpubp_set_memory_selection")
    nd, st = _dims(start)
    _, cc = _dims(count)
    return _check(lib().gpubp_set_memory_selection(v, len(count), st, cc),
                  "gpubp_set_memory_selection")


def gpubp_available_variables(f):
    """The sorted list of variable names."""
    n = c_size_t()
    arr = _NAMES()
    _check(lib().gpubp_available_variables(f, byref(n), byref(arr)), "gpubp_available_variables")
    return _names(n, arr)


def gpubp_variable_add_operation(v, op, params=None):
    """Adds a compression operator ("zlib") before the variable's first put."""
    return _check(_fn("gpubp_variable_add_operation")(v, _enc(op), _enc(params)),
                  "gpubp_variable_add_operation")


# --- data ------------------------------------------------------------------------------------

def gpubp_put(f, v, data, mode=Launch.SYNC):
    """data: an address (int), None, bytes (strings are NUL-terminated) or a ctypes object."""
    return _check(lib().gpubp_put(f, v, data, int(mode)), "gpubp_put")


def gpubp_get(f, v, data, mode=Launch.SYNC):
    """data: an address (int) or a ctypes object of gpubp_selection_size() bytes."""
    return _check(lib().gpubp_get(f, v, data, int(mode)), "gpubp_get")


def gpubp_perform_puts(f):
    return _check(lib().gpubp_perform_puts(f), "gpubp_perform_puts")


def gpubp_perform_gets(f):
    return _check(lib().gpubp_perform_gets(f), "gpubp_perform_gets")


# --- attributes ------------------------------------------------------------------------------

def _type(t):
    """A Type, or the plain int of a type id this library cannot read (listed, not readable)."""
    try:
        return Type(t)
    except ValueError:
        return t


def _attr_data(type, data, n):
    """Converts the convenient forms of attribute data (str, list of str) to a pointer."""
    if int(type) == Type.STRING_ARRAY:
        if isinstance(data, (str, bytes)):
            data = [data]
        if isinstance(data, (list, tuple)):
            return (c_char_p * len(data))(*[_enc(s) for s in data])
    if int(type) == Type.STRING:
        if isinstance(data, (str, bytes)):
            return ctypes.c_char_p(_enc(data))
        if isinstance(data, (list, tuple)):
            arr = (c_char_p * len(data))(*[_enc(s) for s in data])
            return arr if len(data) > 1 else arr[0]
    return data


def gpubp_define_attribute(f, name, type, data, n):
    """data: an address, bytes or ctypes object; for strings also a str or a list of str."""
    return _check(lib().gpubp_define_attribute(f, _enc(name), int(type),
                                               _attr_data(type, data, n), int(n)),
                  "gpubp_define_attribute")


def gpubp_define_variable_attribute(f, var, name, type, data, n):
    return _check(lib().gpubp_define_variable_attribute(f, _enc(var), _enc(name), int(type),
                                                        _attr_data(type, data, n), int(n)),
                  "gpubp_define_variable_attribute")


def gpubp_available_attributes(f):
    n = c_size_t()
    arr = _NAMES()
    _check(lib().gpubp_available_attributes(f, byref(n), byref(arr)),
           "gpubp_available_attributes")
    return _names(n, arr)


def gpubp_inquire_attribute(f, name):
    """(type, n, is_array)."""
    t, n, a = c_int(), c_size_t(), c_int()
    _check(lib().gpubp_inquire_attribute(f, _enc(name), byref(t), byref(n), byref(a)),
           "gpubp_inquire_attribute")
    return _type(t.value), n.value, bool(a.value)


def gpubp_attribute_data(f, name, data):
    """Copies a numeric attribute into `data` (an address or a writable ctypes object)."""
    return _check(lib().gpubp_attribute_data(f, _enc(name), data), "gpubp_attribute_data")


def gpubp_attribute_string(f, name, i):
    s = c_char_p()
    _check(lib().gpubp_attribute_string(f, _enc(name), int(i), byref(s)),
           "gpubp_attribute_string")
    return _dec(s.value)


# --- <gpubp/cuda.h> ---------------------------------------------------------------------------

def gpubp_set_stream(f, cuda_stream):
    """Orders the library's device work for f after `cuda_stream` (a cudaStream_t as an int;
    None or 0 forgets it)."""
    return _check(_fn("gpubp_set_stream")(f, cuda_stream or None), "gpubp_set_stream")


def gpubp_type_size(type):
    return lib().gpubp_type_size(int(type))


def gpubp_type_name(type):
    return _dec(lib().gpubp_type_name(int(type)))


def gpubp_long_double_from_double(dst, x):
    """Writes x as one 16-byte GPUBP_TYPE_LONG_DOUBLE element at dst (an address or a
    writable ctypes object)."""
    return _check(_fn("gpubp_long_double_from_double")(dst, float(x)),
                  "gpubp_long_double_from_double")


def gpubp_long_double_to_double(src):
    """The 16-byte GPUBP_TYPE_LONG_DOUBLE element at src (an address, bytes or ctypes object)
    as a float."""
    x = ctypes.c_double()
    _check(_fn("gpubp_long_double_to_double")(src, byref(x)), "gpubp_long_double_to_double")
    return x.value
