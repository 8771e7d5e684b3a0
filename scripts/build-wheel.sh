#!/usr/bin/env bash
# Builds the Python package as one abi3 wheel (CPython 3.9 and newer, this platform), a
# release build, and prints its path on the last line:
#
#   scripts/build-wheel.sh                 # into target/wheels/
#   WHEEL_DIR=dist scripts/build-wheel.sh
#
# It needs the Rust toolchain and maturin: the `maturin` on PATH, or else one installed from
# PyPI into a virtual environment of its own (target/wheel-venv). The wheel needs neither:
# `pip install target/wheels/handle_resolver-*.whl` on a machine of the same platform.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
OUT=${WHEEL_DIR:-$TARGET/wheels}

MATURIN=$(command -v maturin || true)
if [ -z "$MATURIN" ]; then
    VENV=$TARGET/wheel-venv
    if [ ! -x "$VENV/bin/maturin" ]; then
        "${PYTHON:-python3}" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet "maturin>=1.7,<2"
    fi
    MATURIN=$VENV/bin/maturin
fi

# Only this build's wheel in OUT afterwards, so that the path printed is the one just built.
mkdir -p "$OUT"
rm -f "$OUT"/handle_resolver-*.whl
"$MATURIN" build --release --quiet --manifest-path python/Cargo.toml --out "$OUT" >&2
WHEELS=("$OUT"/handle_resolver-*-abi3-*.whl)
if [ ! -f "${WHEELS[0]}" ]; then
    echo "error: maturin wrote no abi3 wheel into $OUT" >&2
    exit 1
fi
echo "${WHEELS[0]}"
