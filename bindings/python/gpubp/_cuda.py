"""The little of CUDA the package needs: synchronising on a producer's stream.

Version 3 of ``__cuda_array_interface__`` says that when the producer gives a ``stream``, the
consumer must synchronise on it before touching the data (the producer may still be writing the
array on that stream). libgpubp reads device memory on its own stream, so the package waits for
the producer's stream with the CUDA driver API (``cuStreamSynchronize`` of ``libcuda.so.1``), which
is present wherever there is a GPU. Stream values 1 and 2 are the legacy and per-thread default
streams; other values are ``CUstream`` / ``cudaStream_t`` handles (the same thing).

Tests replace :data:`synchronize` to observe the calls without a GPU.
"""

import ctypes

_driver = None


class CudaError(RuntimeError):
    pass


def _load():
    global _driver
    if _driver is None:
        last = None
        for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
            try:
                _driver = ctypes.CDLL(name)
                break
            except OSError as e:
                last = e
        else:
            raise CudaError("cannot synchronise a CUDA stream: the CUDA driver library "
                            "(libcuda.so.1) cannot be loaded (%s)" % last)
        _driver.cuStreamSynchronize.restype = ctypes.c_int
        _driver.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    return _driver


def _synchronize(stream):
    rc = _load().cuStreamSynchronize(ctypes.c_void_p(int(stream)))
    if rc != 0:
        raise CudaError("cuStreamSynchronize(stream %#x) failed with CUDA error %d"
                        % (int(stream), rc))


# The function called with each producer stream to wait for (replaceable by tests).
synchronize = _synchronize


def wait_stream(stream):
    """Waits for `stream` (from a __cuda_array_interface__ v3 or DLPack exchange) to finish."""
    if stream is None:
        return
    if int(stream) == 0:
        raise ValueError("__cuda_array_interface__ stream 0 is disallowed by the protocol "
                         "(ambiguous: use 1 for the legacy default stream)")
    synchronize(int(stream))
