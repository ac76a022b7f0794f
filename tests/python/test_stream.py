"""gpubp.Stream with host memory: types, selections, steps, attributes, buffers, errors."""

import array
import os
import subprocess

import numpy as np
import pytest

import gpubp
from gpubp import Status, Type

NUMERIC = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
           np.float32, np.float64, np.complex64, np.complex128]


def sample(dtype, shape=(3, 4), step=0):
    n = int(np.prod(shape))
    base = np.arange(n) + 10 * step
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (base + 1j * (n - base)).astype(dt).reshape(shape)
    if dt.kind == "i":
        return (base - n // 2).astype(dt).reshape(shape)
    return base.astype(dt).reshape(shape)


def bpls(path, *args):
    exe = os.environ.get("GPUBP_BPLS")
    if not exe or not os.path.exists(exe):
        pytest.skip("gpubpls not built (GPUBP_BPLS unset)")
    out = subprocess.run([exe, *args, path], capture_output=True, text=True, check=True).stdout
    return " ".join(out.split())  # columns are aligned to the longest name: compare words


# --- types -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_every_numeric_dtype_round_trips(tmp_bp, dtype):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        for step in range(2):
            s.begin_step()
            s.write("a", sample(dtype, step=step))
            s.write("v", sample(dtype, (1,), step).reshape(())[()])
            s.end_step()
    with gpubp.Stream(path, "r") as s:
        for _ in s.steps():
            step = s.current_step()
            a = s.read("a")
            assert a.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(a, sample(dtype, step=step))
            v = s.read("v")
            assert isinstance(v, np.generic) and v.dtype == np.dtype(dtype)
            assert v == sample(dtype, (1,), step)[0]
            assert s.dtype("a") == np.dtype(dtype)


def test_dtype_mapping_both_ways():
    for dtype in NUMERIC:
        t = gpubp.gpubp_type(dtype)
        assert gpubp.dtype_of(t) == np.dtype(dtype)
        assert gpubp.lowlevel.gpubp_type_size(t) == np.dtype(dtype).itemsize
    assert gpubp.gpubp_type(np.float32) == Type.FLOAT
    assert gpubp.gpubp_type(np.complex128) == Type.DOUBLE_COMPLEX
    assert gpubp.gpubp_type("U5") == Type.STRING
    assert gpubp.dtype_of(Type.CHAR) == np.dtype(np.int8)
    with pytest.raises(TypeError, match="float16"):
        gpubp.gpubp_type(np.float16)
    with pytest.raises(TypeError, match="uint8"):
        gpubp.gpubp_type(np.bool_)
    with pytest.raises(TypeError):
        gpubp.dtype_of(Type.STRING)


def test_python_numbers_and_strings_as_single_values(tmp_bp):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        for step in range(3):
            s.begin_step()
            s.write("i", 7 * step)
            s.write("x", 0.5 + step)
            s.write("z", complex(step, -step))
            s.write("name", "step \u00e9 %d" % step)
            s.end_step()
    with gpubp.Stream(path, "r") as s:
        for _ in s.steps():
            k = s.current_step()
            assert s.read("i") == 7 * k and s.read("i").dtype == np.int64
            assert s.read("x") == 0.5 + k
            assert s.read("z") == complex(k, -k)
            assert s.read("name") == "step \u00e9 %d" % k
            assert s.shape("name") == ()
            assert s.dtype("name") is str
            with pytest.raises(TypeError, match="returned as a str"):
                s.read("name", buffer=bytearray(20))
    with gpubp.Stream(path, "rra") as s:
        assert s.read("name", step=1, step_count=2) == ["step \u00e9 1", "step \u00e9 2"]
        np.testing.assert_array_equal(s.read("i", step=0, step_count=3), [0, 7, 14])
        assert s.read("x", step=2) == 2.5
    out = bpls(path, "-l")
    assert "string name 3*scalar" in out
    assert "int64_t i 3*scalar = 0 / 14" in out


def test_bool_and_float16_are_refused_with_a_hint(tmp_bp):
    with gpubp.Stream(tmp_bp(), "w") as s:
        with pytest.raises(TypeError, match="write it as uint8"):
            s.write("b", np.array([True, False]))
        with pytest.raises(TypeError, match="float16"):
            s.write("h", np.zeros(3, np.float16))


def test_big_endian_needs_copy(tmp_bp):
    path = tmp_bp()
    be = np.arange(4, dtype=">i4")
    with gpubp.Stream(path, "w") as s:
        with pytest.raises(TypeError, match="byte order"):
            s.write("be", be)
        s.write("be", be, copy=True)
    with gpubp.Stream(path, "rra") as s:
        np.testing.assert_array_equal(s.read("be"), [0, 1, 2, 3])


# --- arrays in ---------------------------------------------------------------------------------

def test_non_contiguous_is_an_error_unless_copy(tmp_bp):
    path = tmp_bp()
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    with gpubp.Stream(path, "w") as s:
        with pytest.raises(gpubp.NotContiguousError, match="copy=True"):
            s.write("t", base.T)
        with pytest.raises(gpubp.NotContiguousError):
            s.write("t", base[:, ::2])
        s.write("t", base.T, copy=True)
    with gpubp.Stream(path, "rra") as s:
        np.testing.assert_array_equal(s.read("t"), base.T)
        with pytest.raises(gpubp.NotContiguousError, match="in place"):
            s.read("t", buffer=np.zeros((3, 4)).T)


def test_buffer_protocol_and_dlpack_objects(tmp_bp):
    class OnlyDLPack:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, stream=None):
            return self._a.__dlpack__()

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("numpy without DLPack")
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        s.write("arr", array.array("d", [1.5, 2.5, 3.5]))
        s.write("ba", bytearray(b"\x01\x02\x03"))
        s.write("dl", OnlyDLPack(np.arange(6, dtype=np.int16).reshape(2, 3)))
    with gpubp.Stream(path, "rra") as s:
        np.testing.assert_array_equal(s.read("arr"), [1.5, 2.5, 3.5])
        np.testing.assert_array_equal(s.read("ba"), [1, 2, 3])
        assert s.read("ba").dtype == np.uint8
        target = np.zeros((2, 3), np.int16)
        dl = OnlyDLPack(target)
        assert s.read("dl", buffer=dl) is dl
        np.testing.assert_array_equal(target, np.arange(6).reshape(2, 3))
        mv = bytearray(6)
        s.read("ba", buffer=memoryview(mv)[:3])
        assert mv[:3] == b"\x01\x02\x03"


def test_non_arrays_are_refused(tmp_bp):
    with gpubp.Stream(tmp_bp(), "w") as s:
        with pytest.raises(TypeError, match="not an array"):
            s.write("o", object())


# --- selections and blocks -------------------------------------------------------------------

@pytest.fixture
def blocks_file(tmp_bp):
    """T: global (4, 6) float64 written as two blocks of two rows per step, 3 steps;
    L: a local array with blocks of 2 and 3 elements; shape grows for G."""
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        for step in range(3):
            s.begin_step()
            full = sample(np.float64, (4, 6), step)
            s.write("T", full[:2], start=(0, 0), count=(2, 6), shape=(4, 6))
            s.write("T", full[2:], start=(2, 0), count=(2, 6))
            s.write("L", np.arange(2, dtype=np.int32) + step, local=True)
            s.write("L", np.arange(3, dtype=np.int32) * 10 + step, local=True)
            s.write("G", np.full(step + 1, step, np.uint8), shape=(step + 1,))
            s.end_step()
    return path


def test_box_start_count_in_read_mode(blocks_file):
    with gpubp.Stream(blocks_file, "r") as s:
        for _ in s.steps():
            full = sample(np.float64, (4, 6), s.current_step())
            np.testing.assert_array_equal(s.read("T"), full)
            np.testing.assert_array_equal(s.read("T", start=(1, 2), count=(2, 3)),
                                          full[1:3, 2:5])
            np.testing.assert_array_equal(s.read("T", start=(3, 4)), full[3:, 4:])
            np.testing.assert_array_equal(s.read("T", count=(1, 6)), full[:1])
            # a selection does not stick to the next read
            np.testing.assert_array_equal(s.read("T"), full)


def test_block_selection_global_and_local(blocks_file):
    with gpubp.Stream(blocks_file, "r") as s:
        for _ in s.steps():
            k = s.current_step()
            full = sample(np.float64, (4, 6), k)
            np.testing.assert_array_equal(s.read("T", block=1), full[2:])
            np.testing.assert_array_equal(s.read("T", block=0), full[:2])
            np.testing.assert_array_equal(s.read("T"), full)
            np.testing.assert_array_equal(s.read("L", block=0), np.arange(2) + k)
            np.testing.assert_array_equal(s.read("L", block=1), np.arange(3) * 10 + k)
            np.testing.assert_array_equal(s.read("L", block=1, start=(1,), count=(2,)),
                                          np.array([10, 20]) + k)
            with pytest.raises(gpubp.Error) as e:
                s.read("L", block=2)
            assert e.value.status == Status.ERR_INVALID_SELECTION


def test_step_selections_in_random_access(blocks_file):
    with gpubp.Stream(blocks_file, "rra") as s:
        assert s.num_steps() == 3
        both = s.read("T", step=1, step_count=2)
        assert both.shape == (2, 4, 6)
        np.testing.assert_array_equal(both[0], sample(np.float64, (4, 6), 1))
        np.testing.assert_array_equal(both[1], sample(np.float64, (4, 6), 2))
        np.testing.assert_array_equal(s.read("T", start=(0, 5), count=(4, 1), step=2),
                                      sample(np.float64, (4, 6), 2)[:, 5:])
        assert s.read("T", step=0, step_count=1).shape == (1, 4, 6)
        assert s.shape("G") == (3,)
        assert s.shape("G", step=0) == (1,)
        np.testing.assert_array_equal(s.read("G", step=2), [2, 2, 2])
        np.testing.assert_array_equal(s.read("G", step=1), [1, 1])
        with pytest.raises(gpubp.Error) as e:
            s.read("T", step=3)
        assert e.value.status == Status.ERR_INVALID_STEP
        with pytest.raises(ValueError, match="mode 'rra'"):
            s.steps().__next__()


def test_step_selection_needs_rra(blocks_file):
    with gpubp.Stream(blocks_file, "r") as s:
        s.begin_step()
        with pytest.raises(ValueError, match="mode 'rra'"):
            s.read("T", step=1)


def test_shapes_in_both_layouts(blocks_file, tmp_bp):
    with gpubp.Stream(blocks_file, "r") as s:
        s.begin_step()
        assert s.shape("T") == (4, 6)
        assert s.shape("T", memory="host") == (4, 6)
        assert s.shape("T", memory="gpu") == (6, 4)
        assert s.shape("T", memory=gpubp.MemorySpace.GPU) == (6, 4)
        with pytest.raises(ValueError, match="'host' or 'gpu'"):
            s.shape("T", memory="tpu")
    with gpubp.Stream(tmp_bp(), "w") as s:
        s.write("w", np.zeros((2, 5)))
        assert s.shape("w") == (2, 5)
        assert s.shape("w", memory="gpu") == (5, 2)


def test_selection_errors_come_from_the_library(blocks_file):
    with gpubp.Stream(blocks_file, "r") as s:
        s.begin_step()
        with pytest.raises(gpubp.Error) as e:
            s.read("T", start=(3, 0), count=(2, 6))
        assert e.value.status == Status.ERR_INVALID_SELECTION
        assert "'T'" in e.value.message
        with pytest.raises(gpubp.Error) as e:
            s.read("T", count=(2,))
        assert e.value.status == Status.ERR_INVALID_DIMS
        with pytest.raises(gpubp.Error) as e:
            s.read("nope")
        assert e.value.status == Status.ERR_NOT_FOUND
        assert "nope" in e.value.message


# --- buffers -----------------------------------------------------------------------------------

def test_read_into_buffers(blocks_file):
    with gpubp.Stream(blocks_file, "r") as s:
        s.begin_step()
        full = sample(np.float64, (4, 6), 0)
        buf = np.zeros((4, 6))
        assert s.read("T", buffer=buf) is buf
        np.testing.assert_array_equal(buf, full)
        flat = np.zeros(6)  # same element count, another shape: accepted
        s.read("T", start=(1, 0), count=(1, 6), buffer=flat)
        np.testing.assert_array_equal(flat, full[1])
        with pytest.raises(ValueError, match="holds 5 elements"):
            s.read("T", buffer=np.zeros(5))
        with pytest.raises(TypeError, match="dtype"):
            s.read("T", buffer=np.zeros((4, 6), np.float32))
        ro = np.zeros((4, 6))
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            s.read("T", buffer=ro)
        with pytest.raises(ValueError, match="read-only"):
            s.read("T", buffer=memoryview(bytes(4 * 6 * 8)).cast("d"))


# --- steps and modes ---------------------------------------------------------------------------

def test_implicit_step_and_append(tmp_bp):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        s.write("x", np.arange(3))          # implicit step 0
        s.begin_step()                      # ends it, begins step 1
        s.write("x", np.arange(3) + 1)
        s.end_step()
        s.write("x", np.arange(3) + 2)      # implicit step 2, ended by close
    with gpubp.Stream(path, "a") as s:
        for _ in s.steps(2):
            s.write("x", np.arange(3) + 3 + s.current_step() - 3)
    with gpubp.Stream(path, "rra") as s:
        assert s.num_steps() == 5
        got = s.read("x", step=0, step_count=5)
        np.testing.assert_array_equal(got, np.arange(3) + np.arange(5)[:, None])


def test_steps_loop_can_be_left_and_resumed(tmp_bp):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        for _ in s.steps(4):
            s.write("k", s.current_step())
    with gpubp.Stream(path, "r") as s:
        for _ in s.steps():
            if s.current_step() == 1:
                break
        # the step was ended when the loop was left
        assert s.begin_step() == gpubp.StepStatus.OK
        assert s.read("k") == 2
        s.end_step()
        assert [int(t.read("k")) for t in s.steps()] == [3]
        assert s.begin_step() == gpubp.StepStatus.END_OF_STREAM


def test_steps_with_a_limit(tmp_bp):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        for _ in s.steps(3):
            s.write("k", s.current_step())
    with gpubp.Stream(path, "r") as s:
        assert [int(t.read("k")) for t in s.steps(2)] == [0, 1]


def test_mode_and_state_errors(tmp_bp):
    path = tmp_bp()
    with pytest.raises(ValueError, match="mode"):
        gpubp.Stream(path, "x")
    with pytest.raises(gpubp.Error) as e:
        gpubp.Stream(path, "r")
    assert e.value.status == Status.ERR_NOT_BP4
    with pytest.raises(gpubp.Error) as e:
        gpubp.Stream(path, "w", {"gpu_layout": "diagonal"})
    assert e.value.status == Status.ERR_PARAM and "gpu_layout" in e.value.message
    s = gpubp.Stream(path, "w", {"fsync": True, "gpu_layout": "row_major"})
    with pytest.raises(ValueError, match="mode 'r' or 'rra'"):
        s.read("x")
    with pytest.raises(ValueError, match="number of steps"):
        next(s.steps())
    s.write("x", np.zeros(2))
    with pytest.raises(TypeError, match="the variable is double"):
        s.write("x", np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="count"):
        s.write("x", np.zeros(3), count=(2,))
    s.close()
    s.close()
    assert s.closed
    with pytest.raises(ValueError, match="closed"):
        s.write("x", np.zeros(2))
    with gpubp.Stream(path, "r") as r:
        with pytest.raises(ValueError, match="mode 'w' or 'a'"):
            r.write("x", np.zeros(2))
        with pytest.raises(gpubp.Error) as e:
            r.read("x")  # no step open
        assert e.value.status == Status.ERR_WRONG_MODE
    assert r.closed


def test_available_variables(blocks_file):
    with gpubp.Stream(blocks_file, "r") as s:
        s.begin_step()
        info = s.available_variables()
        assert list(info) == ["G", "L", "T"]
        assert info["T"] == {"type": "double", "shape": (4, 6), "steps": 1,
                             "single_value": False, "kind": "global_array",
                             "memory_space": None}
        assert info["L"]["kind"] == "local_array"
        s.read("T")
        assert s.available_variables()["T"]["memory_space"] == "host"
    with gpubp.Stream(blocks_file, "rra") as s:
        info = s.available_variables()
        assert info["G"]["shape"] == (3,) and info["G"]["steps"] == 3


# --- attributes --------------------------------------------------------------------------------

def test_attributes_in_and_out(tmp_bp):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        s.write_attribute("unit", "kelvin")
        s.write_attribute("names", ["x", "y\u00e9", "z"])
        s.write_attribute("dt", 0.25)
        s.write_attribute("n", np.int16(-3))
        s.write_attribute("dims", [4, 6])
        s.write_attribute("c", np.array([1 + 2j], np.complex64))
        s.write_attribute("grid", np.arange(6, dtype=np.uint32).reshape(2, 3))
        s.write_attribute("desc", "temperature", variable="T")
        s.write_attribute("range", np.array([0.0, 100.0]), variable="T")
        with pytest.raises(TypeError, match="bool"):
            s.write_attribute("flag", True)
        s.write("T", np.zeros(3))
    with gpubp.Stream(path, "r") as s:
        s.begin_step()
        assert s.read_attribute("unit") == "kelvin"
        assert s.read_attribute("names") == ["x", "y\u00e9", "z"]
        dt = s.read_attribute("dt")
        assert dt == 0.25 and dt.dtype == np.float64
        n = s.read_attribute("n")
        assert n == -3 and n.dtype == np.int16
        np.testing.assert_array_equal(s.read_attribute("dims"), [4, 6])
        c = s.read_attribute("c")
        assert c == 1 + 2j and c.dtype == np.complex64  # one element: a single value
        np.testing.assert_array_equal(s.read_attribute("grid"), np.arange(6))
        assert s.read_attribute("desc", variable="T") == "temperature"
        assert s.read_attribute("T/desc") == "temperature"
        np.testing.assert_array_equal(s.read_attribute("range", "T"), [0.0, 100.0])
        attrs = s.available_attributes()
        assert list(attrs) == sorted(attrs)
        assert attrs["unit"] == {"type": "string", "elements": 1, "value": "kelvin"}
        assert attrs["grid"]["type"] == "uint32_t" and attrs["grid"]["elements"] == 6
        assert set(s.available_attributes(variable="T")) == {"desc", "range"}
        with pytest.raises(gpubp.Error) as e:
            s.read_attribute("nope")
        assert e.value.status == Status.ERR_NOT_FOUND
    out = bpls(path, "-a", "-l")
    assert 'string unit attr = "kelvin"' in out


def test_compression_operation(tmp_bp):
    path = tmp_bp()
    data = np.tile(np.arange(100, dtype=np.float64), 50)
    with gpubp.Stream(path, "w") as s:
        try:
            s.write("z", data, operations=[("zlib", {"level": 6})])
        except gpubp.Error as e:
            if e.status in (Status.ERR_NOT_SUPPORTED, Status.ERR_CODEC):
                pytest.skip("no zlib operator in this library: %s" % e.message)
            raise
    with gpubp.Stream(path, "rra") as s:
        np.testing.assert_array_equal(s.read("z"), data)
    size = os.path.getsize(os.path.join(path, "data.0"))
    assert size < data.nbytes // 4


def test_zero_size_blocks(tmp_bp):
    path = tmp_bp()
    with gpubp.Stream(path, "w") as s:
        s.write("e", np.zeros((0, 3)), start=(0, 0), count=(0, 3), shape=(4, 3))
        s.write("e", np.ones((4, 3)), start=(0, 0), count=(4, 3))
    with gpubp.Stream(path, "rra") as s:
        np.testing.assert_array_equal(s.read("e"), np.ones((4, 3)))
        assert s.read("e", start=(1, 0), count=(0, 3)).shape == (0, 3)
