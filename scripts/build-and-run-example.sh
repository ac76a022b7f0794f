#!/usr/bin/env bash
# Builds everything (library, tools, examples, tests), installing missing Debian packages first,
# then runs the host example: it writes host_steps.bp (3 steps of a 2-D array in 2 blocks, a
# scalar, attributes) and prints its listing in the style of ADIOS2's bpls.
#
#   ./scripts/build-and-run-example.sh [cmake options...]
#   env: BUILD_DIR (default build/, relative to the checkout), JOBS (default: all cores)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-build}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
jobs="${JOBS:-$(nproc)}"

"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" "$@"
cmake --build "$build" -j "$jobs"

cd "$build/examples"
rm -rf host_steps.bp
./host_steps host_steps.bp
echo "(the dataset is $build/examples/host_steps.bp)"
