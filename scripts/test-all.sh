#!/usr/bin/env bash
# Every test, Rust and Python: `cargo test --all-features`, the gateway's (`cargo test -p
# handle-gateway`), the commands of README.md and docs/ against the bundled test server, then the Python
# package's wheel (a release build, scripts/build-wheel.sh) installed into a virtual
# environment of its own with pytest, ruff, mypy and Dask from PyPI, its lints, and pytest.
#
#   scripts/test-all.sh            # what .ci/run runs
#   HR_VENV=/some/venv scripts/test-all.sh
#
# The virtual environment (default target/py-venv) is made with `python3 -m venv`; where
# that cannot make one (Debian without python3-venv), with virtualenv from PyPI, and as root
# on Debian with python3-venv from apt as the last resort. Python 3.9 or newer is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${HR_VENV:-$ROOT/target/py-venv}
PYTHON=${PYTHON:-python3}
step() { printf '\n==> %s\n' "$*"; }

step "cargo test --all-features"
cargo test --all-features
# The Python tests compare with the resolve CLI's output (built by cargo test already).
cargo build --all-features --examples

step "the gateway: its tests and the conformance test on fixtures/gateway/"
cargo test -p handle-gateway --all-features

step "the commands of README.md and docs/ against the bundled test server"
"$PYTHON" scripts/readme-commands.py

make_venv() {
    "$PYTHON" -m venv "$VENV" 2>/dev/null && "$VENV/bin/python" -m pip --version >/dev/null 2>&1 && return 0
    rm -rf "$VENV"
    echo "note: python3 -m venv cannot make a virtual environment with pip here; trying virtualenv" >&2
    if "$PYTHON" -m virtualenv --version >/dev/null 2>&1 \
        || "$PYTHON" -m pip install --user --quiet virtualenv \
        || "$PYTHON" -m pip install --user --quiet --break-system-packages virtualenv; then
        "$PYTHON" -m virtualenv --quiet "$VENV" && return 0
    fi
    rm -rf "$VENV"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "note: installing python3-venv and python3-pip from Debian's packages" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
        "$PYTHON" -m venv "$VENV" && return 0
    fi
    echo "error: cannot make a Python virtual environment (no venv/ensurepip, no pip, no virtualenv)" >&2
    return 1
}

step "Python virtual environment ($VENV)"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$VENV"
    make_venv
fi
PY=$VENV/bin/python
# The build backend runs the venv's `maturin` by name.
export PATH="$VENV/bin:$PATH"
"$PY" -c 'import sys; assert sys.version_info >= (3, 9), sys.version'
"$PY" -m pip install --quiet --upgrade pip
"$PY" -m pip install --quiet "maturin>=1.7,<2" "pytest>=7" "ruff>=0.6" "mypy>=1.11" \
    "dask[bag]>=2023.1" "distributed>=2023.1" "pyhandle==1.5.0"

step "the wheel (scripts/build-wheel.sh: the release build of the extension), installed"
# The venv's maturin builds it, into the workspace's target/ (incremental, as cargo's own
# builds); python/tests/test_wheel.py installs it again where there is no Rust toolchain.
HR_WHEEL=$(scripts/build-wheel.sh | tail -n 1)
export HR_WHEEL
"$PY" -m pip install --quiet --force-reinstall --no-deps "$HR_WHEEL"

step "Python lints: ruff, mypy --strict"
PY_SOURCES=(python/pysrc python/tests examples/python scripts/bench-python.py scripts/bench-pyhandle.py scripts/readme-commands.py scripts/gateway-bench.py)
"$VENV/bin/ruff" check --config python/pyproject.toml "${PY_SOURCES[@]}"
"$VENV/bin/ruff" format --config python/pyproject.toml --check "${PY_SOURCES[@]}"
(cd python && "$VENV/bin/mypy" pysrc/handle_resolver tests ../examples/python ../scripts/bench-python.py ../scripts/bench-pyhandle.py ../scripts/readme-commands.py ../scripts/gateway-bench.py)

step "pytest python/tests"
# Run from outside the source tree, so that the installed package is the one tested.
(cd python/tests && "$PY" -m pytest -q -p no:cacheprovider --durations=5 .)
