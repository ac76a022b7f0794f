"""Steps of a CuPy array and a NumPy array into a BP4 file, then back into GPU and CPU buffers.

The libgpubp version of ADIOS2's bpStepsWriteReadCupy.py. "gpuArray" is written straight from
device memory (its memory space comes from the CuPy array); with the default gpu_layout its
dims are stored reversed, as ADIOS2 does, so `gpubpls -l` (or bpls) lists it as
`float gpuArray 2*{3, 2}`, and it reads back into a CuPy buffer of shape(..., memory="gpu")
= (2, 3) exactly as written.

    python3 steps_write_read_cupy.py [FILE]     (default StepsWriteReadCuPy.bp)

Needs CuPy, a CUDA GPU and libgpubp built with -DGPUBP_USE_CUDA=ON (GPUBP_LIBRARY names it).
"""

import sys


def need(what):
    sys.exit("steps_write_read_cupy.py: %s" % what)


try:
    import numpy as np
    import gpubp
except ImportError as e:
    need("%s (pip install bindings/python, or PYTHONPATH=bindings/python)" % e)
try:
    import cupy as cp
except ImportError:
    need("CuPy is not installed; this example needs CuPy and a CUDA GPU")
try:
    if cp.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no device")
except Exception as e:
    need("no CUDA GPU is available to CuPy (%s)" % e)
try:
    if not gpubp.has_cuda():
        need("libgpubp at %s was built without CUDA (-DGPUBP_USE_CUDA=ON)"
             % gpubp.library_path())
except gpubp.LibraryNotFoundError as e:
    need(str(e))


def write_array(file_name, n_steps, gpu_array, cpu_array):
    with gpubp.Stream(file_name, "w") as w:
        for _ in w.steps(n_steps):
            w.write("cpuArray", cpu_array)
            w.write("gpuArray", gpu_array)
            gpu_array = gpu_array * 2
            cpu_array = cpu_array + 1
    print("Write to file %s: %s data from GPU and %s data from CPU"
          % (file_name, gpu_array.shape, cpu_array.shape))


def read_array(file_name):
    with gpubp.Stream(file_name, "r") as r:
        for _ in r.steps():
            step = r.current_step()
            cpu_buffer = np.zeros(r.shape("cpuArray"), dtype=np.float32)
            r.read("cpuArray", buffer=cpu_buffer)
            gpu_buffer = cp.zeros(r.shape("gpuArray", memory="gpu"), dtype=np.float32)
            r.read("gpuArray", buffer=gpu_buffer)
            print("Step %d: read GPU data\n %s" % (step, gpu_buffer))
            print("Step %d: read CPU data\n %s" % (step, cpu_buffer))


def main():
    file_name = sys.argv[1] if len(sys.argv) > 1 else "StepsWriteReadCuPy.bp"
    cpu_array = np.array([[0, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)
    gpu_array = cp.array([[0, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)
    write_array(file_name, 2, gpu_array, cpu_array)
    read_array(file_name)


if __name__ == "__main__":
    main()
