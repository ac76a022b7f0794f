#!/bin/sh
# Oracle check with a real ADIOS2 (not a ctest test: nothing in the suite depends on ADIOS2).
#
#   tests/interop/oracle_diff.sh BUILD_DIR [SEED] [ADIOS2_PREFIX] [MAKE_CORPUS]
#
# 1. gpubp_write_corpus (from BUILD_DIR) writes steps_2d, local, types, changing_3d, appended for
#    SEED; ADIOS2's bpls -la / -d / -D on each must print exactly what it prints for ADIOS2's own
#    file of the same content (tests/golden/BP4 for seed 1, or a corpus that MAKE_CORPUS
#    writes for another seed, tests/golden/generators/make_corpus.c).
# 2. With MAKE_CORPUS (ADIOS2's make_corpus.c built against ADIOS2_PREFIX) and a seed other than
#    1: the libgpubp golden reader test runs on that fresh ADIOS2 corpus (with its bpls dumps).
# Exit status: number of datasets with differences.
set -u
BUILD=${1:?usage: oracle_diff.sh BUILD_DIR [SEED] [ADIOS2_PREFIX] [MAKE_CORPUS]}
SEED=${2:-1}
ADIOS2=${3:-/opt/adios2}
MAKE_CORPUS=${4:-}
BPLS=$ADIOS2/bin/bpls
HERE=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$ADIOS2/lib:$ADIOS2/lib64:${LD_LIBRARY_PATH:-}"
WORK=$(mktemp -d /tmp/gpubp-oracle-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

REF=$HERE/../golden/BP4
if [ "$SEED" != 1 ]; then
    [ -n "$MAKE_CORPUS" ] || { echo "seed $SEED needs MAKE_CORPUS"; exit 2; }
    mkdir -p "$WORK/golden/BP4" "$WORK/golden/gpu/BP4"
    "$MAKE_CORPUS" BP4 "$WORK/golden/BP4" "$SEED" || exit 2
    REF=$WORK/golden/BP4
    for d in "$REF"/*.bp; do
        "$BPLS" -la "$d" > "$d.la.txt" 2>&1
        "$BPLS" -d "$d" > "$d.d.txt" 2>&1
        "$BPLS" -D "$d" > "$d.blocks.txt" 2>&1
    done
    (cd "$BUILD/tests/interop" && GPUBP_GOLDEN_DIR="$WORK/golden" GPUBP_TEST_TMP="$WORK/t" \
        ./test_interop_read_golden) || echo "golden reader test FAILED on the seed $SEED corpus"
fi

"$BUILD/tests/interop/gpubp_write_corpus" "$WORK/ours" "$SEED" || exit 2
bad=0
for name in steps_2d local types changing_3d appended; do
    ok=1
    for k in la d D; do
        case $k in la) s=la ;; d) s=d ;; D) s=blocks ;; esac
        (cd "$WORK/ours" && "$BPLS" -$k $name.bp) > "$WORK/ours.txt" 2>&1
        (cd "$REF" && "$BPLS" -$k $name.bp) > "$WORK/ref.txt" 2>&1
        if ! diff -u "$WORK/ref.txt" "$WORK/ours.txt" > "$WORK/diff.txt"; then
            echo "DIFF $name.bp (bpls -$k): ADIOS2's file (-) vs libgpubp's (+)"
            head -40 "$WORK/diff.txt"
            ok=0
        fi
    done
    if [ $ok = 1 ]; then echo "same  $name.bp (bpls -la, -d, -D)"; else bad=$((bad + 1)); fi
done
exit $bad
