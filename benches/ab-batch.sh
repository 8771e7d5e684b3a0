#!/bin/sh
# The batch benchmark (issue 27): N CREATEs (default 10,000; benches/batch-file.sh) run by
# `admin batch` against the loopback test server, started afresh for every run from the batch
# samples' starting state (`--reference-store fixtures/genericbatch/server/handles.json`), so
# that every run creates the same handles into the same store. Configurations go round-robin,
# ROUNDS times, so that all meet the same background load; each run notes the 1-minute load
# average at its start. Prints, per configuration, the rate of every run (the log's
# `operations/second`), its min and median, then the ratios the issue asks for: with a 5 ms
# answer delay, concurrency 64 ÷ concurrency 1 (median of the per-round ratios) against
# ≥ 10; without delay, concurrency 1 ÷ the reference's 280 operations/s (sample 08) against ≥ 3.
#
# Usage: sh benches/ab-batch.sh ADMIN TESTSERVER [ROUNDS] [N] [CONFIG...]
#   ADMIN, TESTSERVER: release builds of the examples (target/release/examples/{admin,testserver})
#   CONFIG: DELAY_MS:CONCURRENCY[:off] (default: 5:64 5:1 0:1 0:64); `off` runs without
#   sessions: every request challenged and answered on its own (HS_SECKEY: PBKDF2-HMAC-SHA1,
#   10,000 rounds, on both sides).
#   e.g. sh benches/ab-batch.sh target/release/examples/admin target/release/examples/testserver 3
#
# With sessions (as the reference client always uses them) `admin` finds the server through
# `--root`: the prefix's HS_SITE names the server's public key, which a session setup's
# answer is checked against. `admin batch` has no option to switch sessions off (SESSIONSETUP
# cannot either, as with the reference: USESESSION:0 changes nothing), so `off` sends to
# `--server` instead: a site made from an address alone names no key, the resolver cannot
# check a setup answer, gives sessions up with that server after the first attempt and has
# every request challenged, which is what sessions off means. With $NO_SESSION set (e.g.
# `--no-session`, once `admin batch` has such an option), `off` runs `--root` with it instead.
set -eu
admin=$(realpath "$1") server=$(realpath "$2") rounds=${3:-3} n=${4:-10000}
shift 2
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
configs=${*:-5:64 5:1 0:1 0:64}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh benches/batch-file.sh "$n" > "$tmp/batch"
out=$tmp/runs

# One run: a fresh server with DELAY, `admin batch` with C; appends
# `delay c sessions rate load` to $out.
run() {
    delay=$1 c=$2 sessions=$3
    "$server" --port 0 --delay-ms "$delay" --server-admin 300:0.NA/20.500.12345 \
        --reference-store fixtures/genericbatch/server/handles.json >"$tmp/server.out" 2>&1 &
    pid=$!
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/.* on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/server.out")
        [ -n "$port" ] && break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        cat "$tmp/server.out" >&2
        kill "$pid"
        exit 1
    fi
    extra= where="--root 127.0.0.1:$port"
    if [ "$sessions" = off ]; then
        if [ -n "${NO_SESSION:-}" ]; then
            extra=$NO_SESSION
        else
            where="--server 127.0.0.1:$port"
        fi
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    status=0
    # shellcheck disable=SC2086
    "$admin" $where --timeout 60 batch "$tmp/batch" "$tmp/log" \
        --concurrency "$c" $extra || status=$?
    kill -INT "$pid"
    wait "$pid" || true
    ok=$(sed -n 's/^Successes\/Total Entries: //p' "$tmp/log")
    if [ "$status" -ne 0 ] || [ "$ok" != "$n/$n" ]; then
        echo "delay $delay, concurrency $c, sessions $sessions: exit $status, $ok" >&2
        grep -m 5 'FAILURE\|INVALID' "$tmp/log" >&2 || true
        exit 1
    fi
    rate=$(sed -n 's/.*average speed of \([0-9.E]*\) operations.*/\1/p' "$tmp/log")
    echo "$delay $c $sessions $rate $load" >>"$out"
    echo "delay ${delay} ms, concurrency $c, sessions $sessions: $rate ops/s (load $load)" >&2
}

i=1
while [ "$i" -le "$rounds" ]; do
    for config in $configs; do
        IFS=: read -r delay c sessions <<EOC
$config
EOC
        run "$delay" "$c" "${sessions:-on}"
    done
    i=$((i + 1))
done

python3 - "$out" "$n" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    delay, c, sessions, rate, load = line.split()
    runs.setdefault((int(delay), int(c), sessions), []).append((float(rate), float(load)))
print(f"{sys.argv[2]} CREATEs per run")
print("| answer delay | concurrency | sessions | runs (ops/s, load average) | min | median |")
print("| --- | --- | --- | --- | --- | --- |")
for (delay, c, sessions), r in runs.items():
    each = ", ".join(f"{x:.0f} ({l:.2f})" for x, l in r)
    rates = [x for x, _ in r]
    print(f"| {delay} ms | {c} | {sessions} | {each} | {min(rates):.0f} | {st.median(rates):.0f} |")
def ratio(a, b, label, goal):
    if a in runs and b in runs:
        pairs = [x[0] / y[0] for x, y in zip(runs[a], runs[b])]
        print(f"{label}: median of rounds {st.median(pairs):.1f} (rounds {' '.join(f'{p:.1f}' for p in pairs)}), goal >= {goal}")
ratio((5, 64, "on"), (5, 1, "on"), "5 ms, concurrency 64 / concurrency 1", 10)
ratio((5, 64, "off"), (5, 1, "off"), "5 ms, sessions off, concurrency 64 / concurrency 1", 10)
if (0, 1, "on") in runs:
    rates = [x for x, _ in runs[(0, 1, "on")]]
    print(f"no delay, concurrency 1 / the reference's 280 ops/s: median {st.median(rates) / 280:.1f}, min {min(rates) / 280:.1f}, goal >= 3")
PY
