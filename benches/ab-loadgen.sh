#!/bin/sh
# A/B of two loadgen builds against one external server, alternated run by run so both meet
# the same background load. Prints, per build, the median rate, p50 latency and client CPU
# per 100,000 resolutions, then the ratios B / A (of the medians, and the median of the
# per-pair rate ratios).
#
# Usage: sh benches/ab-loadgen.sh LOADGEN_A LOADGEN_B SERVER HANDLE C N PAIRS [LAYER]
#   LAYER: library (default: the resolver through the transport) or transport (the transport
#   layer alone, `loadgen --transport-layer --no-library`)
#   e.g. sh benches/ab-loadgen.sh /tmp/loadgen-old target/release/examples/loadgen \
#            127.0.0.1:26410 20.500.1/1 256 50000 15
# with the test server running: target/release/examples/testserver --port 26410 \
#   fixtures/testserver/handles.json
set -eu
a=$1 b=$2 server=$3 handle=$4 c=$5 n=$6 pairs=$7 layer=${8:-library}
case "$layer" in
library) only="" ;;
transport) only="--transport-layer --no-library" ;;
*) echo "LAYER: library or transport" >&2; exit 2 ;;
esac
out=$(mktemp)
. "$(dirname "$0")/alternate.sh"
# shellcheck disable=SC2086
alternate "$pairs" "$a" "$b" "$out" --server "$server" --handle "$handle" --transport udp \
    --concurrency "$c" --n "$n" --no-raw $only
python3 - "$out" "$layer" <<'PY'
import re, statistics as st, sys
layer = sys.argv[2]
rows = {}
for line in open(sys.argv[1]):
    which = line.split()[0]
    part = line[line.index(f"| {layer}"):]
    rate = float(re.search(layer + r"\s+(\d+)/s", part).group(1))
    cpu = float(re.search(r"cpu ([\d.]+)s/100k", part).group(1))
    p50 = int(re.search(r"p50 (\d+)us", part).group(1))
    rows.setdefault(which, []).append((rate, cpu, p50))
a, b = rows["a"], rows["b"]
med = lambda xs, i: st.median(x[i] for x in xs)
for name, xs in (("A", a), ("B", b)):
    print(f"{name}: {med(xs, 0):.0f}/s  p50 {med(xs, 2)} us  cpu {med(xs, 1):.2f} s/100k  (rates {' '.join(str(int(x[0])) for x in xs)})")
pairs = [y[0] / x[0] for x, y in zip(a, b)]
print(f"B/A: rate {med(b, 0) / med(a, 0):.3f} (median of pairs {st.median(pairs):.3f}), cpu {med(b, 1) / med(a, 1):.3f}")
PY
rm -f "$out"
