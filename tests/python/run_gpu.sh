#!/usr/bin/env bash
# The GPU part of the Python package's tests (issue 6), for a machine with a CUDA GPU, CuPy and
# PyTorch (no internet needed). Runs from anywhere:
#
#   tests/python/run_gpu.sh            uses build-gpu/ (builds it with -DGPUBP_USE_CUDA=ON first
#                                      when build-gpu/src/libgpubp.so is missing)
#   env: BUILD_DIR (default build-gpu, relative to the checkout), PYTHON (default python3),
#        JOBS (build jobs, default: all cores), PYTEST_ARGS (more pytest arguments)
#
# 1. prints the library, CuPy, torch and device it found;
# 2. runs the whole Python suite (less the simulated-device cases, which need the test build's
#    libgpubp_pysim) with GPUBP_REQUIRE_GPU=1: the CuPy and torch cases of every GPU
#    read sequence (test_gpu_sequences.py) and the examples' exact output and listing
#    (test_examples.py) must run, a skip of them is a failure;
# 3. runs both examples in a temporary folder, printing their output and `gpubpls -l` of the
#    datasets they wrote.
# Exits non-zero if anything failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-build-gpu}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
py="${PYTHON:-python3}"
lib="$build/src/libgpubp.so"

if [ ! -f "$lib" ]; then
    echo "== building libgpubp with CUDA into $build"
    cmake -S "$root" -B "$build" -DGPUBP_USE_CUDA=ON -DGPUBP_BUILD_TESTS=OFF || exit 2
    cmake --build "$build" -j "${JOBS:-$(nproc)}" --target gpubp gpubpls || exit 2
fi

export GPUBP_LIBRARY="$lib"
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export GPUBP_BPLS="$build/tools/gpubpls"
export GPUBP_GOLDEN_DIR="${GPUBP_GOLDEN_DIR:-$root/tests/golden}"
export PYTHONDONTWRITEBYTECODE=1
rc=0

echo "== environment"
"$py" - <<'PYEOF' || rc=1
import gpubp
print("libgpubp", gpubp.library_version(), "at", gpubp.library_path(),
      "CUDA" if gpubp.has_cuda() else "WITHOUT CUDA")
for name in ("numpy", "cupy", "torch", "pytest"):
    try:
        m = __import__(name)
        print(name, m.__version__)
    except Exception as e:
        print(name, "NOT AVAILABLE:", e)
try:
    import torch
    print("torch device:", torch.cuda.get_device_name(0) if torch.cuda.is_available()
          else "none")
except Exception:
    pass
PYEOF

echo
echo "== pytest tests/python (GPUBP_REQUIRE_GPU=1)"
# shellcheck disable=SC2086 # PYTEST_ARGS is a list of words on purpose
GPUBP_REQUIRE_GPU=1 "$py" -m pytest -v -rs -p no:cacheprovider \
    --rootdir="$root/tests/python" -k "not sim" "$root/tests/python" ${PYTEST_ARGS:-} || rc=1

work="$(mktemp -d)"
for ex in cupy torch; do
    echo
    echo "== examples/python/steps_write_read_$ex.py (in $work)"
    (cd "$work" && "$py" "$root/examples/python/steps_write_read_$ex.py") || rc=1
done
for ds in StepsWriteReadCuPy.bp StepsWriteReadTorch.bp; do
    echo
    echo "== gpubpls -l $ds"
    "$GPUBP_BPLS" -l "$work/$ds" || rc=1
done
rm -rf "$work"

echo
if [ "$rc" -eq 0 ]; then echo "run_gpu.sh: all passed"; else echo "run_gpu.sh: FAILED"; fi
exit "$rc"
