#!/usr/bin/env bash
# The fuzzing campaign: seed the corpora from ../fixtures, then run each target for a fixed
# number of executions (libFuzzer's -runs=N), one target at a time, under `nice -n 19`, and
# print per target the executions, the coverage (`cov:` and `ft:` of libFuzzer's last status
# line), the time and the crashes, as a Markdown table.
#
# Usage (from anywhere):  fuzz/campaign.sh [TARGET...]          (default: every target)
#
# Environment:
#   RUNS=N             executions per target (default 10000000)
#   RUNS_<target>=N    executions for one target (e.g. RUNS_root_files=3000000)
#   TIME_<target>=S    stop that target after S seconds too (libFuzzer's -max_total_time),
#                      for the targets a signature check per input makes slow (`trust`)
#   SANITIZER=s        cargo fuzz's sanitizer (default none: the crate forbids unsafe code,
#                      and without ASan the targets run 5 to 10 times faster; overflow checks
#                      and debug assertions stay on); `address` for ASan
#   KEEP_CORPUS=1      go on from the corpora in corpus/ instead of seeding them afresh
#   CARGO_FUZZ="..."   how to call cargo-fuzz (default `cargo fuzz`, with RUSTC_BOOTSTRAP=1 so
#                      that a stable toolchain accepts the nightly flags cargo-fuzz passes;
#                      "cargo +nightly fuzz" works as well)
#
# Each run's libFuzzer output is kept in logs/<target>.log; a crash leaves its input in
# artifacts/<target>/ (replay: cargo fuzz run -s none <target> artifacts/<target>/crash-...).
set -euo pipefail

cd "$(dirname "$0")"
ALL=(message value site reassembler ident root_files json uri_list http_answer auth session jws trust batch keyfile)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")
RUNS=${RUNS:-10000000}
SANITIZER=${SANITIZER:-none}
read -r -a FUZZ <<<"${CARGO_FUZZ:-cargo fuzz}"
export RUSTC_BOOTSTRAP=${RUSTC_BOOTSTRAP:-1}

if [ "${KEEP_CORPUS:-0}" != 1 ]; then
    rm -rf corpus
fi
echo "== seeding corpus/ from ../fixtures" >&2
nice -n 19 cargo run -q --example seed --features seed >&2
echo "== building the targets (sanitizer: $SANITIZER)" >&2
nice -n 19 "${FUZZ[@]}" build -s "$SANITIZER" >&2
mkdir -p logs

# What libFuzzer leaves for a failure (crash, leak, timeout, out of memory); `slow-unit-*`
# files are not failures: an input that took long, which a machine busy with other work
# also produces (replay it to see).
failures() {
    find "$1" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l
}

rows=()
total_crashes=0
for t in "${TARGETS[@]}"; do
    var="RUNS_$t"
    n=${!var:-$RUNS}
    tvar="TIME_$t"
    limit=()
    [ -n "${!tvar:-}" ] && limit=(-max_total_time="${!tvar}")
    log="logs/$t.log"
    # (A missing directory would fail the pipeline, and with it the script, on a fresh checkout.)
    mkdir -p "artifacts/$t"
    before=$(failures "artifacts/$t")
    echo "== $t: $n executions (log: fuzz/$log)" >&2
    start=$(date +%s.%N)
    status=0
    nice -n 19 "${FUZZ[@]}" run -s "$SANITIZER" "$t" -- \
        -runs="$n" ${limit[@]+"${limit[@]}"} -timeout=30 -rss_limit_mb=1024 -print_final_stats=1 >"$log" 2>&1 || status=$?
    end=$(date +%s.%N)
    after=$(failures "artifacts/$t")
    crashes=$((after - before))
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then
        crashes="? (exit $status, see $log)"
    elif [ "$crashes" -gt 0 ]; then
        total_crashes=$((total_crashes + crashes))
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
    rate=$(awk -v n="${execs:-0}" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
    rows+=("| \`$t\` | ${execs:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $secs | $rate | $crashes |")
    echo "   ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, ${secs} s, crashes: $crashes" >&2
done

echo
echo "| target | executions | cov | ft | corpus (inputs/size) | seconds | exec/s | crashes |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
[ "$total_crashes" -eq 0 ]
