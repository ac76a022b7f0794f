"""GPU memory through gpubp.Stream: the seed scenario and every read call sequence.

The seed file (the ADIOS2 CuPy example): a (2, 3) float32 device array 0..5 written as
"gpuArray" for two steps (step 1 = step 0 x 2) next to a (2, 3) NumPy array "cpuArray" 0..5
(step 1 = step 0 + 1). With the default gpu_layout the file holds gpuArray as {3, 2} with the
device bytes verbatim; a device read with the GPU shape (2, 3) gives back exactly what was written.
docs/gpu-semantics.md section 2.6: ADIOS2 gets step 0 or step 1 wrong in some of these sequences
(memory space left to detection, selection before or after); every one must be right here.
Each case runs on each device backend of conftest.py (sim, cupy, torch).
"""

import os
import subprocess

import numpy as np
import pytest

import gpubp

GPU0 = np.arange(6, dtype=np.float32).reshape(2, 3)
GPU = [GPU0, GPU0 * 2]                       # what the device held at steps 0 and 1
CPU = [GPU0, GPU0 + 1]
FILE_GPU = [g.reshape(3, 2) for g in GPU]    # what a host reader sees: {3, 2}, bytes verbatim


def open_params(device, extra=None):
    items = [p for p in (device.params, extra) if p]
    return ",".join(items) or None


def write_seed(device, path, extra=None):
    with gpubp.Stream(path, "w", open_params(device, extra)) as s:
        for step in range(2):
            s.begin_step()
            s.write("gpuArray", device.from_numpy(GPU[step]))
            s.write("cpuArray", CPU[step])
            s.end_step()
    return path


@pytest.fixture
def seed(device, tmp_bp):
    return write_seed(device, tmp_bp("StepsWriteReadCuPy.bp"))


def check(device, buf, expect):
    got = device.to_numpy(buf)
    np.testing.assert_array_equal(got, expect)


# --- layout of what was written --------------------------------------------------------------

def test_file_holds_reversed_dims_and_verbatim_bytes(device, seed):
    with gpubp.Stream(seed, "rra") as s:
        info = s.available_variables()
        assert info["gpuArray"]["shape"] == (3, 2)
        assert info["gpuArray"]["steps"] == 2
        assert info["cpuArray"]["shape"] == (2, 3)
        assert s.shape("gpuArray", memory="gpu") == (2, 3)
        assert s.shape("gpuArray", memory="host") == (3, 2)
        for step in range(2):
            np.testing.assert_array_equal(s.read("gpuArray", step=step), FILE_GPU[step])
            np.testing.assert_array_equal(s.read("cpuArray", step=step), CPU[step])


def test_bpls_lists_gpu_array_reversed(device, seed):
    bpls = os.environ.get("GPUBP_BPLS")
    if not bpls or not os.path.exists(bpls):
        pytest.skip("gpubpls not built (GPUBP_BPLS unset)")
    out = subprocess.run([bpls, "-l", seed], capture_output=True, text=True, check=True).stdout
    assert "float    gpuArray  2*{3, 2}" in out, out
    assert "float    cpuArray  2*{2, 3}" in out, out


# --- step-by-step reads ("r") ----------------------------------------------------------------

SELECTIONS = {
    "none": {},
    "box": {"start": (0, 0), "count": (2, 3)},
    "count_only": {"count": (2, 3)},
    "start_only": {"start": (0, 0)},
}


@pytest.mark.parametrize("sel", sorted(SELECTIONS))
@pytest.mark.parametrize("shape_first", [False, True])
def test_steps_read_into_device_buffer(device, seed, sel, shape_first):
    with gpubp.Stream(seed, "r", device.params) as s:
        seen = 0
        for _ in s.steps():
            step = s.current_step()
            if shape_first:
                assert s.shape("gpuArray", memory="gpu") == (2, 3)
            buf = device.zeros((2, 3), np.float32)
            assert s.read("gpuArray", buffer=buf, **SELECTIONS[sel]) is buf
            check(device, buf, GPU[step])
            np.testing.assert_array_equal(s.read("cpuArray", **SELECTIONS[sel]), CPU[step])
            seen += 1
        assert seen == 2


@pytest.mark.parametrize("cpu_first", [False, True])
def test_steps_read_cpu_variable_first(device, seed, cpu_first):
    with gpubp.Stream(seed, "r", device.params) as s:
        for _ in s.steps():
            step = s.current_step()
            buf = device.zeros((2, 3), np.float32)
            if cpu_first:
                np.testing.assert_array_equal(s.read("cpuArray"), CPU[step])
            s.read("gpuArray", buffer=buf, start=(0, 0), count=(2, 3))
            check(device, buf, GPU[step])


def test_steps_first_device_read_at_step_1(device, seed):
    """The variable's memory space is first set at step 1 (step 0 skipped)."""
    with gpubp.Stream(seed, "r", device.params) as s:
        assert s.begin_step() == gpubp.StepStatus.OK
        s.end_step()
        assert s.begin_step() == gpubp.StepStatus.OK
        buf = device.zeros((2, 3), np.float32)
        s.read("gpuArray", buffer=buf, start=(0, 0), count=(2, 3))
        check(device, buf, GPU[1])
        s.end_step()
        assert s.begin_step() == gpubp.StepStatus.END_OF_STREAM


def test_steps_alternating_selection_and_none(device, seed):
    """Step 0 with a box, step 1 without (and the reverse in a second pass)."""
    for order in ((True, False), (False, True)):
        with gpubp.Stream(seed, "r", device.params) as s:
            for _, with_box in zip(s.steps(), order):
                step = s.current_step()
                buf = device.zeros((2, 3), np.float32)
                if with_box:
                    s.read("gpuArray", buffer=buf, start=(0, 0), count=(2, 3))
                else:
                    s.read("gpuArray", buffer=buf)
                check(device, buf, GPU[step])


def test_steps_sub_box_in_gpu_layout(device, seed):
    """A GPU box (start, count) is the file box (rev(start), rev(count)); the buffer is
    row-major over rev(count): the file rows 1..2 of {3, 2}."""
    with gpubp.Stream(seed, "r", device.params) as s:
        for _ in s.steps():
            step = s.current_step()
            buf = device.zeros((2, 2), np.float32)
            s.read("gpuArray", buffer=buf, start=(0, 1), count=(2, 2))
            check(device, buf, FILE_GPU[step][1:3, 0:2].reshape(2, 2))


# --- random access ("rra") -------------------------------------------------------------------

@pytest.mark.parametrize("sel", sorted(SELECTIONS))
@pytest.mark.parametrize("steps", [(0, 1), (1, 0)])
def test_random_access_read_into_device_buffer(device, seed, sel, steps):
    with gpubp.Stream(seed, "rra", device.params) as s:
        for step in steps:
            buf = device.zeros((2, 3), np.float32)
            s.read("gpuArray", buffer=buf, step=step, **SELECTIONS[sel])
            check(device, buf, GPU[step])


def test_random_access_default_is_step_0(device, seed):
    with gpubp.Stream(seed, "rra", device.params) as s:
        buf = device.zeros((2, 3), np.float32)
        s.read("gpuArray", buffer=buf, step=1)
        check(device, buf, GPU[1])
        buf = device.zeros((2, 3), np.float32)
        s.read("gpuArray", buffer=buf)
        check(device, buf, GPU[0])


def test_random_access_two_steps_in_one_buffer(device, seed):
    with gpubp.Stream(seed, "rra", device.params) as s:
        buf = device.zeros((2, 2, 3), np.float32)
        s.read("gpuArray", buffer=buf, step=0, step_count=2)
        check(device, buf, np.stack(GPU))
        buf = device.zeros((2, 2, 3), np.float32)
        s.read("gpuArray", buffer=buf, start=(0, 0), count=(2, 3), step=0, step_count=2)
        check(device, buf, np.stack(GPU))


def test_block_read_into_device_buffer(device, seed):
    with gpubp.Stream(seed, "r", device.params) as s:
        for _ in s.steps():
            buf = device.zeros((2, 3), np.float32)
            s.read("gpuArray", buffer=buf, block=0)
            check(device, buf, GPU[s.current_step()])


# --- other layouts, spaces and errors --------------------------------------------------------

def test_row_major_gpu_layout_keeps_dims(device, tmp_bp):
    path = write_seed(device, tmp_bp(), "gpu_layout=row_major")
    with gpubp.Stream(path, "r", open_params(device, "gpu_layout=row_major")) as s:
        for _ in s.steps():
            step = s.current_step()
            assert s.shape("gpuArray", memory="gpu") == (2, 3)
            assert s.shape("gpuArray", memory="host") == (2, 3)
            buf = device.zeros((2, 2), np.float32)
            s.read("gpuArray", buffer=buf, start=(0, 1), count=(2, 2))
            check(device, buf, GPU[step][:, 1:3])
            np.testing.assert_array_equal(s.read("cpuArray"), CPU[step])


def test_host_read_of_gpu_variable(device, seed):
    with gpubp.Stream(seed, "r", device.params) as s:
        for _ in s.steps():
            np.testing.assert_array_equal(s.read("gpuArray"), FILE_GPU[s.current_step()])


def test_one_variable_one_memory_space(device, seed):
    with gpubp.Stream(seed, "r", device.params) as s:
        s.begin_step()
        s.read("gpuArray", buffer=device.zeros((2, 3), np.float32))
        with pytest.raises(gpubp.Error) as e:
            s.read("gpuArray")
        assert e.value.status == gpubp.Status.ERR_MEMORY_SPACE
        assert "gpuArray" in e.value.message


def test_wrong_buffer_size_and_dtype(device, seed):
    with gpubp.Stream(seed, "r", device.params) as s:
        s.begin_step()
        with pytest.raises(ValueError, match="holds 4 elements"):
            s.read("gpuArray", buffer=device.zeros((2, 2), np.float32))
        with pytest.raises(TypeError, match="dtype"):
            s.read("gpuArray", buffer=device.zeros((2, 3), np.float64))


def test_multi_block_device_write(device, tmp_bp):
    """Two device blocks of one global array, start/count in GPU (column-major) layout: blocks
    split along the last GPU dimension (the slowest in column-major order) are consecutive in
    the file, and a full read returns their bytes one after the other."""
    path = tmp_bp()
    a = np.arange(12, dtype=np.float64).reshape(4, 3)
    b = a + 100
    with gpubp.Stream(path, "w", device.params) as s:
        s.begin_step()
        s.write("T", device.from_numpy(a), start=(0, 0), count=(4, 3), shape=(4, 6))
        s.write("T", device.from_numpy(b), start=(0, 3), count=(4, 3))
        s.end_step()
    both = np.concatenate([a.ravel(), b.ravel()])
    with gpubp.Stream(path, "r", device.params) as s:
        s.begin_step()
        assert s.shape("T", memory="gpu") == (4, 6)
        buf = device.zeros((4, 6), np.float64)
        s.read("T", buffer=buf)
        check(device, buf, both.reshape(4, 6))
        buf = device.zeros((4, 3), np.float64)
        s.read("T", buffer=buf, block=1)
        check(device, buf, b)
    with gpubp.Stream(path, "rra") as s:
        assert s.shape("T") == (6, 4)
        np.testing.assert_array_equal(s.read("T"), both.reshape(6, 4))


def test_multi_block_device_write_row_major(device, tmp_bp):
    """With gpu_layout=row_major C-ordered device blocks compose as on the host."""
    path = tmp_bp()
    full = np.arange(24, dtype=np.int32).reshape(4, 6)
    params = open_params(device, "gpu_layout=row_major")
    with gpubp.Stream(path, "w", params) as s:
        s.begin_step()
        s.write("T", device.from_numpy(full[:2]), start=(0, 0), count=(2, 6), shape=(4, 6))
        s.write("T", device.from_numpy(full[2:]), start=(2, 0), count=(2, 6))
        s.end_step()
    with gpubp.Stream(path, "r", params) as s:
        s.begin_step()
        buf = device.zeros((4, 6), np.int32)
        s.read("T", buffer=buf)
        check(device, buf, full)
        buf = device.zeros((3, 2), np.int32)
        s.read("T", buffer=buf, start=(1, 2), count=(3, 2))
        check(device, buf, full[1:4, 2:4])
    with gpubp.Stream(path, "rra") as s:
        np.testing.assert_array_equal(s.read("T"), full)


def read_seed_example_on_device(device, engine):
    """The seed's GPU example as ADIOS2 wrote it (gpu/ENGINE), step by step into device memory."""
    golden = os.environ.get("GPUBP_GOLDEN_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "golden")
    path = os.path.join(golden, "gpu", engine, "StepsWriteReadCuPy.bp")
    assert os.path.isdir(path), "golden dataset missing: %s" % path
    with gpubp.Stream(path, "r", device.params) as s:
        steps = 0
        for _ in s.steps():
            step = s.current_step()
            buf = device.zeros(s.shape("gpuArray", memory="gpu"), np.float32)
            s.read("gpuArray", buffer=buf)
            check(device, buf, GPU[step])
            np.testing.assert_array_equal(s.read("cpuArray"), CPU[step])
            steps += 1
        assert steps == 2
    return path


def test_adios2_written_file_on_device(device):
    """The file ADIOS2 2.12 wrote for the seed scenario reads back the same on the device."""
    read_seed_example_on_device(device, "BP4")


def test_adios2_bp5_file_on_device(device):
    """The same scenario written by ADIOS2's BP5 engine (gpu/BP5, issue 21): into device memory
    step by step and in random access."""
    path = read_seed_example_on_device(device, "BP5")
    assert os.path.isfile(os.path.join(path, "mmd.0"))
    with gpubp.Stream(path, "rra", device.params) as s:
        for step in range(2):
            full = device.zeros(s.shape("gpuArray", memory="gpu"), np.float32)
            s.read("gpuArray", buffer=full, step=step)
            check(device, full, GPU[step])


def test_producer_stream_is_synchronised_on_put_and_get(device, tmp_bp, monkeypatch):
    """__cuda_array_interface__ v3: the array's stream is waited for before libgpubp uses the
    pointer, for a write and for a read into the array."""
    if device.name != "sim":
        pytest.skip("checked with stand-in streams on the simulated device")
    from gpubp import _cuda
    calls = []
    monkeypatch.setattr(_cuda, "synchronize", calls.append)
    path = tmp_bp()
    src = device.from_numpy(GPU0)
    src.stream = 0x77
    with gpubp.Stream(path, "w", device.params) as s:
        s.write("g", src)
    assert calls == [0x77]
    with gpubp.Stream(path, "rra", device.params) as s:
        dst = device.zeros((2, 3), np.float32)
        dst.stream = 0x99
        s.read("g", buffer=dst)
    assert calls == [0x77, 0x99]
    check(device, dst, GPU0)


def test_non_contiguous_device_array_is_refused(device, tmp_bp):
    path = tmp_bp()
    a = device.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    t = a.T if device.name != "sim" else a
    if device.name == "sim":
        t.strides = (4, 16)
        t.shape = (4, 3)
    with gpubp.Stream(path, "w", device.params) as s:
        with pytest.raises(gpubp.NotContiguousError, match="not C-contiguous"):
            s.write("t", t)
        if device.name != "sim":  # CuPy and torch make the contiguous copy themselves
            s.write("t", t, copy=True)
    if device.name != "sim":
        with gpubp.Stream(path, "r", device.params) as s:
            s.begin_step()
            buf = device.zeros((4, 3), np.float32)
            s.read("t", buffer=buf)
            check(device, buf, np.arange(12, dtype=np.float32).reshape(3, 4).T)


def test_user_stream(device, tmp_bp):
    """Arrays made on a non-blocking stream, handed to set_stream(): written and read back."""
    if device.name == "sim":
        pytest.skip("CUDA streams: CuPy and torch only")
    path = tmp_bp()
    st, ctx = device.stream()
    with ctx:
        src = device.from_numpy(np.arange(1 << 20, dtype=np.float32)) * 3
    with gpubp.Stream(path, "w") as s:
        s.set_stream(st)
        s.write("x", src)
    with gpubp.Stream(path, "r") as s:
        s.begin_step()
        s.set_stream(st)
        with ctx:
            buf = device.zeros((1 << 20,), np.float32)
            s.read("x", buffer=buf)
        st.synchronize()
        check(device, buf, np.arange(1 << 20, dtype=np.float32) * 3)
