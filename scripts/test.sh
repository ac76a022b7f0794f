#!/usr/bin/env bash
# Builds libgpubp with warnings as errors (-DGPUBP_WERROR=ON) and runs the whole test suite with
# ctest, installing missing Debian packages first (with python3-numpy and python3-pytest, which
# the Python package's tests need; openmpi-bin and libopenmpi-dev come with install-deps.sh, so the
# MPI tests, label mpi, run under mpiexec with the rest). Exits non-zero when anything fails.
#
#   ./scripts/test.sh [cmake options...]      e.g. ./scripts/test.sh -DGPUBP_ASAN=ON
#   env: BUILD_DIR (default build/, relative to the checkout), JOBS (default: all cores),
#        CTEST_TIMEOUT (seconds per test without its own limit, default 600),
#        CTEST_ARGS (more ctest arguments, e.g. "-L api" or "-R roundtrip"),
#        GPUBP_CI_STRICT_KNOWN=1 (fail when a known_bug test fails)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-build}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
jobs="${JOBS:-$(nproc)}"

# numpy and pytest run the Python package's tests (label python); without them those report skipped.
"$root/scripts/install-deps.sh" python3-numpy python3-pytest
cmake -S "$root" -B "$build" -DGPUBP_WERROR=ON "$@"
cmake --build "$build" -j "$jobs"

cd "$build"
timeout="${CTEST_TIMEOUT:-600}"
# Tests of reported, not yet fixed bugs carry the label known_bug (docs/reliability.md): the suite
# excludes them; they are run and listed afterwards and fail this script only with
# GPUBP_CI_STRICT_KNOWN=1.
# shellcheck disable=SC2086 # CTEST_ARGS is a list of words on purpose
ctest --output-on-failure --no-tests=error -j "$jobs" --timeout "$timeout" -LE known_bug \
    ${CTEST_ARGS:-} </dev/null

if [ -z "${CTEST_ARGS:-}" ] && ctest -N -L known_bug | grep -q "Total Tests: [1-9]"; then
    echo
    echo "test.sh: known bugs (label known_bug), expected to fail until fixed:"
    if ctest -j "$jobs" --timeout "$timeout" -L known_bug </dev/null 2>&1 | sed 's/^/known_bug: /'
    then
        echo "test.sh: every known_bug test passes now: move them into the main suite"
    elif [ "${GPUBP_CI_STRICT_KNOWN:-0}" = 1 ]; then
        echo "test.sh: known_bug tests fail and GPUBP_CI_STRICT_KNOWN=1" >&2
        exit 1
    fi
fi
