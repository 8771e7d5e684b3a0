#!/bin/sh
# The overload goal of issue 12, for one or more loadgen builds, alternated round by round so
# that they meet the same background load: against the built-in test server with its
# overload model (`--server-capacity 32`: at most 32 requests wait, one more is dropped),
# one run each of C = 16, 64, 256 and 1024, and per run the rates, the p99 at C=1024 and the
# ratio of C=1024 to the best fixed C of 16, 64 and 256.
#
# Usage: [CAPACITY=N] sh benches/ab-overload.sh ROUNDS LOADGEN...
#   e.g. sh benches/ab-overload.sh 3 /tmp/loadgen-before target/release/examples/loadgen
#   CAPACITY: the server's queue (default 32; issue 24 also asks for 128)
set -eu
rounds=$1
shift
i=1
while [ "$i" -le "$rounds" ]; do
    for bin in "$@"; do
        "$bin" --no-raw --server-capacity "${CAPACITY:-32}" --concurrency 16,64,256,1024 --n 100000 --slices 1 |
            awk -v bin="$bin" '
                /^run/ {
                    for (f = 1; f <= NF; f++) {
                        if ($f ~ /^C=/) c = substr($f, 3)
                        if ($f == "library") r = $(f + 1)
                        if ($f == "p99") p = $(f + 1)
                    }
                    sub("/s", "", r)
                    rate[c] = r; p99[c] = p
                    if (c != 1024 && r + 0 > best) best = r + 0
                }
                END {
                    printf "%s  C=16 %d  C=64 %d  C=256 %d  C=1024 %d/s (p99 %s)  C=1024 / best fixed C %.2f\n",
                        bin, rate[16], rate[64], rate[256], rate[1024], p99[1024], rate[1024] / best
                }'
    done
    i=$((i + 1))
done
