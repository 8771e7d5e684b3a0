"""Runs pyhandle 1.5.0's own integration tests (``pyhandle/tests/testcases/
handleclient_read_integration_test.py`` and ``handleclient_write_integration_test.py``, from
the installed pyhandle) against the bundled loopback test network, with pyhandle's
``RESTHandleClient`` and exceptions replaced by ``handle_resolver.pyhandle``'s.

It copies the two files, swapping their two imports::

    from pyhandle.client.resthandleclient import RESTHandleClient
    from pyhandle.handleexceptions import *

for ``handle_resolver.pyhandle``'s (everything else they import stays pyhandle's), writes
their test-values file (``resources/testvalues_for_integration_tests_IGNORE.json``) for a
``TestNetwork`` of the prefix ``21.T14999`` with an HTTP side, whose store holds the identity
``300:21.T14999/B2HANDLE_INTEGRATION_TESTS`` (an HS_SECKEY value, allowed everything under
the prefix) and the handle the read tests read, and runs them with ``unittest``. The write
tests' own set-up and clean-up PUT and DELETE over the REST API with Basic credentials, as
they do against a real handle server: the test server takes them as the reference does.

``NOT_RUN`` and ``CANNOT_PASS`` list the tests that are left out or cannot pass, with the
reasons (python/README.md repeats them); ``run`` reports what happened to every test.
``run("credentials")`` also gives the tests' calls of pyhandle's credentials class to the
drop-in's (to show why those tests fail); ``run("upstream")`` swaps nothing: pyhandle itself
against the test server's REST API.

``run(..., http_interface=...)`` says how the server's site lists its HTTP interface:
``"adm+qry"`` (the default: the drop-in speaks the native protocol over it), ``"adm"`` (not
for queries) or ``None`` (not at all): the server refuses native queries over HTTP as the
reference does, and the drop-in talks to it as pyhandle does, over the REST API.

    python python/tests/pyhandle_integration.py [ours|credentials|upstream] [adm+qry|adm|none]
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import unittest
import unittest.mock
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

from handle_resolver.testing import TestNetwork

PREFIX = "21.T14999"
USER = f"300:{PREFIX}/B2HANDLE_INTEGRATION_TESTS"
PASSWORD = "b2handle-integration-secret"
FILES = ("handleclient_read_integration_test.py", "handleclient_write_integration_test.py")
SWAPS = (
    (
        "from pyhandle.client.resthandleclient import RESTHandleClient",
        "from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient",
    ),
    (
        "from pyhandle.handleexceptions import *",
        "from handle_resolver.pyhandle.handleexceptions import *",
    ),
)
# Only to show why the credential tests fail (``run(mode="credentials")``): the tests' calls
# of pyhandle's credentials class go to the drop-in's as well.
CREDENTIALS_SWAP = (
    "pyhandle.clientcredentials.PIDClientCredentials(",
    "handle_resolver.pyhandle.clientcredentials.PIDClientCredentials(",
)
MODES = ("ours", "credentials", "upstream")
# How the server's site lists its HTTP interface (TestNetwork's `http_interface`).
HttpInterface = Optional[Literal["adm+qry", "adm"]]

# Left out: it would send traffic to the real Handle System.
NOT_RUN = {
    "test_global_resolve": "resolves a handle at the global Handle System "
    "(hdl.handle.net): never run here (network rule: loopback only)",
}
# Run, and expected to fail, each for the reason given; the text each failure's traceback
# shows.
CREDENTIALS_CLIENT = (
    "pyhandle 1.5.0's own PIDClientCredentials, which the test calls (it is neither of the two "
    "imports swapped), raises CredentialsFormatError 'Client not provided or empty': the test "
    "gives no client='rest'"
)
CANNOT_PASS = {
    "test_instantiate_with_credentials": (CREDENTIALS_CLIENT, "Client not provided or empty"),
    "test_instantiate_with_credentials_inexistentuser": (
        CREDENTIALS_CLIENT,
        "Client not provided or empty",
    ),
    "test_instantiate_with_credentials_config": (
        CREDENTIALS_CLIENT + "; and past that it expects instantiation to fail with a "
        "GenericHandleError because a bogus REST_API_url_extension sends pyhandle's username "
        "check (a REST GET) to a path that does not exist: the drop-in's check does not go "
        "there (native, or the REST API at /api/handles/), instantiation succeeds, and the "
        "test goes on to read pyhandle's private connector "
        "(inst._EUDATHandleClient__handlesystemconnector), which the drop-in has not",
        "Client not provided or empty",
    ),
    "test_instantiate_with_credentials_config_override": (
        CREDENTIALS_CLIENT + "; and past that the same as test_instantiate_with_credentials_"
        "config, with the bogus path given to the constructor",
        "Client not provided or empty",
    ),
    "test_delete_handle_inexistent": (
        "expects delete_handle of a missing handle to return None, while pyhandle 1.5.0's "
        "own delete_handle raises HandleNotFoundException there (the server answers 404 / "
        "HANDLE_NOT_FOUND), as the drop-in does",
        "HandleNotFoundException",
    ),
}

# The record the read tests read, as their `create_required_test_handles` makes it; the
# REST API lists a record's values by index (the tests read `values[2]` as TEST1).
READ_HANDLE = f"{PREFIX}/B2HANDLE_INTEGRATION_TESTS_READ"
READ_VALUES = [
    {"index": 4, "type": "TEST4", "data": "val4"},
    {
        "index": 100,
        "type": "HS_ADMIN",
        "data": {
            "format": "admin",
            "value": {"handle": USER.split(":")[1], "index": 300, "permissions": "011111110011"},
        },
    },
    {"index": 111, "type": "TEST1", "data": "val1"},
    {"index": 333, "type": "TEST3", "data": "val3"},
    {"index": 2222, "type": "TEST2", "data": "val2"},
]


@dataclass
class Outcome:
    """What happened to each test: passed, failed (with the traceback) or not run."""

    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    not_run: dict[str, str] = field(default_factory=dict)


def pyhandle_testcases() -> Path:
    """The installed pyhandle's ``tests/testcases`` folder (pyhandle 1.5.0's wheel has it)."""
    spec = importlib.util.find_spec("pyhandle")
    if spec is None or spec.origin is None:
        raise RuntimeError("pyhandle 1.5.0 is not installed: pip install pyhandle==1.5.0")
    folder = Path(spec.origin).parent / "tests" / "testcases"
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise RuntimeError(f"{folder} lacks {missing}: install pyhandle==1.5.0 from its wheel")
    return folder


def prepare(work: Path, net: TestNetwork, mode: str = "ours") -> list[Path]:
    """The two test files beside their test-values file, their two imports swapped for the
    drop-in's (``mode="ours"``); ``"credentials"``: the tests' credentials class too;
    ``"upstream"``: nothing swapped (pyhandle itself over the test server's REST API)."""
    url = net.rest_url
    assert url is not None
    (work / "testcases").mkdir()
    (work / "resources").mkdir()
    copies = []
    for name in FILES:
        text = (pyhandle_testcases() / name).read_text(encoding="utf-8")
        swaps: tuple[tuple[str, str], ...] = () if mode == "upstream" else SWAPS
        if mode == "credentials" and CREDENTIALS_SWAP[0] in text:
            swaps += (CREDENTIALS_SWAP,)
            text = "import handle_resolver.pyhandle.clientcredentials\n" + text
        for old, new in swaps:
            if old not in text:
                raise RuntimeError(f"{name}: {old!r} is not there to swap")
            text = text.replace(old, new)
        copy = work / "testcases" / name
        copy.write_text(text, encoding="utf-8")
        copies.append(copy)
    values = {
        "user": USER,
        "password": PASSWORD,
        "handle_server_url_read": url,
        "handle_server_url_write": url,
        "url_extension_REST_API": "/api/handles/",
        "handle_for_read_tests": READ_HANDLE,
        "handle_globally_resolvable": f"{PREFIX}/NOT_RESOLVED_HERE",
        "handle_to_be_created": f"{PREFIX}/B2HANDLE_INTEGRATION_TESTS_CREATE",
        "handle_to_be_modified": f"{PREFIX}/B2HANDLE_INTEGRATION_TESTS_MODIFY",
        "HTTPS_verify": False,
    }
    target = work / "resources" / "testvalues_for_integration_tests_IGNORE.json"
    target.write_text(json.dumps(values, indent=2), encoding="utf-8")
    return copies


def network(http_interface: HttpInterface = "adm+qry") -> TestNetwork:
    """One server with an HTTP side (its site listing it as ``http_interface``), serving the
    prefix, with the tests' identity and the record the read tests read."""
    net = TestNetwork(
        sites=1, servers_per_site=1, prefix=PREFIX, http=True, http_interface=http_interface
    )
    net.add_identity(USER, secret=PASSWORD)
    net.insert(READ_HANDLE, READ_VALUES)
    return net


def _tests(suite: unittest.TestSuite) -> list[unittest.TestCase]:
    out: list[unittest.TestCase] = []
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            out.extend(_tests(item))
        else:
            out.append(item)
    return out


def run(
    mode: str = "ours", verbosity: int = 0, http_interface: HttpInterface = "adm+qry"
) -> Outcome:
    """Runs every test of the two files but ``NOT_RUN``'s against a fresh test network whose
    site lists its HTTP interface as ``http_interface`` (the files prepared for ``mode``, see
    ``prepare``)."""
    if mode not in MODES:
        raise ValueError(f"mode: one of {MODES}")
    outcome = Outcome()
    # The read tests import `mock`, the PyPI backport of `unittest.mock`.
    sys.modules.setdefault("mock", unittest.mock)
    work = Path(tempfile.mkdtemp(prefix="pyhandle-integration-"))
    try:
        with network(http_interface) as net:
            for path in prepare(work, net, mode):
                module_name = f"{path.stem}_{mode}_{http_interface}"
                spec = importlib.util.spec_from_file_location(module_name, path)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                loaded = unittest.defaultTestLoader.loadTestsFromModule(module)
                for test in _tests(loaded):
                    name = test.id().rsplit(".", 1)[-1]
                    if name in NOT_RUN:
                        outcome.not_run[name] = NOT_RUN[name]
                        continue
                    result = unittest.TestResult()
                    test.run(result)
                    problems = result.failures + result.errors
                    if problems:
                        outcome.failed[name] = problems[0][1]
                    elif result.skipped:
                        outcome.not_run[name] = result.skipped[0][1]
                    else:
                        outcome.passed.append(name)
                    if verbosity:
                        state = "FAIL" if problems else "ok"
                        print(f"{state:4} {path.stem}.{name}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return outcome


def expected_failures(outcome: Outcome) -> dict[str, str]:
    """The tests that failed other than ``CANNOT_PASS`` says (unexpected failures, expected
    ones that passed or failed for another reason), each with what happened."""
    wrong: dict[str, str] = {}
    for name, trace in outcome.failed.items():
        if name not in CANNOT_PASS:
            wrong[name] = trace
        elif CANNOT_PASS[name][1] not in trace:
            wrong[name] = f"failed, but not with {CANNOT_PASS[name][1]!r}: {trace}"
    for name in CANNOT_PASS:
        if name in outcome.passed:
            wrong[name] = "passed, though listed as one that cannot pass"
    return wrong


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "ours"
    listed = sys.argv[2] if len(sys.argv) > 2 else "adm+qry"
    interface: HttpInterface = "adm" if listed == "adm" else None if listed == "none" else "adm+qry"
    outcome = run(mode, verbosity=1, http_interface=interface)
    print(f"\n{mode}: {len(outcome.passed)} passed, {len(outcome.failed)} failed, ", end="")
    print(f"{len(outcome.not_run)} not run")
    for name, why in outcome.not_run.items():
        print(f"not run: {name}: {why}")
    for name, trace in outcome.failed.items():
        reason = CANNOT_PASS.get(name, ("", ""))[0]
        print(f"failed: {name}: {reason or trace.strip().splitlines()[-1]}")
    if mode != "ours":
        return 0
    wrong = expected_failures(outcome)
    for name, what in wrong.items():
        print(f"UNEXPECTED: {name}: {what}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
