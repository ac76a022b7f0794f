#!/bin/bash
# bpls_cmp.sh DATASET...: bpls and gpubpls with -la, -d, -D, -laD, -lA and -dD on each dataset
# (run in its folder); prints each output or exit status that differs. BPLS: ADIOS2's bpls.
T=$(mktemp -d)
BPLS=${BPLS:-bpls}
G=${GPUBPLS:-$(cd "$(dirname "$0")/../../.." && pwd)/build/tools/gpubpls}
for d in "$@"; do
  cd "$(dirname "$d")" || continue; n=$(basename "$d")
  for o in -la -d -D -laD "-lA" "-dD"; do
    $BPLS $o $n > $T/o1.txt 2>&1; r1=$?
    $G $o $n > $T/o2.txt 2>&1; r2=$?
    if ! cmp -s $T/o1.txt $T/o2.txt || [ $r1 != $r2 ]; then echo "DIFF $d $o rc $r1/$r2"; fi
  done
  cd - > /dev/null || exit 1
done
rm -rf "$T"
