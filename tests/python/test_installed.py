"""The package as pip installs it (.ci/run's wheel stage, GPUBP_TEST_INSTALLED=1): the wheel holds
libgpubp.so beside the Python files, and a script with no GPUBP_* variable and no PYTHONPATH
writes and reads steps. Skipped when the tests run on the source tree (ctest python_host)."""

import os
import subprocess
import sys

import pytest

import gpubp

pytestmark = pytest.mark.skipif(os.environ.get("GPUBP_TEST_INSTALLED") != "1",
                                reason="the source tree's package (GPUBP_TEST_INSTALLED unset)")

SCRIPT = r'''
import os, sys
import numpy as np
import gpubp
a = np.arange(12, dtype=np.float64).reshape(3, 4)
path = os.path.join(sys.argv[1], "two_steps.bp")
with gpubp.Stream(path, "w") as s:
    for _ in s.steps(2):
        s.write("a", a + 100 * s.current_step())
        s.write("step", np.int32(s.current_step()))
with gpubp.Stream(path, "r") as s:
    got = [(s.read("a"), int(s.read("step"))) for _ in s.steps()]
assert len(got) == 2, got
for i, (arr, step) in enumerate(got):
    assert step == i and arr.shape == (3, 4) and np.array_equal(arr, a + 100 * i), (i, arr)
print(gpubp.__file__)
print(gpubp.library_path())
'''


def _clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith("GPUBP_") and k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}


def test_wheel_holds_the_library():
    here = os.path.dirname(os.path.abspath(gpubp.__file__))
    lib = os.path.join(here, "libgpubp.so")
    assert os.path.isfile(lib) and not os.path.islink(lib)
    with open(lib, "rb") as f:
        assert f.read(4) == b"\x7fELF"


def test_two_steps_with_no_environment(tmp_path):
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=_clean_env(),
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pkg, lib = r.stdout.split()
    pkg_dir = os.path.dirname(os.path.abspath(pkg))
    assert pkg_dir == os.path.dirname(os.path.abspath(gpubp.__file__))
    assert lib == os.path.join(pkg_dir, "libgpubp.so")
    assert os.path.isdir(tmp_path / "two_steps.bp")


def test_gpubp_library_still_wins(tmp_path):
    """GPUBP_LIBRARY names the library even when the wheel carries one."""
    here = os.path.dirname(os.path.abspath(gpubp.__file__))
    other = tmp_path / "elsewhere"
    other.mkdir()
    with open(os.path.join(here, "libgpubp.so"), "rb") as src:
        (other / "libgpubp.so").write_bytes(src.read())
    env = _clean_env()
    env["GPUBP_LIBRARY"] = str(other / "libgpubp.so")
    r = subprocess.run([sys.executable, "-c", "import gpubp; print(gpubp.library_path())"],
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(other / "libgpubp.so")
