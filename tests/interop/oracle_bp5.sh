#!/bin/sh
# Oracle check of the BP5 reader with a real ADIOS2 (not a ctest test: nothing in the suite
# depends on ADIOS2; docs/interop.md has the runs and their outcome).
#
#   tests/interop/oracle_bp5.sh BUILD_DIR ADIOS2_PREFIX MAKE_CORPUS MAKE_CODECS SEED...
#
# MAKE_CORPUS and MAKE_CODECS: tests/golden/generators/make_corpus.c and make_codecs.c built
# against ADIOS2_PREFIX (its bin/bpls lists). For every SEED, ADIOS2 writes a fresh corpus with its
# BP4 and BP5 engines (make_corpus BP4|BP5 DIR SEED; make_codecs DIR SEED BP4|BP5), bpls writes
# its -la, -d, -D dumps beside each dataset, and then:
#   1. gpubpls -la, -d, -D and -laD print exactly what bpls prints, for every BP5 dataset (and BP4);
#   2. test_interop_read_golden reads every dataset of the corpus as the dumps say (values, shapes,
#      blocks, min/max, attributes; random access and step mode);
#   3. test_interop_bp4_bp5_same finds the BP4 and BP5 files of the seed identical through the API;
#   4. the Python package's test_bp5.py reads the seed's BP5 values as bpls printed them.
# The folders the generators do not make (gpu/, bp5/) are the repository's. Exit status: the
# number of failed checks.
set -u
BUILD=$(cd "${1:?usage: oracle_bp5.sh BUILD_DIR ADIOS2_PREFIX MAKE_CORPUS MAKE_CODECS SEED...}" && pwd)
ADIOS2=${2:?ADIOS2 prefix}
MAKE_CORPUS=${3:?make_corpus}
MAKE_CODECS=${4:?make_codecs}
shift 4
HERE=$(cd "$(dirname "$0")" && pwd)
GOLDEN=$HERE/../golden
BPLS=$ADIOS2/bin/bpls
GPUBPLS=$BUILD/tools/gpubpls
export LD_LIBRARY_PATH="$ADIOS2/lib:$ADIOS2/lib64:${LD_LIBRARY_PATH:-}"
WORK=$(mktemp -d /tmp/gpubp-oracle5-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
bad=0
for SEED in "$@"; do
    G=$WORK/seed$SEED
    mkdir -p "$G/BP4" "$G/BP5" "$G/codecs/BP4" "$G/codecs/BP5"
    ln -s "$GOLDEN/gpu" "$G/gpu"
    ln -s "$GOLDEN/bp5" "$G/bp5"
    "$MAKE_CORPUS" BP4 "$G/BP4" "$SEED" > /dev/null && "$MAKE_CORPUS" BP5 "$G/BP5" "$SEED" > /dev/null &&
        "$MAKE_CODECS" "$G/codecs/BP4" "$SEED" BP4 > /dev/null &&
        "$MAKE_CODECS" "$G/codecs/BP5" "$SEED" BP5 > /dev/null || { echo "seed $SEED: a generator failed"; exit 100; }
    n=0 same=0
    for d in "$G"/BP4/*.bp "$G"/BP5/*.bp "$G"/codecs/BP4/*.bp "$G"/codecs/BP5/*.bp; do
        dir=$(dirname "$d") name=$(basename "$d")
        for k in la d D laD; do
            case $k in la) s=la ;; d) s=d ;; D) s=blocks ;; laD) s=laD ;; esac
            (cd "$dir" && "$BPLS" -$k "$name") > "$d.$s.txt" 2>&1
            (cd "$dir" && "$GPUBPLS" -$k "$name") > "$WORK/ours.txt" 2>&1
            n=$((n + 1))
            if cmp -s "$d.$s.txt" "$WORK/ours.txt"; then
                same=$((same + 1))
            else
                echo "seed $SEED: DIFF ${d#$G/} (-$k): bpls (-) vs gpubpls (+)"
                diff -u "$d.$s.txt" "$WORK/ours.txt" | head -20
                bad=$((bad + 1))
            fi
        done
    done
    echo "seed $SEED: gpubpls = bpls for $same of $n listings"
    for t in test_interop_read_golden test_interop_bp4_bp5_same; do
        if (cd "$BUILD/tests/interop" && GPUBP_GOLDEN_DIR=$G GPUBP_TEST_TMP=$WORK/t ./$t > "$WORK/$t.log" 2>&1); then
            echo "seed $SEED: $t passed ($(grep -c '^\[       OK' "$WORK/$t.log") cases)"
        else
            echo "seed $SEED: $t FAILED"
            grep -E 'DIFF|FAILED' "$WORK/$t.log" | head -20
            bad=$((bad + 1))
        fi
    done
    PY=
    for p in ${PYTHON:-} python3 /usr/bin/python3; do
        if "$p" -c "import numpy, pytest" 2> /dev/null; then PY=$p; break; fi
    done
    if [ -n "$PY" ]; then
        if GPUBP_GOLDEN_DIR=$G GPUBP_LIBRARY=$BUILD/src/libgpubp.so PYTHONPATH=$HERE/../../bindings/python \
            "$PY" -m pytest -q -p no:cacheprovider "$HERE/../python/test_bp5.py" -k "bpls or twin" > "$WORK/py.log" 2>&1; then
            echo "seed $SEED: test_bp5.py passed ($(tail -1 "$WORK/py.log"))"
        else
            echo "seed $SEED: test_bp5.py FAILED"
            grep -E '^(FAILED|E )' "$WORK/py.log" | head -20
            bad=$((bad + 1))
        fi
    else
        echo "seed $SEED: no python with numpy and pytest: test_bp5.py not run"
    fi
done
exit $bad
