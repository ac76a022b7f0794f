#!/usr/bin/env bash
# Builds libgpubp with warnings as errors (-DGPUBP_WERROR=ON) and runs the whole test suite with
# ctest, installing missing Debian packages first (with python3-numpy and python3-pytest, which
# the Python package's tests need). Exits non-zero when anything fails.
#
#   ./scripts/test.sh [cmake options...]      e.g. ./scripts/test.sh -DGPUBP_ASAN=ON
#   env: BUILD_DIR (default build/, relative to the checkout), JOBS (default: all cores),
#        CTEST_TIMEOUT (seconds per test without its own limit, default 600),
#        CTEST_ARGS (more ctest arguments, e.g. "-L api" or "-R roundtrip")
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
# shellcheck disable=SC2086 # CTEST_ARGS is a list of words on purpose
ctest --output-on-failure --no-tests=error -j "$jobs" --timeout "${CTEST_TIMEOUT:-600}" \
    ${CTEST_ARGS:-} </dev/null
