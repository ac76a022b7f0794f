#!/bin/bash
# The combined GPU run behind docs/testing-gpu.md and docs/performance.md: builds libgpubp with the
# CUDA backend for sm_90, runs the `gpu` and `memspace` ctest labels, compute-sanitizer memcheck and
# racecheck on the GPU tests and the CUDA example, the example itself, and gpubp-bench (GPU and
# host) with its raw baselines, the codec on 1-16 cores and compression from device memory against
# copy-then-compress. Run from the repository root on the GPU machine:
#
#   OUT=/some/dir bash bench/run_device.sh
#
# Dependencies the machine lacks (cmocka, pkg-config, zlib headers) are taken from .carry/root
# (Debian packages unpacked with dpkg -x).
# When .carry/head.tar exists (git archive HEAD, with or without tests/golden), that committed tree
# is built instead of the working tree, so that colleagues' edits in progress cannot break the run.
# Logs (at most 8 files) go to $OUT.
# MODE=sweep: gpubp-bench alone over the configurations in SWEEP (sweep.log, with GPUBP_MEM_STATS).
# MODE=check: the tests, the example and the sanitizers as in full, then the four sync GPU rows
# (defaults — subfiles=auto —, one file, 4, 8 and 16 subfiles, medians of 3): the check after a change to the GPU paths.
# MODE=issue23: gpubp-bench alone (issue23.log) over every row of issue 23 in one call (about 5
# minutes with the build; each row well under a minute) — MIB23 (512) MiB x 4 steps of 1, 4 and
# 16 blocks and 10 variables of one block, at the defaults (split_mib=auto) and with splitting off
# (split_mib=0), cold reads, direct_io=1 and fsync=1 against the raw O_DIRECT best, 1 GiB x 4
# steps of one block — and, when ADIOS2_DIR names an ADIOS2 CMake package dir (e.g.
# .../lib/cmake/adios2, with its libraries on LD_LIBRARY_PATH), gpubp-adios2-cmp: the same
# workload of 1, 4 and 16 blocks through ADIOS2 BP4 and BP5 (write, read, strided half-box read).
# Ends with the table of ratios against the issue's targets (bench/issue23_summary.py).
# ROWS23="1 5 9" runs only the rows of those numbers (the list is printed first); PARAMS23="P"
# adds library parameters to every gpubp-bench row (joined to a row's own --params, e.g.
# PARAMS23=async_commit=1), for rounds against the defaults (python3 bench/issue23_summary.py
# over the rounds' logs).
# MODE=sparse: strided reads run by run against span reads (sparse.log): gpubp-sparse-pread on a
# 2 GiB warm file at 1, 2, 4, 8, 16 threads and the core count (half rows of 8 KiB; 16 KiB rows of
# 8 KiB runs; 2 KiB and 3 KiB gaps), then gpubp-bench's strided half-box read (sub_read_GBps) of
# 1 and 16 blocks into device memory, three interleaved rounds of this tree and, when
# .carry/base.tar exists (git archive of the tree before the change, with this tree's bench/ laid
# over it: gpubp-bench --sub), of that tree built beside it.
# MODE=taper: the tapered sub-blocks of compressed device puts (docs/compression.md, "Tapered
# sub-blocks"; taper.log): GPUBP_ZDEV_TAPER unset, 70 and 60 with batches of 128 and 64 MiB on
# 256 MiB x 2 steps, then unset and 60 on 1 GiB x 4 steps, lz4/zstd/zlib from device memory, two
# interleaved rounds (needs nvCOMP: GPUBP_NVCOMP_LIBRARY).
# MODE=zcmp: the compressed device rows (lz4, zstd, zlib; 256 MiB x 2 and 1 GiB x 4 steps) of this
# tree against the tree of .carry/base.tar(.gz), built beside it, interleaved, ZCMP_ROUNDS (2)
# rounds, and of this tree with each VAR=VALUE of ZCMP_VARS (VAR=VALUE+VAR2=VALUE2: both) and each
# --params P of ZCMP_PARAMS (zcmp.log; needs nvCOMP).
# MODE=ab: this tree against the tree of .carry/base.tar(.gz), built beside it, interleaved,
# AB_ROUNDS (2) rounds (ab.log): issue 23's GPU rows of AB_BLOCKS ("1 16") blocks (512 MiB x 4
# steps, --baseline), then the compressed device rows (256 MiB x 2 and 1 GiB x 4; lz4, zstd,
# zlib) of both trees at the defaults and of this tree with ZCMP_PARAMS (async_commit=1) (needs
# nvCOMP for the compressed rows).
# MODE=ahead: reads ahead of compressed device blocks off and on (GPUBP_ZDEV_READ_AHEAD=0/1),
# interleaved, AHEAD_ROUNDS (3) rounds of 256 MiB x 2 (with GPUBP_MEM_STATS) and 1 GiB x 2 steps
# (ahead.log; needs nvCOMP).
# MODE=zerocopy: bench/zerocopy.cu (zerocopy.log): warm reads into and writes from device memory
# through pinned chunks (the library's way) against the copy engine reading / writing a registered
# mmap of the page cache, and the raw rates, at ZC_THREADS (4 8 16) threads (compare with the best
# raw rate over them), 2 GiB (ZC_MIB), chunks of ZC_CHUNKS (16 64) MiB.
# MODE=blosc: issue 22's threaded rows against Blosc2 (blosc.log): gpubp_blosc2_cmp B2LIB (a
# libblosc2.so built outside the project) 32 MiB, 3 repetitions, 1-16 threads, blosclz/lz4/zstd,
# then 8 and 16 threads with GPUBP_BLOSC_WORKER_MIB=2.
# MODE=all: one call for a session with little device time (about 8-9 minutes with the build),
# most needed first, at most 9 logs: check without its sync rows (check.log: environment, ctest,
# example, build tail; sanitizer.log), taper (taper.log, one round: TAPER_ROUNDS; when
# GPUBP_NVCOMP_LIBRARY is set), ahead (ahead.log, one round: AHEAD_ROUNDS; with nvCOMP too),
# blosc (blosc.log, when B2LIB names a libblosc2.so), issue23 rows
# ROWS23 (default "1 3 13 15": with ADIOS2_DIR, ADIOS2 beside; issue23.log with the summary),
# then sparse (sparse.log; SP_* as below, default 1, 4 and 16 threads, the half-box rows, two
# rounds). ALL_PARTS (default "check taper ahead blosc issue23 sparse") names the parts to run, so that
# the whole can be cut into two calls of one warm machine.
# PACK=1 (any mode): at the end, every file under OUT (subfolders too) packed into OUT/logs.tgz and
# the rest removed, for a caller that gets back only a few files (the device tool returns about
# eight: run 95 lost its logs that way).
set -u
MODE=${MODE:-full}
OUT=${OUT:-/tmp/gpubp-device-out}
mkdir -p "$OUT"
if [ "${PACK:-0}" = 1 ]; then
  trap 'cd "$OUT" && tar czf /tmp/gpubp-logs.$$.tgz --exclude=./logs.tgz . &&
        find . -mindepth 1 ! -name logs.tgz -delete && mv /tmp/gpubp-logs.$$.tgz logs.tgz' EXIT
  export PACK=0 # the modes MODE=all runs leave the packing to this one
fi
# ADIOS2's libraries: <prefix>/lib of an installed ADIOS2 (ADIOS2_DIR=<prefix>/lib/cmake/adios2),
# or the PyPI wheel's adios2/ and adios2.libs/ (ADIOS2_DIR=<site-packages>/adios2/cmake/adios2),
# for the link of gpubp-adios2-cmp in every mode that builds it (the wheel's libraries need each
# other's mangled names: without them `make -k all` of MODE=check failed on it in run 46) and
# for the run
if [ -n "${ADIOS2_DIR:-}" ] && [ -z "${RUN_DEVICE_A2_LIBS:-}" ]; then
  for d in "$ADIOS2_DIR/../.." "$ADIOS2_DIR/../../../adios2.libs"; do
    [ -d "$d" ] && export LD_LIBRARY_PATH=$(cd "$d" && pwd):${LD_LIBRARY_PATH:-}
  done
  export RUN_DEVICE_A2_LIBS=1 # once, also for the modes MODE=all runs
fi
if [ "$MODE" = all ]; then
  me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  t_all=$(date +%s)
  parts=" ${ALL_PARTS:-check taper ahead blosc issue23 sparse} "
  if [[ $parts == *" check "* ]]; then
    CHECK_BENCH=0 MODE=check bash "$me"
    (cd "$OUT" && { cat env.log ctest.log example.log
                     grep -B4 -E "error:|\*\*\* \[" build.log | head -60 # what failed to build
                     tail -40 build.log; } > check.log &&
     rm -f env.log ctest.log example.log build.log)
  fi
  [[ $parts == *" taper "* ]] && [ -n "${GPUBP_NVCOMP_LIBRARY:-}" ] &&
    TAPER_ROUNDS=${TAPER_ROUNDS:-1} MODE=taper bash "$me"
  [[ $parts == *" ahead "* ]] && [ -n "${GPUBP_NVCOMP_LIBRARY:-}" ] &&
    AHEAD_ROUNDS=${AHEAD_ROUNDS:-1} MODE=ahead bash "$me"
  [[ $parts == *" blosc "* ]] && [ -n "${B2LIB:-}" ] && MODE=blosc bash "$me" > /dev/null
  if [[ $parts == *" issue23 "* ]]; then
    ROWS23=${ROWS23:-"1 3 13 15"} MODE=issue23 bash "$me"
    cat "$OUT/issue23_summary.txt" >> "$OUT/issue23.log" && rm -f "$OUT/issue23_summary.txt"
  fi
  [[ $parts == *" sparse "* ]] && SP_THREADS=${SP_THREADS:-"1 4 16"} \
    SP_ROWS=${SP_ROWS:-"8192 4096,16384 8192"} SP_ROUNDS=${SP_ROUNDS:-2} MODE=sparse bash "$me"
  rm -f "$OUT/env.log" # check.log has it; build.log is the last mode's
  echo "MODE=all done in $(( $(date +%s) - t_all )) s; logs: $(cd "$OUT" && ls | tr '\n' ' ')"
  exit 0
fi
CARRY=$PWD/.carry
SRC=$PWD
if [ -f "$CARRY/head.tar" ]; then
  rm -rf /tmp/gpubp-src && mkdir -p /tmp/gpubp-src && tar -xf "$CARRY/head.tar" -C /tmp/gpubp-src
  # an archive made without the golden data (git archive HEAD -- . ':!tests/golden': it travels
  # beside the working tree, which holds it already) reads the working tree's
  [ -e /tmp/gpubp-src/tests/golden ] || ln -s "$PWD/tests/golden" /tmp/gpubp-src/tests/golden
  SRC=/tmp/gpubp-src
fi
R=$CARRY/root
if [ -d "$R" ]; then
  export PATH=$R/usr/bin:$PATH
  export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export PKG_CONFIG_SYSROOT_DIR=$R
  export PKG_CONFIG_PATH=$R/usr/lib/x86_64-linux-gnu/pkgconfig
  export CMAKE_PREFIX_PATH=$R/usr
fi
B=$SRC/build-gpu-h200
NJ=$(nproc)
t0=$(date +%s)
stamp() { echo "=== $(date -u +%FT%TZ) (+$(( $(date +%s) - t0 ))s) $*"; }

{
  stamp environment
  nvidia-smi; nvcc --version; cmake --version | head -1; gcc --version | head -1; uname -a; lscpu | head -24
  (command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer) 2>&1; nproc; free -g; df -h /tmp "$SRC"; cat "$CARRY/head.commit" 2>/dev/null
} > "$OUT/env.log" 2>&1

# configure and build (the targets named, or everything) into $B, log in $OUT/build.log
build() {
  {
    stamp configure
    cmake -S "$SRC" -B "$B" -DGPUBP_USE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
          -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          ${ADIOS2_DIR:+-DGPUBP_BENCH_ADIOS2=ON -DADIOS2_DIR=$ADIOS2_DIR}
    stamp build
    if [ $# -gt 0 ]; then cmake --build "$B" -j "$NJ" --target "$@"; else cmake --build "$B" -j "$NJ" -- -k; fi
    stamp built
  } > "$OUT/build.log" 2>&1
}

if [ "$MODE" = sweep ]; then
  # SWEEP: entries separated by ';', each "MIB STEPS PARAMS [VAR=VALUE...]" (512 MiB x 4 steps,
  # 16 blocks, 5 repetitions with the baselines; the variables set for that entry alone);
  # GPUBP_MEM_STATS=1 prints where each file's time went
  SWEEP=${SWEEP:-"512 4 subfiles=16,io_threads=16,pool_slots=32;512 4 subfiles=16,io_threads=16,pool_slots=64,chunk_mib=8"}
  build gpubp-bench
  BENCH=$B/bench/gpubp-bench
  D=/tmp/gpubp-bench
  IFS=';' read -ra entries <<< "$SWEEP"
  {
    for e in "${entries[@]}"; do
      read -r mib steps cfg vars <<< "$e"
      stamp "sweep: gpu $mib MiB x $steps steps, 16 blocks, params '$cfg' ${vars:-}"
      env ${vars:-} GPUBP_MEM_STATS=1 timeout 100 "$BENCH" --dir $D --mib-per-step "$mib" --steps "$steps" \
        --blocks 16 --mem gpu --repeat 5 --baseline ${cfg:+--params "$cfg"} 2>&1 |
        awk '/gpubp-mem:/ { n++; if (n % 3 != 1) next } { print }'
    done
  } > "$OUT/sweep.log" 2>&1
  grep -E "===|GBps|ratios|gpubp-mem" "$OUT/sweep.log"
  exit 0
fi

# The compressed device rows of MODE=taper, ahead and zcmp: gpubp-bench built, /tmp/z made
# (gpubp-bench --compress makes the dataset, not its parent), ZA the arguments, Z the command.
zbench_setup() {
  build gpubp-bench
  mkdir -p /tmp/z
  ZA="--compress zlib --codecs lz4,zstd,zlib --no-cpu-path --mem gpu --dir /tmp/z"
  Z="$B/bench/gpubp-bench $ZA"
}

if [ "$MODE" = taper ]; then
  zbench_setup
  {
    for r in $(seq "${TAPER_ROUNDS:-2}"); do
      for t in "" 70 60; do
        for b in 128 64; do
          stamp "round $r: 256 MiB x 2, GPUBP_ZDEV_TAPER='$t' GPUBP_ZDEV_BATCH_MIB=$b"
          GPUBP_ZDEV_TAPER=$t GPUBP_ZDEV_BATCH_MIB=$b timeout 120 $Z --mib-per-step 256 --steps 2 --repeat 3
        done
      done
      for t in "" 60; do
        stamp "round $r: 1 GiB x 4, GPUBP_ZDEV_TAPER='$t'"
        GPUBP_ZDEV_TAPER=$t timeout 150 $Z --mib-per-step 1024 --steps 4 --repeat 3
      done
    done
    stamp done
  } > "$OUT/taper.log" 2>&1
  grep -E "===|MBps|GBps" "$OUT/taper.log"
  exit 0
fi

if [ "$MODE" = ahead ]; then
  zbench_setup
  {
    for r in $(seq "${AHEAD_ROUNDS:-3}"); do
      for a in 0 1; do # reads ahead off, then on (the default), interleaved
        stamp "round $r: 256 MiB x 2, GPUBP_ZDEV_READ_AHEAD=$a"
        GPUBP_ZDEV_READ_AHEAD=$a GPUBP_MEM_STATS=1 timeout 120 $Z --mib-per-step 256 --steps 2 \
          --repeat 3
        stamp "round $r: 1 GiB x 2, GPUBP_ZDEV_READ_AHEAD=$a"
        GPUBP_ZDEV_READ_AHEAD=$a timeout 150 $Z --mib-per-step 1024 --steps 2 --repeat 3
      done
    done
    stamp done
  } > "$OUT/ahead.log" 2>&1
  grep -E "===|MBps" "$OUT/ahead.log"
  exit 0
fi

if [ "$MODE" = zerocopy ]; then
  build gpubp-zerocopy
  mkdir -p /tmp/zc
  {
    for c in ${ZC_CHUNKS:-16 64}; do
      for t in ${ZC_THREADS:-4 8 16}; do # raw_best is the best raw rate over the thread counts
        stamp "gpubp-zerocopy /tmp/zc ${ZC_MIB:-2048} $t $c 3"
        timeout 60 "$B/bench/gpubp-zerocopy" /tmp/zc "${ZC_MIB:-2048}" "$t" "$c" 3
      done
    done
    stamp done
  } > "$OUT/zerocopy.log" 2>&1
  cat "$OUT/zerocopy.log"
  exit 0
fi

if [ "$MODE" = blosc ]; then
  build gpubp_blosc2_cmp
  {
    for w in "" 2; do
      thr=1,2,4,8,16
      [ -n "$w" ] && thr=8,16
      stamp "gpubp_blosc2_cmp ${B2LIB:-} 32 3 1 $thr blosclz,lz4,zstd, GPUBP_BLOSC_WORKER_MIB='$w'"
      GPUBP_BLOSC_WORKER_MIB=$w timeout 280 "$B/bench/gpubp_blosc2_cmp" "${B2LIB:-}" 32 3 1 $thr \
        blosclz,lz4,zstd
    done
    stamp done
  } > "$OUT/blosc.log" 2>&1
  cat "$OUT/blosc.log"
  # per label and codec: cells at 0.90 of Blosc2 or more (medians over rounds: several logs)
  python3 "$SRC/bench/blosc_summary.py" "$OUT/blosc.log" | tee "$OUT/blosc_summary.txt"
  exit 0
fi

# BASE: gpubp-bench of the tree in .carry/base.tar(.gz) (git archive of the tree before the
# change, with this tree's bench/ laid over it where its options are needed), built beside this
# one; empty without it.
base_bench() {
  BASE=""
  [ -f "$CARRY/base.tar.gz" ] && gunzip -f "$CARRY/base.tar.gz" # carried gzipped (3.5 MiB)
  if [ -f "$CARRY/base.tar" ]; then
    rm -rf /tmp/gpubp-base && mkdir -p /tmp/gpubp-base && tar -xf "$CARRY/base.tar" -C /tmp/gpubp-base
    [ -e /tmp/gpubp-base/tests/golden ] || ln -s "$SRC/tests/golden" /tmp/gpubp-base/tests/golden
    { cmake -S /tmp/gpubp-base -B /tmp/gpubp-base/b -DGPUBP_USE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/gpubp-base/b -j "$NJ" --target gpubp-bench; } \
      >> "$OUT/build.log" 2>&1 && BASE=/tmp/gpubp-base/b/bench/gpubp-bench
  fi
}

# One round (r) of the compressed device rows, 256 MiB x 2 and 1 GiB x 4 steps: this tree, the
# base (when built), then this tree with each VAR=VALUE of ZCMP_VARS (environment) and each P of
# ZCMP_PARAMS (--params P).
zcmp_round() {
  local r=$1 m mib steps A v p T=$B/bench/gpubp-bench
  for m in "256 2" "1024 4"; do
    read -r mib steps <<< "$m"
    A="$ZA --mib-per-step $mib --steps $steps --repeat 3"
    stamp "round $r: $mib MiB x $steps, this tree"; timeout 150 "$T" $A
    [ -n "$BASE" ] && { stamp "round $r: $mib MiB x $steps, base"; timeout 150 "$BASE" $A; }
    for v in ${ZCMP_VARS:-}; do # e.g. ZCMP_VARS="GPUBP_IO_FILE_THREADS=2 A=1+B=2" (+: both)
      stamp "round $r: $mib MiB x $steps, this tree, $v"; env ${v//+/ } timeout 150 "$T" $A
    done
    for p in ${ZCMP_PARAMS:-}; do # e.g. ZCMP_PARAMS="async_commit=1"
      stamp "round $r: $mib MiB x $steps, this tree, $p"; timeout 150 "$T" $A --params "$p"
    done
  done
}

if [ "$MODE" = zcmp ]; then
  zbench_setup
  base_bench
  {
    for r in $(seq "${ZCMP_ROUNDS:-2}"); do zcmp_round "$r"; done
    stamp done
  } > "$OUT/zcmp.log" 2>&1
  grep -E "===|MBps" "$OUT/zcmp.log"
  exit 0
fi

if [ "$MODE" = ab ]; then
  zbench_setup
  base_bench
  T=$B/bench/gpubp-bench
  mkdir -p /tmp/gpubp-bench
  {
    [ -n "$BASE" ] || echo "(no .carry/base.tar: this tree alone)"
    for r in $(seq "${AB_ROUNDS:-2}"); do
      for b in ${AB_BLOCKS:-1 16}; do
        G="--dir /tmp/gpubp-bench --mib-per-step 512 --steps 4 --mem gpu --repeat 3 --baseline"
        stamp "round $r: $b block(s), this tree"; timeout 120 "$T" $G --blocks "$b"
        [ -n "$BASE" ] && { stamp "round $r: $b block(s), base"; timeout 120 "$BASE" $G --blocks "$b"; }
      done
      [ -n "${GPUBP_NVCOMP_LIBRARY:-}" ] && ZCMP_PARAMS=${ZCMP_PARAMS-async_commit=1} zcmp_round "$r"
    done
    stamp done
  } > "$OUT/ab.log" 2>&1
  grep -E "===|MBps|raw_best|ratios|write_GBps" "$OUT/ab.log" | grep -v -E "dev_loop|memcpy_GBps|fresh"
  exit 0
fi

if [ "$MODE" = sparse ]; then
  build gpubp-bench gpubp-sparse-pread
  base_bench
  SP=$B/bench/gpubp-sparse-pread
  {
    # SP_THREADS, SP_ROWS ("ROW RUN,..."), SP_ROUNDS shorten the run
    IFS=, read -ra rows <<< "${SP_ROWS:-8192 4096,16384 8192,8192 6144,12288 9216}"
    for t in ${SP_THREADS:-1 2 4 8 16 $NJ}; do
      for rr in "${rows[@]}"; do
        stamp "sparse_pread $rr threads $t"; timeout 120 "$SP" /tmp/gpubp-sparse.dat 2048 $rr "$t" 3
      done
    done
    rm -f /tmp/gpubp-sparse.dat
    for round in $(seq "${SP_ROUNDS:-3}"); do
      for b in 1 16; do
        G="--dir /tmp/gpubp-bench --mib-per-step 512 --steps 4 --mem gpu --repeat 3 --blocks $b --sub"
        stamp "round $round, $b block(s): this tree"; timeout 120 "$B/bench/gpubp-bench" $G
        [ -n "$BASE" ] && { stamp "round $round, $b block(s): base"; timeout 120 "$BASE" $G; }
      done
    done
    stamp done
  } > "$OUT/sparse.log" 2>&1
  grep -E "===|sparse_pread|sub_read|read_GBps" "$OUT/sparse.log"
  exit 0
fi

if [ "$MODE" = issue23 ]; then
  build gpubp-bench
  # apart: an ADIOS2 that is not found leaves gpubp-bench built (build.log says why)
  [ -n "${ADIOS2_DIR:-}" ] && cmake --build "$B" -j "$NJ" --target gpubp-adios2-cmp >> "$OUT/build.log" 2>&1
  BENCH=$B/bench/gpubp-bench
  CMP=$B/bench/gpubp-adios2-cmp
  D=/tmp/gpubp-bench
  # MIB23 x 4 steps (512 MiB: 2 GiB a repetition, the size of raw_best's sweep; the issue's
  # range is 256 MiB - 2 GiB), 3 repetitions; row 12 checks 1 GiB steps
  M=${MIB23:-512}
  G="--dir $D --mib-per-step $M --steps 4 --mem gpu --repeat 3 --baseline"
  A="--dir $D --mib-per-step $M --steps 4 --mem gpu --repeat 3"
  # "label|arguments": gpubp-bench rows, then (adios2:) gpubp-adios2-cmp rows
  R23=("1 block, defaults (split on)|$G --blocks 1"
       "4 blocks, defaults|$G --blocks 4"
       "16 blocks, defaults|$G --blocks 16"
       "10 variables of 1 block, defaults|$G --blocks 1 --vars 10"
       "1 block, split off|$G --blocks 1 --params split_mib=0"
       "4 blocks, split off|$G --blocks 4 --params split_mib=0"
       "10 variables of 1 block, split off|$G --blocks 1 --vars 10 --params split_mib=0"
       "1 block, cold reads, defaults|$G --blocks 1 --cold"
       "1 block, direct_io=1|$G --blocks 1 --params direct_io=1"
       "16 blocks, direct_io=1|$G --blocks 16 --params direct_io=1"
       "1 block, fsync=1|$G --blocks 1 --params fsync=1"
       "1 GiB x 4, 1 block, defaults|--dir $D --mib-per-step 1024 --steps 4 --mem gpu --repeat 3 --baseline --blocks 1"
       "adios2: 1 block|$A --blocks 1"
       "adios2: 4 blocks|$A --blocks 4"
       "adios2: 16 blocks|$A --blocks 16"
       "1 block, split off, piece_kib=16384 (whole-chunk copies and writes)|$G --blocks 1 --params split_mib=0,piece_kib=16384")
  {
    for i in "${!R23[@]}"; do echo "row $((i + 1)): ${R23[$i]%%|*}"; done
    for i in "${!R23[@]}"; do
      n=$((i + 1))
      if [ -n "${ROWS23:-}" ] && [[ " $ROWS23 " != *" $n "* ]]; then continue; fi
      label=${R23[$i]%%|*}
      args=${R23[$i]#*|}
      extra=${PARAMS23:+ (+ $PARAMS23)}
      [[ $label == adios2:* ]] && extra="" # ADIOS2's rows take no libgpubp parameters
      stamp "row $n: gpu $label$extra"
      if [[ $label == adios2:* ]]; then
        if [ -x "$CMP" ]; then timeout 120 "$CMP" $args; else echo "(gpubp-adios2-cmp not built: set ADIOS2_DIR)"; fi
      else
        if [ -n "${PARAMS23:-}" ]; then # one --params per run: join to the row's own
          if [[ " $args " == *" --params "* ]]; then args=${args/--params /--params $PARAMS23,}
          else args="$args --params $PARAMS23"; fi
        fi
        timeout 120 "$BENCH" $args
      fi
    done
    stamp done
  } > "$OUT/issue23.log" 2>&1
  grep -E "===|GBps|ratios|row " "$OUT/issue23.log" | grep -v -E "dev_loop|memcpy_GBps|raw_write_fresh"
  python3 "$SRC/bench/issue23_summary.py" "$OUT/issue23.log" | tee "$OUT/issue23_summary.txt"
  exit 0
fi

build
cd "$B" || exit 1

{
  stamp ctest -L gpu
  ctest -L gpu --output-on-failure --timeout 300
  stamp ctest -L memspace
  ctest -L memspace --output-on-failure --timeout 300
} > "$OUT/ctest.log" 2>&1

CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer \
     /usr/local/cuda*/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer* 2>/dev/null | head -1)
mkdir -p /tmp/gpubp-san
{
  stamp example
  (cd /tmp/gpubp-san && "$B/examples/cuda/bpStepsWriteReadCuda" StepsWriteReadCuda.bp &&
   "$B/tools/gpubpls" StepsWriteReadCuda.bp && "$B/tools/gpubpls" -la StepsWriteReadCuda.bp)
  echo "exit $?"
  stamp example reading the ADIOS2-written file
  "$B/examples/cuda/bpStepsWriteReadCuda" --read "$SRC/tests/golden/gpu/BP4/StepsWriteReadCuPy.bp"
  echo "exit $?"
} > "$OUT/example.log" 2>&1

# libgpubp's own kernels, by name, from the sources (racecheck also reports nvCOMP's)
OUR_KERNELS=$(grep -ho '__global__ void [A-Za-z_0-9]*' "$SRC"/cuda/*.cu | awk '{print $3}' |
              sort -u | paste -sd'|')
{
  for tool in memcheck racecheck; do
    extra=""
    [ $tool = memcheck ] && extra="--leak-check full"
    for prog in tests/gpu/test_gpu_api tests/gpu/test_gpu_stream examples/cuda/bpStepsWriteReadCuda \
                tests/gpu/test_gpu_compress; do
      [ -x "$prog" ] || { echo "($prog not built)"; continue; }
      # the GPU codec path needs nvCOMP (GPUBP_NVCOMP_LIBRARY names libnvcomp.so.6); its small
      # case (GPUBP_TEST_SMALL=1) keeps the sanitizers near a minute; racecheck skips nvCOMP's
      # own kernels (third-party code)
      x2=""
      if [ "$prog" = tests/gpu/test_gpu_compress ]; then
        [ -n "${GPUBP_NVCOMP_LIBRARY:-}" ] ||
          { echo "($prog: GPUBP_NVCOMP_LIBRARY not set)"; continue; }
        [ $tool = racecheck ] && x2="--kernel-name-exclude kns=nvcomp"
      fi
      stamp "compute-sanitizer --tool $tool $extra $x2 $prog"
      arg=""
      [ "$prog" = examples/cuda/bpStepsWriteReadCuda ] && arg=/tmp/gpubp-san/san.bp
      GPUBP_TEST_SMALL=1 GPUBP_TEST_TMP=/tmp/gpubp-san/$tool timeout 300 "${CS:-compute-sanitizer}" \
        --tool $tool $extra $x2 --error-exitcode 9 "$prog" $arg > /tmp/gpubp-san.out 2>&1
      echo "exit $?"
      tail -25 /tmp/gpubp-san.out
      # racecheck also reports nvCOMP's own kernels (exit 9 with them: test_gpu_api decodes zlib
      # with nvCOMP's inflate, run 73); what counts is a hazard in one of libgpubp's kernels
      [ $tool = racecheck ] && echo "hazards in libgpubp's kernels: $(grep -E 'access at' \
        /tmp/gpubp-san.out | grep -cE "$OUR_KERNELS")"
    done
  done
} > "$OUT/sanitizer.log" 2>&1

BENCH=$B/bench/gpubp-bench
D=/tmp/gpubp-bench
ROWS=("" "subfiles=1" "subfiles=4,io_threads=4,pool_slots=8" "subfiles=8,io_threads=8,pool_slots=16"
      "subfiles=16,io_threads=16,pool_slots=32")
REPEAT=3
[ "${CHECK_BENCH:-1}" = 0 ] && ROWS=() # MODE=all: issue 23's rows measure the same paths
if [ "$MODE" = full ]; then
  ROWS+=("async_commit=1" "async_commit=1,subfiles=4,io_threads=4,pool_slots=8"
         "async_commit=1,subfiles=8,io_threads=8,pool_slots=16"
         "async_commit=1,subfiles=16,io_threads=16,pool_slots=32")
  REPEAT=5
fi
{
  for cfg in "${ROWS[@]}"; do
    stamp "gpu 512 MiB x 4 steps, 16 blocks, params '$cfg'"
    timeout 150 "$BENCH" --dir $D --mib-per-step 512 --steps 4 --blocks 16 --mem gpu \
      --repeat $REPEAT --baseline ${cfg:+--params "$cfg"}
  done
  if [ "$MODE" = full ]; then
    stamp "gpu cold reads (fadvise DONTNEED), subfiles=8"
    timeout 150 "$BENCH" --dir $D --mib-per-step 512 --steps 4 --blocks 16 --mem gpu --repeat 3 \
      --baseline --cold --params "subfiles=8,io_threads=8,pool_slots=16"
    stamp "gpu O_DIRECT writes, subfiles=8"
    timeout 150 "$BENCH" --dir $D --mib-per-step 512 --steps 4 --blocks 16 --mem gpu --repeat 3 \
      --baseline --params "subfiles=8,io_threads=8,pool_slots=16,direct_io=1"
    # issue 23: one large array per step (1, 4, 16 blocks) and 10 variables of one block, at the
    # defaults, against raw_best and the one-file rates of the same run
    for blk in 1 4 16; do
      stamp "gpu 1 GiB x 4 steps, $blk blocks, defaults (raw_best)"
      timeout 240 "$BENCH" --dir $D --mib-per-step 1024 --steps 4 --blocks $blk --mem gpu --repeat 3 \
        --baseline
    done
    stamp "gpu 1 GiB x 4 steps, 10 variables of 1 block, defaults (raw_best)"
    timeout 240 "$BENCH" --dir $D --mib-per-step 1024 --steps 4 --blocks 1 --vars 10 --mem gpu \
      --repeat 3 --baseline
    stamp "gpu 1 GiB x 4 steps, 1 and 4 blocks, splitting off (split_mib=0: the one-file rate)"
    for blk in 1 4; do
      timeout 240 "$BENCH" --dir $D --mib-per-step 1024 --steps 4 --blocks $blk --mem gpu --repeat 3 \
        --baseline --params split_mib=0
    done
    stamp "gpu 1 GiB x 4 steps, 1 block, direct_io=1 (raw_best O_DIRECT)"
    timeout 240 "$BENCH" --dir $D --mib-per-step 1024 --steps 4 --blocks 1 --mem gpu --repeat 3 \
      --baseline --params direct_io=1
    if [ -x "$B/bench/gpubp-adios2-cmp" ]; then
      for blk in 1 4 16; do
        stamp "ADIOS2 BP4 and BP5 side by side: gpu 1 GiB x 4 steps, $blk blocks"
        timeout 300 "$B/bench/gpubp-adios2-cmp" --dir $D --mib-per-step 1024 --steps 4 --blocks $blk \
          --mem gpu --repeat 3
      done
    fi
    stamp "gpu 1 GiB x 4 steps, 1 block, cold reads, defaults (raw_best)"
    timeout 240 "$BENCH" --dir $D --mib-per-step 1024 --steps 4 --blocks 1 --mem gpu --repeat 3 \
      --baseline --cold
    stamp "gpu RSS: 8 GiB of device steps (1 GiB x 8), defaults"
    timeout 150 "$BENCH" --dir $D --mib-per-step 1024 --steps 8 --blocks 4 --mem gpu --repeat 1 --baseline
    stamp "host (issue 2 setting): 256 MiB x 8 steps, 4 blocks"
    timeout 150 "$BENCH" --dir $D --mib-per-step 256 --steps 8 --blocks 4 --mem host --repeat 3 --baseline
    stamp "host, subfiles=4"
    timeout 150 "$BENCH" --dir $D --mib-per-step 256 --steps 8 --blocks 4 --mem host --repeat 3 \
      --baseline --params "subfiles=4"
  fi
  stamp done
} > "$OUT/bench.log" 2>&1

[ "$MODE" = full ] && {
  stamp "codec on 1-16 cores: gpubp_zbench 64 3 1 1,2,4,8,16"
  timeout 150 "$B/tests/compress/gpubp_zbench" 64 3 1 1,2,4,8,16
  stamp "compression from device memory (staged) vs copy-then-compress, 64 MiB x 1 step"
  timeout 200 "$BENCH" --compress zlib --dir $D --mib-per-step 64 --steps 1 --repeat 3 --mem gpu
  stamp done
} > "$OUT/compress.log" 2>&1

echo "all done in $(( $(date +%s) - t0 )) s; logs in $OUT"
tail -3 "$OUT/ctest.log"; grep -E "^exit|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log"
grep -E "===|GBps|ratios" "$OUT/bench.log" | grep -v dev_loop
if [ "$MODE" = full ]; then grep -E "===|MBps|^\|" "$OUT/compress.log"; fi
