#!/bin/sh
# A fuzzing campaign: every target at once, each with -fork=J workers, for SECONDS seconds.
# Usage: tests/fuzz/run_campaign.sh BIN_DIR OUT_DIR SECONDS J
# New corpus units go to OUT_DIR/<t>/new, findings to OUT_DIR/<t>/art, logs to OUT_DIR/<t>.log.
set -u
bin=$1 out=$2 secs=$3 jobs=$4
here=$(cd "$(dirname "$0")" && pwd)
export GPUBP_FUZZ_TMP=${GPUBP_FUZZ_TMP:-/tmp}
for t in idx md0 data open; do
    mkdir -p "$out/$t/new" "$out/$t/art"
    extra=""
    case $t in md0|open|idx) extra="-use_value_profile=1" ;; esac
    "$bin/fuzz_$t" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -max_len=65536 $extra \
        -artifact_prefix="$out/$t/art/" "$out/$t/new" "$here/corpus/$t" > "$out/$t.log" 2>&1 &
done
wait
for t in idx md0 data open; do
    echo "== $t"; grep -E "^#[0-9]+: cov" "$out/$t.log" | tail -1; grep -E "Done|crash|==ERROR" "$out/$t.log" | sort | uniq -c | head -5
    ls "$out/$t/art" | head
done
