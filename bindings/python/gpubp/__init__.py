"""libgpubp for Python: ADIOS2-compatible BP4 step files from NumPy, CuPy and torch arrays.

High level::

    import gpubp
    with gpubp.Stream("data.bp", "w") as s:
        for step in range(2):
            s.begin_step()
            s.write("temperature", array)      # NumPy, CuPy, torch, ... (host or GPU)
            s.end_step()
    with gpubp.Stream("data.bp", "r") as s:
        for _ in s.steps():
            t = s.read("temperature")          # a NumPy array, or read(..., buffer=gpu_array)

Low level: :mod:`gpubp.lowlevel` mirrors the C API (``gpubp.h``) one function for one function.
The package loads the shared library with ctypes (see :mod:`gpubp._loader` for where it looks;
``GPUBP_LIBRARY`` names it explicitly).
"""

from . import lowlevel
from ._arrays import NotContiguousError
from ._loader import LibraryNotFoundError
from ._types import dtype_of, gpubp_type
from .lowlevel import Error, Launch, MemorySpace, Mode, ShapeKind, Status, Type
from .stream import StepStatus, Stream

__version__ = "0.1.0"

__all__ = [
    "Stream", "StepStatus", "Error", "NotContiguousError", "LibraryNotFoundError",
    "Status", "Type", "Mode", "MemorySpace", "Launch", "ShapeKind",
    "dtype_of", "gpubp_type", "lowlevel", "library_version", "library_path", "has_cuda",
]


def library_version():
    """The version of the libgpubp shared library in use (gpubp_version())."""
    return lowlevel.gpubp_version()


def library_path():
    """Where the shared library was loaded from."""
    return lowlevel.library_path()


def has_cuda():
    """Whether the library was built with the CUDA memory space (gpubp_features())."""
    return bool(lowlevel.gpubp_features() & lowlevel.FEATURE_CUDA)
