#!/bin/sh
# Runs the criterion benches of benches/wire.rs RUNS times (default 5) and prints, per bench,
# the median over the runs of criterion's median point estimate (ns).
# Usage: sh benches/medians.sh [RUNS]
set -eu
runs=${1:-5}
dir=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
i=1
while [ "$i" -le "$runs" ]; do
    cargo bench --manifest-path "$dir/Cargo.toml" -p handle-resolver-benches --bench wire -- \
        --warm-up-time 1 --measurement-time 3 --noplot >/dev/null 2>&1
    for f in "$dir"/target/criterion/*/*/new/estimates.json; do
        name=$(echo "$f" | sed 's|.*/criterion/||; s|/new/estimates.json||')
        python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median']['point_estimate'])" "$f" \
            >>"$out/$(echo "$name" | tr / _)"
    done
    i=$((i + 1))
done
for f in "$out"/*; do
    python3 - "$f" <<'PY'
import statistics, sys, os
v = [float(x) for x in open(sys.argv[1])]
print(f"{os.path.basename(sys.argv[1]):40s} median {statistics.median(v):9.1f} ns  (runs: {', '.join(f'{x:.0f}' for x in v)})")
PY
done
rm -r "$out"
