#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages that building and testing libgpubp needs, when one is
# missing; does nothing (and needs no network) when all are there. Extra package names given as
# arguments are installed too. Runs apt-get directly as root, through sudo otherwise.
#
#   ./scripts/install-deps.sh [package ...]
set -euo pipefail

# A package counts as present when dpkg has it or when what it provides is already on the machine
# (a cmake or python3 installed another way serves as well).
present() {
    if dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; then
        return 0
    fi
    case "$1" in
    build-essential) command -v cc >/dev/null && command -v make >/dev/null ;;
    cmake) command -v cmake >/dev/null ;;
    pkg-config) command -v pkg-config >/dev/null ;;
    python3) command -v python3 >/dev/null ;;
    zlib1g-dev) [ -e /usr/include/zlib.h ] ;;
    liblz4-dev) [ -e /usr/include/lz4.h ] ;;
    libzstd-dev) [ -e /usr/include/zstd.h ] ;;
    libbz2-dev) [ -e /usr/include/bzlib.h ] ;;
    libcmocka-dev) command -v pkg-config >/dev/null && pkg-config --exists cmocka ;;
    valgrind) command -v valgrind >/dev/null ;;
    gdb) command -v gdb >/dev/null ;;
    python3-numpy) /usr/bin/python3 -c "import numpy" 2>/dev/null ;;
    python3-pytest) /usr/bin/python3 -c "import pytest" 2>/dev/null ;;
    openmpi-bin) command -v mpiexec >/dev/null ;;
    libopenmpi-dev) command -v mpicc >/dev/null ;;
    *) return 1 ;;
    esac
}

# openmpi-bin and libopenmpi-dev: libgpubp_mpi and its tests (label mpi, run with mpiexec).
# liblz4-dev and libzstd-dev: the lz4/lz4hc and zstd codecs of the blosc operator; libbz2-dev:
# ADIOS2's bzip2 operator (all optional for the build, wanted for the tests of every codec).
want=(build-essential cmake pkg-config zlib1g-dev liblz4-dev libzstd-dev libbz2-dev libcmocka-dev
      python3 openmpi-bin libopenmpi-dev "$@")
missing=()
for p in "${want[@]}"; do
    present "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
if ! command -v apt-get >/dev/null; then
    echo "install-deps: no apt-get here; install these yourself: ${missing[*]}" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: not root and no sudo" >&2; exit 1; }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq </dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
