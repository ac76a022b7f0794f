"""Steps of a CUDA torch tensor and a CPU torch tensor into a BP4 file, then back into tensors.

The libgpubp version of ADIOS2's bpStepsWriteReadTorch.py. The CUDA tensor goes in and out
through __cuda_array_interface__ (GPU memory space), the CPU tensor through DLPack (host memory
space). "gpuArray" lists as `float gpuArray 2*{3, 2}` (dims stored reversed, as ADIOS2 does) and
reads back into a (2, 3) CUDA tensor exactly as written.

    python3 steps_write_read_torch.py [FILE]     (default StepsWriteReadTorch.bp)

Needs PyTorch with CUDA, a GPU and libgpubp built with -DGPUBP_USE_CUDA=ON (GPUBP_LIBRARY names
it).
"""

import sys


def need(what):
    sys.exit("steps_write_read_torch.py: %s" % what)


try:
    import gpubp
except ImportError as e:
    need("%s (pip install bindings/python, or PYTHONPATH=bindings/python)" % e)
try:
    import torch
except ImportError:
    need("PyTorch is not installed; this example needs PyTorch with CUDA and a GPU")
if not torch.cuda.is_available():
    need("no CUDA GPU is available to PyTorch")
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
          % (file_name, tuple(gpu_array.shape), tuple(cpu_array.shape)))


def read_array(file_name):
    cuda0 = torch.device("cuda:0")
    with gpubp.Stream(file_name, "r") as r:
        for _ in r.steps():
            step = r.current_step()
            cpu_buffer = torch.zeros(r.shape("cpuArray"), dtype=torch.float32)
            r.read("cpuArray", buffer=cpu_buffer)
            gpu_buffer = torch.zeros(r.shape("gpuArray", memory="gpu"), dtype=torch.float32,
                                     device=cuda0)
            r.read("gpuArray", buffer=gpu_buffer)
            print("Step %d: read GPU data\n %s" % (step, gpu_buffer))
            print("Step %d: read CPU data\n %s" % (step, cpu_buffer))


def main():
    file_name = sys.argv[1] if len(sys.argv) > 1 else "StepsWriteReadTorch.bp"
    cuda0 = torch.device("cuda:0")
    cpu_array = torch.tensor([[0, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=torch.float32)
    gpu_array = torch.tensor([[0, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=torch.float32,
                             device=cuda0)
    write_array(file_name, 2, gpu_array, cpu_array)
    read_array(file_name)


if __name__ == "__main__":
    main()
