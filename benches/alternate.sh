#!/bin/sh
# Sourced by the A/B scripts (`. benches/alternate.sh`): runs two loadgen builds in turn,
# ROUNDS times, with the same arguments, and appends their `run` lines to OUT tagged `a ` or
# `b `, so that both builds meet the same background load.
#
# Usage: alternate ROUNDS LOADGEN_A LOADGEN_B OUT ARG...
alternate() {
    rounds=$1 a=$2 b=$3 out=$4
    shift 4
    i=1
    while [ "$i" -le "$rounds" ]; do
        for which in a b; do
            bin=$a
            [ "$which" = b ] && bin=$b
            "$bin" "$@" 2>&1 | grep '^run' | sed "s/^/$which /" >>"$out"
        done
        i=$((i + 1))
    done
}
