#!/bin/sh
# Builds the seed corpora of the fuzz targets from BP4 datasets: the ADIOS2-written golden files
# of tests/golden and datasets libgpubp wrote (any *.bp folders given as arguments).
# Usage: tests/fuzz/make_seeds.sh [DATASET.bp ...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
golden=$(cd "$here/../golden" && pwd)
sep='#GBPSPLIT#'
mkdir -p "$here/corpus/idx" "$here/corpus/md0" "$here/corpus/open" "$here/corpus/data"
seed() { # dataset name
    d=$1 n=$2
    [ -f "$d/md.idx" ] || return 0
    [ -f "$d/mmd.0" ] && return 0 # BP5
    cp "$d/md.idx" "$here/corpus/idx/$n.idx"
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; } > "$here/corpus/idx/$n.idx_md0"
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; } > "$here/corpus/md0/$n"
    cp "$d/md.0" "$here/corpus/md0/$n.md0"
    # data.0 capped at 16 KiB: the metadata paths matter more than big payloads
    { cat "$d/md.idx"; printf '%s' "$sep"; cat "$d/md.0"; printf '%s' "$sep";
      head -c 16384 "$d/data.0" 2>/dev/null || true; } > "$here/corpus/open/$n"
}
for d in $(find "$golden" -name '*.bp' -type d | sort); do
    seed "$d" "adios2_$(echo "$d" | sed "s|$golden/||; s|/|_|g")"
done
for d in "$@"; do
    seed "$d" "gpubp_$(basename "$d" .bp)"
done
# data: each input is a recipe (type, dims, blocks, flags, steps, selection, damage)
i=0
for b in 00 01 02 03 04 05 06 07 08 09 0a 0b; do
    for f in 00 01 07 0d 13 1f 2b 3f 41 7f; do
        printf "\\x$b\\x02\\x03\\x04\\x05\\x03\\x$f\\x02\\x01\\x02\\x00\\x01\\x01\\x02\\x00\\x01\\x01\\x02\\x00\\x01\\x03\\x10\\x00\\x41\\x03" \
            > "$here/corpus/data/seed_$b$f"
        i=$((i + 1))
    done
done
