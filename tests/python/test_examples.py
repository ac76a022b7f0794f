"""examples/python: exact output and file listing on a GPU; a clear message without one."""

import os
import subprocess
import sys

import pytest

import gpubp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
EXAMPLES = {
    "cupy": ("steps_write_read_cupy.py", "StepsWriteReadCuPy.bp"),
    "torch": ("steps_write_read_torch.py", "StepsWriteReadTorch.bp"),
}


def _gpu_ready(backend):
    """None when the example can run here, else why not."""
    try:
        if backend == "cupy":
            import cupy
            if cupy.cuda.runtime.getDeviceCount() < 1:
                return "no CUDA device"
        else:
            import torch
            if not torch.cuda.is_available():
                return "no CUDA device"
    except Exception as e:  # not installed, no driver
        return "%s unavailable: %s" % (backend, e)
    if not gpubp.has_cuda():
        return "libgpubp built without CUDA"
    return None


def _run(script, cwd):
    env = dict(os.environ)
    if os.environ.get("GPUBP_TEST_INSTALLED") != "1":  # else: the installed package
        env["PYTHONPATH"] = os.path.join(ROOT, "bindings", "python") + os.pathsep + \
            env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", script)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("backend", sorted(EXAMPLES))
def test_example_output_and_listing(backend, tmp_path):
    why = _gpu_ready(backend)
    if why:
        if os.environ.get("GPUBP_REQUIRE_GPU") == "1":
            pytest.fail("GPUBP_REQUIRE_GPU=1 but the %s example cannot run: %s" % (backend, why))
        pytest.skip("%s example needs a GPU: %s" % (backend, why))
    script, dataset = EXAMPLES[backend]
    r = _run(script, str(tmp_path))
    assert r.returncode == 0, r.stderr
    with open(os.path.join(HERE, "expected", script.replace(".py", ".txt"))) as f:
        assert r.stdout == f.read()
    bpls = os.environ.get("GPUBP_BPLS")
    if bpls and os.path.exists(bpls):
        out = subprocess.run([bpls, "-l", str(tmp_path / dataset)], capture_output=True,
                             text=True, check=True).stdout
        assert "float    gpuArray  2*{3, 2}" in out, out
        assert "float    cpuArray  2*{2, 3}" in out, out
    with gpubp.Stream(str(tmp_path / dataset), "rra") as s:
        assert s.shape("gpuArray") == (3, 2)
        assert s.read("gpuArray", step=1).ravel().tolist() == [0, 2, 4, 6, 8, 10]


@pytest.mark.parametrize("backend", sorted(EXAMPLES))
def test_example_without_gpu_says_why(backend, tmp_path):
    if not _gpu_ready(backend):
        pytest.skip("a GPU is there: the example runs in test_example_output_and_listing")
    r = _run(EXAMPLES[backend][0], str(tmp_path))
    assert r.returncode == 1
    assert r.stdout == ""
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(EXAMPLES[backend][0] + ": ")
    assert any(w in r.stderr for w in ("GPU", "CUDA", "not installed")), r.stderr
