"""gpubp.lowlevel: the C API one to one, the library loader and the exceptions."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gpubp
from gpubp import lowlevel as ll
from gpubp.lowlevel import MemorySpace, Mode, ShapeKind, Status, Type

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def header_version():
    with open(os.path.join(ROOT, "include", "gpubp", "version.h")) as f:
        return re.search(r'GPUBP_VERSION_STRING "([^"]+)"', f.read()).group(1)


def test_library_version_matches_header_and_package():
    assert ll.gpubp_version() == header_version()
    assert gpubp.library_version() == header_version()


def test_codec_versions():
    v = ll.gpubp_codec_versions()
    assert v.startswith("zlib "), v
    f = ll.gpubp_features()
    assert ("libzstd " in v) == bool(f & 32), v  # GPUBP_FEATURE_ZSTD
    assert ("liblz4 " in v) == bool(f & 16), v  # GPUBP_FEATURE_LZ4
    assert gpubp.__version__ == header_version()


def test_every_c_function_is_mirrored():
    """Each GPUBP_API function of gpubp.h and gpubp/cuda.h has a wrapper of the same name."""
    names = set()
    for h in ("gpubp.h", os.path.join("gpubp", "cuda.h")):
        with open(os.path.join(ROOT, "include", h)) as f:
            names |= set(re.findall(r"GPUBP_API [^;(]*?\b(gpubp_\w+)\s*\(", f.read()))
    assert len(names) >= 40
    missing = sorted(n for n in names if not callable(getattr(ll, n, None)))
    assert missing == []


def test_enums_have_the_pinned_values():
    assert [int(Type[n]) for n in ("INT8", "INT64", "FLOAT", "DOUBLE", "STRING",
                                   "DOUBLE_COMPLEX", "UINT8", "UINT64", "CHAR")] == \
        [0, 4, 5, 6, 9, 11, 50, 54, 55]
    assert (Status.END_OF_STREAM, Status.ERR_NOT_FOUND, Status.ERR_MEMORY_SPACE,
            Status.ERR_INTERNAL) == (1, -2, -15, -99)
    assert (Mode.WRITE, Mode.READ_RANDOM_ACCESS, MemorySpace.GPU) == (0, 3, 2)


def test_type_size_and_name():
    sizes = {Type.INT8: 1, Type.INT16: 2, Type.INT32: 4, Type.INT64: 8, Type.FLOAT: 4,
             Type.DOUBLE: 8, Type.FLOAT_COMPLEX: 8, Type.DOUBLE_COMPLEX: 16, Type.UINT8: 1,
             Type.UINT16: 2, Type.UINT32: 4, Type.UINT64: 8, Type.STRING: 0, Type.CHAR: 1}
    for t, size in sizes.items():
        assert ll.gpubp_type_size(t) == size
    assert ll.gpubp_type_name(Type.INT32) == "int32_t"
    assert ll.gpubp_type_name(Type.DOUBLE_COMPLEX) == "double complex"
    assert ll.gpubp_type_name(Type.STRING) == "string"


def test_strerror():
    assert ll.gpubp_strerror(Status.ERR_INVALID_SELECTION) == "invalid selection"
    assert ll.gpubp_strerror(12345) == "unknown status"


def test_error_carries_status_and_library_message(tmp_bp):
    missing = tmp_bp("missing.bp")
    with pytest.raises(gpubp.Error) as e:
        ll.gpubp_open(missing, Mode.READ)
    assert e.value.status == Status.ERR_NOT_BP4
    assert "missing.bp" in e.value.message
    assert e.value.message == ll.gpubp_last_error()
    assert e.value.function == "gpubp_open"
    assert "ERR_NOT_BP4" in str(e.value)


def test_io_error_keeps_errno(tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "x.bp"
    with pytest.raises(gpubp.Error) as e:
        ll.gpubp_open(str(target), Mode.WRITE)
    assert e.value.status == Status.ERR_IO
    assert e.value.errno != 0


def test_bad_param_names_the_key(tmp_bp):
    with pytest.raises(gpubp.Error) as e:
        ll.gpubp_open(tmp_bp(), Mode.WRITE, "no_such_key=1")
    assert e.value.status == Status.ERR_PARAM
    assert "no_such_key" in e.value.message


def test_lowlevel_round_trip(tmp_bp):
    path = tmp_bp()
    data = [np.arange(6, dtype=np.int32).reshape(2, 3) * (s + 1) for s in range(2)]
    f = ll.gpubp_open(path, Mode.WRITE)
    v = ll.gpubp_define_variable(f, "v", Type.INT32, (2, 3), (0, 0), (2, 3))
    n = ll.gpubp_define_variable(f, "n", Type.UINT16)
    assert ll.gpubp_variable_name(v) == "v"
    for s in range(2):
        assert ll.gpubp_begin_step(f) == Status.OK
        assert ll.gpubp_current_step(f) == s
        ll.gpubp_set_memory_space(v, MemorySpace.HOST)
        ll.gpubp_put(f, v, data[s].ctypes.data)
        val = np.array(7 + s, np.uint16)
        ll.gpubp_put(f, n, val.ctypes.data)
        ll.gpubp_end_step(f)
    ll.gpubp_define_attribute(f, "names", Type.STRING, ["a", "bc"], 2)
    ll.gpubp_define_variable_attribute(f, "v", "unit", Type.STRING, "m", 1)
    nums = np.array([1.5, 2.5], np.float64)
    ll.gpubp_define_attribute(f, "nums", Type.DOUBLE, nums.ctypes.data, 2)
    ll.gpubp_begin_step(f)
    ll.gpubp_end_step(f)
    assert ll.gpubp_steps(f) == 3
    assert ll.gpubp_available_variables(f) == ["n", "v"]
    ll.gpubp_close(f)

    f = ll.gpubp_open(path, Mode.READ)
    for s in range(2):
        assert ll.gpubp_begin_step(f) == Status.OK
        v = ll.gpubp_inquire_variable(f, "v")
        assert ll.gpubp_variable_type(v) == Type.INT32
        assert ll.gpubp_variable_ndims(v) == 2
        assert ll.gpubp_variable_shape_kind(v) == ShapeKind.GLOBAL_ARRAY
        assert ll.gpubp_variable_shape(v, MemorySpace.HOST) == (2, 3)
        assert ll.gpubp_variable_shape(v, MemorySpace.GPU) == (3, 2)
        space = ll.gpubp_variable_memory_space(v)
        assert space == (MemorySpace.DETECT if s == 0 else MemorySpace.HOST)
        assert ll.gpubp_variable_blocks(v, 0) == 1
        start, count, lo, hi = ll.gpubp_variable_block_info(v, 0, 0)
        assert (start, count, lo, hi) == ((0, 0), (2, 3), 0, 5 * (s + 1))
        assert ll.gpubp_variable_minmax(v) == (0, 5 * (s + 1))
        assert ll.gpubp_variable_minmax_missing(v) is False
        with pytest.raises(gpubp.Error) as e:  # a BP4 dataset keeps no writer ranks
            ll.gpubp_variable_block_writer(v, 0, 0)
        assert e.value.status == Status.ERR_NOT_SUPPORTED
        ll.gpubp_set_memory_space(v, MemorySpace.HOST)
        ll.gpubp_set_selection(v, (1, 1), (1, 2))
        assert ll.gpubp_selection_size(v) == 8
        out = np.zeros(2, np.int32)
        ll.gpubp_get(f, v, out.ctypes.data)
        np.testing.assert_array_equal(out, data[s][1, 1:])
        ll.gpubp_set_memory_selection(v, (0, 1), (1, 4))
        wide = np.full(4, -1, np.int32)
        ll.gpubp_get(f, v, wide.ctypes.data, ll.Launch.DEFERRED)
        ll.gpubp_perform_gets(f)
        np.testing.assert_array_equal(wide, [-1, 4 * (s + 1), 5 * (s + 1), -1])
        ll.gpubp_set_memory_selection(v, None, None)
        n = ll.gpubp_inquire_variable(f, "n")
        one = np.zeros((), np.uint16)
        ll.gpubp_get(f, n, one.ctypes.data)
        assert one == 7 + s
        ll.gpubp_end_step(f)
    assert ll.gpubp_begin_step(f) == Status.OK   # the third, empty step
    assert ll.gpubp_available_attributes(f) == ["names", "nums", "v/unit"]
    assert ll.gpubp_inquire_attribute(f, "names") == (Type.STRING, 2, True)
    assert [ll.gpubp_attribute_string(f, "names", i) for i in range(2)] == ["a", "bc"]
    assert ll.gpubp_attribute_string(f, "v/unit", 0) == "m"
    got = np.zeros(2, np.float64)
    ll.gpubp_attribute_data(f, "nums", got.ctypes.data)
    np.testing.assert_array_equal(got, nums)
    with pytest.raises(gpubp.Error) as e:
        ll.gpubp_attribute_data(f, "names", got.ctypes.data)
    assert e.value.status == Status.ERR_TYPE_MISMATCH
    ll.gpubp_end_step(f)
    assert ll.gpubp_begin_step(f) == Status.END_OF_STREAM
    ll.gpubp_close(f)


def test_gpu_without_cuda_is_not_supported(tmp_bp):
    if gpubp.has_cuda():
        pytest.skip("this library has CUDA")
    f = ll.gpubp_open(tmp_bp(), Mode.WRITE)
    try:
        v = ll.gpubp_define_variable(f, "g", Type.FLOAT, (2,), (0,), (2,))
        with pytest.raises(gpubp.Error) as e:
            ll.gpubp_set_memory_space(v, MemorySpace.GPU)
        assert e.value.status == Status.ERR_NOT_SUPPORTED
        assert "'g'" in e.value.message
    finally:
        ll.gpubp_close(f)


# --- the loader ------------------------------------------------------------------------------

def _python(code, **env):
    e = dict(os.environ)
    e.update(env)
    if os.environ.get("GPUBP_TEST_INSTALLED") != "1":  # else: the installed package
        e["PYTHONPATH"] = os.path.join(ROOT, "bindings", "python")
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True)


def test_loader_takes_gpubp_library_file_or_folder():
    lib = gpubp.library_path()
    assert os.path.exists(lib)
    r = _python("import gpubp; print(gpubp.library_path())", GPUBP_LIBRARY=lib)
    assert r.returncode == 0 and r.stdout.strip() == lib
    r = _python("import gpubp; print(gpubp.library_version())",
                GPUBP_LIBRARY=os.path.dirname(lib))
    assert r.returncode == 0 and r.stdout.strip() == header_version()


def test_loader_reports_a_bad_gpubp_library_clearly(tmp_path):
    bad = str(tmp_path / "nothing.so")
    r = _python("import gpubp\n"
                "try:\n"
                "    gpubp.library_version()\n"
                "except gpubp.LibraryNotFoundError as e:\n"
                "    print('LNF', e)\n", GPUBP_LIBRARY=bad)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("LNF libgpubp shared library not found")
    assert "GPUBP_LIBRARY=" + bad in r.stdout


def test_import_needs_no_library():
    """import gpubp works anywhere; the library is loaded at the first call."""
    r = _python("import gpubp; print(gpubp.Stream.__name__)", GPUBP_LIBRARY="/nonexistent.so")
    assert r.returncode == 0 and r.stdout.strip() == "Stream"


def test_loader_finds_the_build_tree_without_environment(monkeypatch):
    """From a source checkout the package finds a build*/src/libgpubp.so by itself."""
    import glob
    from gpubp import _loader
    if os.environ.get("GPUBP_TEST_INSTALLED") == "1":
        pytest.skip("an installed package does not look into a checkout (test_installed.py)")
    built = glob.glob(os.path.join(ROOT, "build*", "src", "libgpubp.so"))
    if not built:
        pytest.skip("no build*/src/libgpubp.so in the checkout (built out of tree)")
    monkeypatch.delenv("GPUBP_LIBRARY", raising=False)
    cands = _loader.candidates()
    assert set(built) <= set(cands)
    # the explicit variable is the only candidate when set
    monkeypatch.setenv("GPUBP_LIBRARY", built[0])
    assert _loader.candidates() == [built[0]]
