"""The wheel `scripts/build-wheel.sh` builds installs and works where there is no Rust.

`scripts/test-all.sh` builds the wheel and names it in ``HR_WHEEL``; this installs it into a
fresh virtual environment whose ``PATH`` holds no Rust toolchain (no ``cargo``, no
``rustc``), with pip offline (``--no-index``: the wheel needs nothing else), then imports the
package there and resolves a handle of the in-process test network with it. Without
``HR_WHEEL`` naming a file, the test fails: it never skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# Directories a Python needs and a Rust toolchain is never in (rustup puts it in
# ~/.cargo/bin).
BARE_PATH = os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"])

SMOKE = """
from handle_resolver import Resolver
from handle_resolver.testing import TestNetwork

with TestNetwork() as net:
    handle = f"{net.prefix}/wheel"
    net.insert(handle, [{"index": 1, "type": "URL", "data": "https://example.org/wheel"}])
    record = Resolver(root=net.root).resolve(handle)
    print(record.handle, record.url)
"""


def test_the_wheel_installs_and_resolves_without_a_rust_toolchain(tmp_path: Path) -> None:
    wheel = os.environ.get("HR_WHEEL", "")
    assert wheel and Path(wheel).is_file(), (
        "HR_WHEEL must name the wheel scripts/build-wheel.sh built (scripts/test-all.sh sets it)"
    )
    assert Path(wheel).name.endswith(".whl") and "-abi3-" in Path(wheel).name, wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    path = os.pathsep.join([str(bin_dir), BARE_PATH])
    for tool in ("cargo", "rustc", "maturin"):
        assert shutil.which(tool, path=path) is None, f"{tool} is on the test's PATH"
    env = {"PATH": path, "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    python = str(bin_dir / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-index", wheel],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    done = subprocess.run(
        [python, "-c", SMOKE],
        check=False,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20.500.1/wheel", "https://example.org/wheel"], done.stdout
