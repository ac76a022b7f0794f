"""Issue 18 through the Python package: ADIOS2's local values, long double and one-element string
arrays (tests/golden/localvals, written by ADIOS2 2.12.1) read exactly; the same written by the
package read back the same; numpy.longdouble maps to GPUBP_TYPE_LONG_DOUBLE."""

import os

import numpy as np
import pytest

import gpubp
from gpubp import ShapeKind, Type
from gpubp import lowlevel as ll
from gpubp._types import LONG_DOUBLE_NATIVE

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "localvals")
needs_ld = pytest.mark.skipif(not LONG_DOUBLE_NATIVE,
                              reason="numpy.longdouble is not the x87 80-bit format here")


def v_i32(s, b):
    return 100 * (s + 1) + 7 * b - 13


def write_localvals(path):
    with gpubp.Stream(path, "w") as s:
        for step in range(3):
            s.begin_step()
            for b in range(4):
                s.write("lv_i32", np.int32(v_i32(step, b)), local_value=True)
                s.write("lv_str", "w%ds%d" % (b, step), local_value=True)
                if LONG_DOUBLE_NATIVE:
                    s.write("lv_ld", np.longdouble(step * 4 + b) / np.longdouble(3),
                            local_value=True)
            s.end_step()
    return path


@pytest.fixture(params=["adios2", "gpubp"])
def localvals(request, tmp_bp):
    if request.param == "adios2":
        return os.path.join(GOLDEN, "localvals.bp")
    return write_localvals(tmp_bp("localvals.bp"))


def test_local_values_random_access(localvals):
    with gpubp.Stream(localvals, "rra") as s:
        info = s.available_variables()["lv_i32"]
        assert info["kind"] == "local_value"
        assert info["shape"] == (4,)
        assert info["steps"] == 3
        all_steps = s.read("lv_i32", step=0, step_count=3)
        assert all_steps.shape == (3, 4)
        assert all_steps.tolist() == [[v_i32(t, b) for b in range(4)] for t in range(3)]
        assert s.read("lv_i32", [2], [2], step=1).tolist() == [v_i32(1, 2), v_i32(1, 3)]
        for b in range(4):
            assert s.read("lv_i32", block=b, step=2).tolist() == [v_i32(2, b)]
        assert s.read("lv_str", step=1) == ["w0s1", "w1s1", "w2s1", "w3s1"]
        assert s.read("lv_str", block=2, step=0) == "w2s0"


def test_local_values_read_mode(localvals):
    with gpubp.Stream(localvals, "r") as s:
        step = 0
        for _ in s.steps():
            assert s.read("lv_i32").tolist() == [v_i32(step, b) for b in range(4)]
            step += 1
        assert step == 3


@needs_ld
def test_long_double_local_values(localvals):
    with gpubp.Stream(localvals, "rra") as s:
        assert s.dtype("lv_ld") == np.dtype(np.longdouble)
        got = s.read("lv_ld", step=0, step_count=3)
        want = np.array([[np.longdouble(t * 4 + b) / np.longdouble(3) for b in range(4)]
                         for t in range(3)], dtype=np.longdouble)
        np.testing.assert_array_equal(got, want)


@needs_ld
def test_long_double_adios2():
    with gpubp.Stream(os.path.join(GOLDEN, "longdouble.bp"), "rra") as s:
        a = s.read("ld_arr", step=1)
        assert a.dtype == np.longdouble
        assert a[0] == np.longdouble(4) / np.longdouble(3)
        assert np.isinf(a[2]) and a[4] == np.longdouble("1e4000")
        assert s.read_attribute("position", variable="ld_arr") == np.longdouble("0.5")
        assert s.read_attribute("ld_attr") == np.longdouble("0.1")
        assert s.available_attributes()["ld_attr_arr"]["type"] == "long double"


@needs_ld
def test_long_double_write(tmp_bp):
    p = tmp_bp()
    x = np.array([1, 2, 3], dtype=np.longdouble) / np.longdouble(7)
    with gpubp.Stream(p, "w") as s:
        s.write("x", x)
        s.write_attribute("position", np.longdouble(0.5), variable="x")
    with gpubp.Stream(p, "rra") as s:
        np.testing.assert_array_equal(s.read("x"), x)
        t, n, _ = ll.gpubp_inquire_attribute(s._f, "x/position")
        assert t == Type.LONG_DOUBLE and n == 1


def test_long_double_conversions():
    buf = (ll.ctypes.c_char * 16)()
    ll.gpubp_long_double_from_double(buf, -2.5)
    assert ll.gpubp_long_double_to_double(buf) == -2.5


def test_one_element_string_arrays(tmp_bp):
    p = tmp_bp()
    with gpubp.Stream(p, "w") as s:
        s.write_attribute("single", "a")
        s.write_attribute("array1", ["a"])
        s.write("x", np.zeros(2))
    for path in (p, os.path.join(GOLDEN, "strattrs.bp")):
        with gpubp.Stream(path, "rra") as s:
            got = s.read_attribute("array1")
            assert got == (["a"] if path == p else ["only element"])
            single = s.read_attribute("single")
            assert single == ("a" if path == p else "one string")


def test_define_local_value_lowlevel(tmp_bp):
    f = ll.gpubp_open(tmp_bp(), ll.Mode.WRITE)
    v = ll.gpubp_define_variable(f, "lv", Type.INT16, (ll.LOCAL_VALUE_DIM,))
    assert ll.gpubp_variable_shape_kind(v) == ShapeKind.LOCAL_VALUE
    with pytest.raises(gpubp.Error) as e:
        ll.gpubp_define_variable(f, "bad", Type.INT16, (ll.LOCAL_VALUE_DIM + 1,), (0,), (1,))
    assert e.value.status == gpubp.Status.ERR_INVALID_DIMS
    ll.gpubp_close(f)
