#!/bin/sh
# A/B of library ÷ raw (loadgen against its built-in server): the builds alternate run by
# run, each run alternating its raw loop and library in 5 slices, so both builds meet the
# same background load. Prints each build's ratios, their median, and its median client CPU.
#
# Usage: sh benches/ab-ratio.sh LOADGEN_A LOADGEN_B [ROUNDS] [C] [N]
#   e.g. sh benches/ab-ratio.sh /tmp/loadgen-before target/release/examples/loadgen 6 256 100000
set -eu
a=$1 b=$2 rounds=${3:-6} c=${4:-256} n=${5:-100000}
out=$(mktemp)
. "$(dirname "$0")/alternate.sh"
alternate "$rounds" "$a" "$b" "$out" --concurrency "$c" --n "$n"
python3 - "$out" <<'PY'
import re, statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    which = line.split()[0]
    ratio = float(re.search(r"library/raw ([0-9.]+)", line).group(1))
    rate = float(re.search(r"library +(\d+)/s", line).group(1))
    cpu = float(re.search(r"library[^|]*cpu ([0-9.]+)s/100k", line).group(1))
    rows.setdefault(which, []).append((ratio, rate, cpu))
for which, r in sorted(rows.items()):
    print(f"{which.upper()}: library/raw median {st.median(x[0] for x in r):.3f} "
          f"(runs {' '.join(f'{x[0]:.2f}' for x in r)}), library median {st.median(x[1] for x in r):.0f}/s, "
          f"cpu median {st.median(x[2] for x in r):.2f} s/100k")
PY
rm -f "$out"
