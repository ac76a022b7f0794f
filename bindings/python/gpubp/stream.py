"""gpubp.Stream: NumPy, CuPy and torch arrays in and out of BP4 step files."""

import ctypes
import enum
import numbers

import numpy as np

from . import lowlevel as ll
from ._arrays import array_info
from ._types import dtype_of, gpubp_type
from .lowlevel import MemorySpace, ShapeKind, Type

_MODES = {
    "w": ll.Mode.WRITE,
    "a": ll.Mode.APPEND,
    "r": ll.Mode.READ,
    "rra": ll.Mode.READ_RANDOM_ACCESS,
}

_MEMORY = {
    "host": MemorySpace.HOST, "cpu": MemorySpace.HOST,
    "gpu": MemorySpace.GPU, "device": MemorySpace.GPU, "cuda": MemorySpace.GPU,
}


class StepStatus(enum.Enum):
    """What begin_step() found."""
    OK = 0
    END_OF_STREAM = 1
    NOT_READY = 2


def _params_string(params):
    if params is None or isinstance(params, str):
        return params
    items = []
    for k, v in params.items():
        if isinstance(v, bool):
            v = "1" if v else "0"
        items.append("%s=%s" % (k, v))
    return ",".join(items)


def _memory_space(memory):
    if isinstance(memory, MemorySpace):
        return memory
    try:
        return _MEMORY[str(memory).lower()]
    except KeyError:
        raise ValueError("memory must be 'host' or 'gpu', not %r" % (memory,)) from None


def _var_dtype(v, t):
    """The NumPy dtype of a read variable's elements: its type's, or for a struct variable
    (ADIOS2 BP5 DefineStruct) a structured dtype with the writer's field names, types, offsets
    and record size (a field of n elements is a subarray of shape (n,))."""
    if t != Type.STRUCT:
        return dtype_of(t)
    _, size, nf = ll.gpubp_variable_struct(v)
    names, formats, offsets = [], [], []
    for i in range(nf):
        name, ft, off, cnt = ll.gpubp_variable_struct_field(v, i)
        names.append(name)
        formats.append(dtype_of(ft) if cnt == 1 else (dtype_of(ft), (cnt,)))
        offsets.append(off)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size})


def _dims(seq, what):
    if seq is None:
        return None
    if isinstance(seq, numbers.Integral):
        seq = (seq,)
    out = tuple(int(x) for x in seq)
    if any(x < 0 for x in out):
        raise ValueError("%s must not be negative: %r" % (what, out))
    return out


def _count_elems(dims):
    n = 1
    for d in dims:
        n *= d
    return n


class Stream:
    """An open BP4 dataset (``name.bp/``), read or written step by step.

    ``Stream(path, mode="r", params=None)``

    mode
        ``"w"`` creates (replaces) the dataset, ``"a"`` appends steps to it, ``"r"`` reads the
        steps in order (``steps()`` or ``begin_step()`` / ``end_step()``), ``"rra"`` reads any
        step at any time (``read(..., step=, step_count=)``).
    params
        ``None``, a ``"key=value,..."`` string or a dict of the open parameters of
        ``docs/parameters.md`` (``gpu_layout``, ``timeout``, ``pool_slots``, ...).

    Dimensions (``shape``, ``start``, ``count``) are always in the layout of the memory space of
    the array they describe: row-major for host arrays; for GPU arrays reversed by default
    (``gpu_layout=column_major``, as ADIOS2), so a C-ordered CuPy array of shape (2, 3) is
    written with its own shape (2, 3) and lists as {3, 2} in bpls. ``shape(name, memory=...)``
    gives the shape in either layout.
    """

    def __init__(self, path, mode="r", params=None):
        if mode not in _MODES:
            raise ValueError("mode must be one of 'w', 'a', 'r', 'rra', not %r" % (mode,))
        self._f = None
        self._path = str(path)
        self._mode = mode
        self._vars = {}
        self._in_step = False
        self._implicit_step = False
        self._f = ll.gpubp_open(self._path, _MODES[mode], _params_string(params))

    # --- life ---------------------------------------------------------------------------------

    @property
    def path(self):
        return self._path

    @property
    def mode(self):
        return self._mode

    @property
    def closed(self):
        return self._f is None

    @property
    def handle(self):
        """The gpubp_file handle, for gpubp.lowlevel calls (valid until close())."""
        return self._live()

    def close(self):
        """Closes the dataset (a writer first ends an open step). Safe to call twice."""
        f, self._f = self._f, None
        self._vars = {}
        self._in_step = False
        if f is not None:
            ll.gpubp_close(f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<gpubp.Stream %r mode %r%s>" % (self._path, self._mode,
                                                " closed" if self.closed else "")

    def _live(self):
        if self._f is None:
            raise ValueError("operation on a closed gpubp.Stream (%s)" % self._path)
        return self._f

    def _writing(self, what):
        self._live()
        if self._mode not in ("w", "a"):
            raise ValueError("%s needs a Stream opened with mode 'w' or 'a' (this one is %r)"
                             % (what, self._mode))

    def _reading(self, what):
        self._live()
        if self._mode not in ("r", "rra"):
            raise ValueError("%s needs a Stream opened with mode 'r' or 'rra' (this one is %r)"
                             % (what, self._mode))

    # --- steps --------------------------------------------------------------------------------

    def begin_step(self):
        """Starts a step. Writing: always StepStatus.OK. Reading ("r"): StepStatus.OK, or
        END_OF_STREAM when there are no more steps and the writer has closed, or NOT_READY when
        no new step came within the open parameter ``timeout`` while the writer is active."""
        f = self._live()
        if self._implicit_step:
            self.end_step()
        st = ll.gpubp_begin_step(f)
        self._in_step = st == ll.Status.OK
        return StepStatus(int(st))

    def end_step(self):
        """Ends the step: writing commits it; reading releases it."""
        f = self._live()
        self._in_step = False
        self._implicit_step = False
        ll.gpubp_end_step(f)

    def steps(self, n=None):
        """Iterates over steps, yielding the Stream with a step begun; the step is ended when
        the loop goes on (or is left).

        Reading (mode "r"): the steps in order, at most `n`; stops at the end of the stream, and
        when no new step comes within the open parameter ``timeout`` (0 by default) while a
        writer is still active. Writing (modes "w", "a"): `n` new steps."""
        self._live()
        if self._mode == "rra":
            raise ValueError("steps() needs mode 'r', 'w' or 'a' (use read(..., step=) in "
                             "mode 'rra')")
        if self._mode != "r" and n is None:
            raise ValueError("steps(n) needs the number of steps to write")
        done = 0
        while n is None or done < n:
            if self.begin_step() != StepStatus.OK:
                return
            try:
                yield self
            finally:
                if self._in_step and not self.closed:
                    self.end_step()
            done += 1

    def set_stream(self, stream):
        """Orders the library's device work for this file after the work queued on a CUDA
        stream (gpubp_set_stream): a cupy.cuda.Stream, a torch.cuda.Stream, or a cudaStream_t
        as an int; None forgets it. Arrays carrying their own stream (__cuda_array_interface__
        v3) are synchronised on in any case."""
        if stream is not None and not isinstance(stream, int):
            for attr in ("ptr", "cuda_stream"):  # CuPy, torch
                if hasattr(stream, attr):
                    stream = int(getattr(stream, attr))
                    break
            else:
                raise TypeError("set_stream: expected a CUDA stream object or an int, not %s"
                                % type(stream).__name__)
        ll.gpubp_set_stream(self._live(), stream)

    def current_step(self):
        """The current step (0-based): the one being written, or the one open for reading."""
        return ll.gpubp_current_step(self._live())

    def num_steps(self):
        """Steps committed so far (writing), seen so far ("r") or in the dataset ("rra")."""
        return ll.gpubp_steps(self._live())

    # --- writing ------------------------------------------------------------------------------

    def _ensure_step(self):
        if not self._in_step:
            ll.gpubp_begin_step(self._f)
            self._in_step = True
            self._implicit_step = True

    def write(self, name, array, start=None, count=None, shape=None, *, copy=False,
              local=False, local_value=False, operations=None):
        """Writes one block of variable `name` in the current step.

        `array` is a NumPy array, a CuPy / Numba array or torch tensor (host or CUDA), anything
        with ``__cuda_array_interface__`` or ``__dlpack__``, a Python or NumPy number (a single
        value) or a ``str`` (a string value). The memory space of the variable is the array's.

        On the first write of `name` in this open the variable is defined from the array: its
        type from the dtype; a global array of `shape` (default: the array's shape) whose block
        is `start` (default zeros) and `count` (default the array's shape); with ``local=True`` a
        local array (blocks with a count and no shape); with ``local_value=True`` a local value
        (ADIOS2's shape {LocalValueDim}): `array` is one value (a number, a one-element array, a
        str) and each write adds one block to the step, read back as a 1-D array with one
        element per block (a list of str for strings). Later writes may change `shape` and give
        another block (`start`, `count`). The array must hold exactly prod(count) elements and be
        C-contiguous; ``copy=True`` writes a contiguous copy of a non-contiguous array instead of
        raising NotContiguousError. `operations` (first write only): compression operators as
        a list of (name, params) pairs, e.g. ``[("zlib", {"level": 6})]``.

        The data is consumed before the call returns. Outside begin_step()/end_step() a step is
        begun implicitly and ended at the next begin_step() or at close()."""
        self._writing("write()")
        f = self._f
        if local_value:
            return self._write_local_value(name, array)
        if isinstance(array, (str, bytes)):
            return self._write_string(name, array)
        if isinstance(array, (numbers.Number, np.generic, list, tuple)):
            array = np.asarray(array)
        info = array_info(array, writing=True, copy=copy)
        t = gpubp_type(info.dtype)
        start, count, shape = _dims(start, "start"), _dims(count, "count"), _dims(shape, "shape")
        nd = len(info.shape)
        if count is None and nd:
            count = info.shape
        if count is not None and _count_elems(count) != info.size:
            raise ValueError("write('%s'): count %r holds %d elements, the array %d (shape %r)"
                             % (name, count, _count_elems(count), info.size, info.shape))
        self._ensure_step()
        v = self._vars.get(name)
        if v is None:
            if nd == 0 and count is None and shape is None and start is None:
                v = ll.gpubp_define_variable(f, name, t)
            elif local:
                if shape is not None:
                    raise ValueError("write('%s'): a local array has no shape" % name)
                v = ll.gpubp_define_variable(f, name, t, None, None, count)
            else:
                shape = shape if shape is not None else count
                start = start if start is not None else (0,) * len(count)
                v = ll.gpubp_define_variable(f, name, t, shape, start, count)
            self._vars[name] = v
            for op, op_params in operations or ():
                ll.gpubp_variable_add_operation(v, op, _params_string(op_params))
            # The memory space comes from the array, set explicitly (never DETECT).
            ll.gpubp_set_memory_space(v, info.space)
        else:
            vt = ll.gpubp_variable_type(v)
            if vt != t:
                raise TypeError("write('%s'): the variable is %s, the array %s"
                                % (name, ll.gpubp_type_name(vt), info.dtype))
            # The space first: it decides the layout of the dims given next.
            ll.gpubp_set_memory_space(v, info.space)
            if shape is not None:
                ll.gpubp_set_shape(v, shape)
            if count is not None and ll.gpubp_variable_ndims(v):
                if ll.gpubp_variable_shape_kind(v) == ShapeKind.LOCAL_ARRAY:
                    ll.gpubp_set_selection(v, None, count)
                else:
                    ll.gpubp_set_selection(v, start if start is not None else (0,) * len(count),
                                           count)
        ll.gpubp_put(f, v, info.ptr or None, ll.Launch.SYNC)

    def _write_local_value(self, name, value):
        """One value of local value `name`: one more block of the step (ADIOS2's shape
        {LocalValueDim}); readers see a 1-D array of one value per block."""
        f = self._f
        is_str = isinstance(value, (str, bytes))
        if is_str:
            data = value if isinstance(value, bytes) else value.encode("utf-8")
            t, space, ptr = Type.STRING, MemorySpace.HOST, ctypes.c_char_p(data)
        else:
            if isinstance(value, (numbers.Number, np.generic, list, tuple)):
                value = np.asarray(value)
            info = array_info(value, writing=True)
            if info.size != 1:
                raise ValueError("write('%s', local_value=True): one value per call, not %d"
                                 % (name, info.size))
            t, space, ptr = gpubp_type(info.dtype), info.space, info.ptr
        self._ensure_step()
        v = self._vars.get(name)
        if v is None:
            v = ll.gpubp_define_variable(f, name, t, (ll.LOCAL_VALUE_DIM,))
            self._vars[name] = v
        elif ll.gpubp_variable_shape_kind(v) != ShapeKind.LOCAL_VALUE:
            raise TypeError("write('%s', local_value=True): the variable is not a local value"
                            % name)
        elif ll.gpubp_variable_type(v) != t:
            raise TypeError("write('%s'): the variable is %s, the value %s"
                            % (name, ll.gpubp_type_name(ll.gpubp_variable_type(v)),
                               ll.gpubp_type_name(t)))
        ll.gpubp_set_memory_space(v, space)
        ll.gpubp_put(f, v, ptr, ll.Launch.SYNC)

    def _write_string(self, name, text):
        f = self._f
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        self._ensure_step()
        v = self._vars.get(name)
        if v is None:
            v = ll.gpubp_define_variable(f, name, Type.STRING)
            self._vars[name] = v
        elif ll.gpubp_variable_type(v) != Type.STRING:
            raise TypeError("write('%s'): the variable is %s, not a string"
                            % (name, ll.gpubp_type_name(ll.gpubp_variable_type(v))))
        ll.gpubp_set_memory_space(v, MemorySpace.HOST)
        ll.gpubp_put(f, v, ctypes.c_char_p(data), ll.Launch.SYNC)

    # --- reading ------------------------------------------------------------------------------

    def _inquire(self, name):
        return ll.gpubp_inquire_variable(self._live(), name)

    def _select_steps(self, v, step, step_count):
        if self._mode == "rra":
            ll.gpubp_set_step_selection(v, 0 if step is None else step,
                                        1 if step_count is None else step_count)
        elif step is not None or step_count is not None:
            raise ValueError("step= and step_count= need mode 'rra' (mode %r reads the current "
                             "step)" % self._mode)

    def read(self, name, start=None, count=None, *, block=None, step=None, step_count=None,
             buffer=None):
        """Reads variable `name` and returns its data.

        Without `buffer` the data comes back as a new NumPy array (a NumPy scalar for a single
        value, a ``str`` for a string). With `buffer` (a NumPy, CuPy or torch array, host or
        device, C-contiguous, of the variable's dtype, holding exactly the selection's elements)
        the data is read into it and `buffer` is returned; the variable's memory space is the
        buffer's. A variable is read into one memory space for the whole life of the Stream.

        Selections, all optional, in the layout of the memory space read into:
          start, count  a box (count defaults to the rest of the shape after start);
          block         a block of the step (local arrays; for global arrays the block's box);
          step, step_count  (mode "rra") steps [step, step + step_count) of the variable; the
                        result gets a leading dimension step_count when step_count is given.
        Without a selection the whole variable is read (mode "rra": step 0)."""
        self._reading("read()")
        f = self._f
        v = self._inquire(name)
        t = ll.gpubp_variable_type(v)
        info = array_info(buffer, writing=False) if buffer is not None else None
        space = info.space if info is not None else MemorySpace.HOST
        if t == Type.STRING and info is not None:
            raise TypeError("read('%s'): a string variable is returned as a str, not read into "
                            "a buffer" % name)
        # The memory space first: it decides the layout of every selection that follows.
        ll.gpubp_set_memory_space(v, space)
        self._select_steps(v, step, step_count)
        kind = ll.gpubp_variable_shape_kind(v)
        nd = ll.gpubp_variable_ndims(v)
        start, count = _dims(start, "start"), _dims(count, "count")
        if block is not None:
            ll.gpubp_set_block_selection(v, block)
        if nd == 0:
            if start is not None or count is not None or block is not None:
                raise ValueError("read('%s'): a single value takes no start, count or block"
                                 % name)
            out_shape = ()
        elif block is not None and kind != ShapeKind.LOCAL_ARRAY and count is None \
                and start is None:
            # a global array's block: its own box (block_info gives it in this layout)
            out_shape = ll.gpubp_variable_block_info(
                v, 0 if step is None else step, block)[1]
        else:
            if count is None:
                full = ll.gpubp_variable_shape(v, space)
                s = start if start is not None else (0,) * nd
                if len(s) != nd:
                    raise ValueError("read('%s'): start has %d dimensions, the variable %d"
                                     % (name, len(s), nd))
                count = tuple(max(a - b, 0) for a, b in zip(full, s))
            if start is None:
                start = (0,) * len(count)
            ll.gpubp_set_selection(v, start, count)
            out_shape = count
        if step_count is not None:
            out_shape = (step_count,) + tuple(out_shape)
        nbytes = ll.gpubp_selection_size(v)
        if t == Type.STRING:
            # local values of strings: a list (one per block), a block of them: one str
            many = step_count is not None or (kind == ShapeKind.LOCAL_VALUE and block is None)
            return self._read_strings(f, v, nbytes, many)
        dtype = _var_dtype(v, t)
        if info is not None:
            return self._read_into(f, v, name, info, dtype, out_shape, nbytes)
        # zeros where no block of the selection was written (a writer that skipped a local value,
        # a joined array's earlier, shorter steps): bpls prints 0 there too
        out = np.zeros(out_shape, dtype)
        if out.nbytes != nbytes:
            raise ll.Error(ll.Status.ERR_INTERNAL, "read('%s'): selection of %d bytes for "
                           "shape %r" % (name, nbytes, out_shape))
        if nbytes:
            ll.gpubp_get(f, v, out.ctypes.data, ll.Launch.SYNC)
        return out[()] if out.ndim == 0 else out

    def _read_into(self, f, v, name, info, dtype, out_shape, nbytes):
        if info.dtype != dtype:
            raise TypeError("read('%s'): the buffer's dtype is %s, the variable's %s"
                            % (name, info.dtype, dtype))
        if info.readonly:
            raise ValueError("read('%s'): the buffer is read-only" % name)
        if info.nbytes != nbytes:
            raise ValueError("read('%s'): the buffer holds %d elements (shape %r), the selection "
                             "%d (shape %r)" % (name, info.size, info.shape,
                                                nbytes // dtype.itemsize, tuple(out_shape)))
        if nbytes:
            ll.gpubp_get(f, v, info.ptr, ll.Launch.SYNC)
        return info.obj

    @staticmethod
    def _read_strings(f, v, nbytes, many):
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        ll.gpubp_get(f, v, buf, ll.Launch.SYNC)
        parts = [p.decode("utf-8", "surrogateescape") for p in buf.raw[:nbytes].split(b"\0")[:-1]]
        return parts if many else parts[0]

    def shape(self, name, memory="host", step=None):
        """The shape of `name` as a tuple, in the layout of `memory` ("host": the file's
        row-major shape; "gpu": reversed by default, the shape a GPU buffer must have).
        Reading "r": at the current step; "rra": at `step` (default the last step); writing:
        the shape last given. A single value has shape ()."""
        f = self._live()
        v = ll.gpubp_inquire_variable(f, name)
        if self._mode == "rra":
            n = ll.gpubp_variable_steps(v)
            ll.gpubp_set_step_selection(v, n - 1 if step is None else step, 1)
        elif step is not None:
            raise ValueError("shape(step=) needs mode 'rra'")
        return ll.gpubp_variable_shape(v, _memory_space(memory))

    def dtype(self, name):
        """The NumPy dtype of a numeric variable (``str`` for a string; a structured dtype
        for a struct variable)."""
        v = self._inquire(name)
        t = ll.gpubp_variable_type(v)
        return str if t == Type.STRING else _var_dtype(v, t)

    def available_variables(self):
        """The variables (of the current step in mode "r") as a dict, sorted by name::

            {"name": {"type": "float", "shape": (3, 2), "steps": 2, "single_value": False,
                      "kind": "global_array", "memory_space": "host"}, ...}

        "shape" is the file's (host layout) shape: at the current step ("r"), the last step
        ("rra"), or the one last given (writing)."""
        f = self._live()
        out = {}
        for name in ll.gpubp_available_variables(f):
            v = ll.gpubp_inquire_variable(f, name)
            kind = ll.gpubp_variable_shape_kind(v)
            if self._mode == "rra":
                ll.gpubp_set_step_selection(v, ll.gpubp_variable_steps(v) - 1, 1)
            space = ll.gpubp_variable_memory_space(v)
            out[name] = {
                "type": ll.gpubp_type_name(ll.gpubp_variable_type(v)),
                "shape": ll.gpubp_variable_shape(v, MemorySpace.HOST),
                "steps": ll.gpubp_variable_steps(v),
                "single_value": kind == ShapeKind.GLOBAL_VALUE,
                "kind": kind.name.lower(),
                "memory_space": {MemorySpace.DETECT: None, MemorySpace.HOST: "host",
                                 MemorySpace.GPU: "gpu"}[space],
            }
        return out

    # --- attributes ---------------------------------------------------------------------------

    def write_attribute(self, name, value, variable=None):
        """Defines attribute `name` (of `variable` when given: stored as "variable/name", as
        ADIOS2 does). `value`: a str, a list of str, a number, or a sequence / host array of
        numbers (any numeric dtype, numpy.longdouble included; a one-element list of numbers is
        stored as a single value, a list of str always as a string array, so that ["a"] reads
        back as ["a"], as ADIOS2 keeps it). Written with the next step; defining it again with
        other data modifies it."""
        self._writing("write_attribute()")
        f = self._f
        if isinstance(value, (str, bytes)):
            t, data, n = Type.STRING, value, 1
        elif isinstance(value, (list, tuple)) and value and \
                all(isinstance(s, (str, bytes)) for s in value):
            t, data, n = Type.STRING_ARRAY, list(value), len(value)
        else:
            if hasattr(value, "__cuda_array_interface__"):
                raise TypeError("write_attribute('%s'): attribute values are host data "
                                "(copy the device array to the host first)" % name)
            arr = np.ascontiguousarray(np.asarray(value).ravel())
            if arr.size == 0:
                raise ValueError("write_attribute('%s'): no value" % name)
            t = gpubp_type(arr.dtype)
            if t == Type.STRING:
                return self.write_attribute(name, [str(s) for s in arr], variable)
            data, n = arr.ctypes.data, arr.size
        if variable is None:
            ll.gpubp_define_attribute(f, name, t, data, n)
        else:
            ll.gpubp_define_variable_attribute(f, variable, name, t, data, n)

    def read_attribute(self, name, variable=None):
        """The value of attribute `name` (of `variable` when given): a str or list of str for
        strings; a NumPy scalar for a single number, a 1-D NumPy array for an array."""
        self._reading("read_attribute()")
        f = self._f
        full = name if variable is None else "%s/%s" % (variable, name)
        t, n, is_array = ll.gpubp_inquire_attribute(f, full)
        if t == Type.STRING:
            vals = [ll.gpubp_attribute_string(f, full, i) for i in range(n)]
            return vals if is_array else vals[0]
        arr = np.empty(n, dtype_of(t))
        ll.gpubp_attribute_data(f, full, arr.ctypes.data)
        return arr if is_array else arr[0]

    def available_attributes(self, variable=None):
        """The attributes as a dict, sorted by name: {"name": {"type": "double",
        "elements": 1, "value": ...}}. With `variable`, only that variable's attributes, keyed
        by their short names."""
        self._live()
        f = self._f
        out = {}
        prefix = None if variable is None else variable + "/"
        for full in ll.gpubp_available_attributes(f):
            if prefix is not None and not full.startswith(prefix):
                continue
            t, n, _ = ll.gpubp_inquire_attribute(f, full)
            key = full if prefix is None else full[len(prefix):]
            out[key] = {"type": ll.gpubp_type_name(t), "elements": n,
                        "value": self.read_attribute(full) if self._mode in ("r", "rra")
                        else None}
        return out
