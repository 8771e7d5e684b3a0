"""python/README.md's drop-in recipe runs as written: its ``python`` block under the heading
"The pyhandle drop-in against a test network" is run by this Python, as a script of its own,
and prints what the README says it prints. Missing, the test fails. Then once more with the
README's other network, ``http_interface=None``, where the same code goes over the REST
API."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO

README = REPO / "python" / "README.md"
HEADING = "## The pyhandle drop-in against a test network"
PRINTS = "https://example.org/v1\nhttps://example.org/v2 abc\nNone\n"


def recipe() -> str:
    """The first ``python`` block under ``HEADING``, as the README has it."""
    text = README.read_text(encoding="utf-8")
    assert HEADING in text, f"{README} has no section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    found = re.search(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert found is not None, f"{README}: no ```python block under {HEADING!r}"
    return found.group(1)


def run(code: str, tmp_path: Path) -> str:
    script = tmp_path / "recipe.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_readme_recipe_runs_as_written(tmp_path: Path) -> None:
    assert run(recipe(), tmp_path) == PRINTS


def test_the_recipe_goes_over_rest_where_the_server_refuses_native(tmp_path: Path) -> None:
    code = recipe()
    assert code.count("TestNetwork(http=True)") == 1, code
    rest = code.replace("TestNetwork(http=True)", "TestNetwork(http=True, http_interface=None)")
    rest += '    assert client.protocol == "rest", client.protocol\n'
    assert run(rest, tmp_path) == PRINTS
