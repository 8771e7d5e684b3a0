"""``Admin.run_batch`` (sync and async): a small batch file of the reference's
``hdl-genericbatch`` against the loopback test network, its log lines in file order, its
counts and the records it leaves."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

import handle_resolver as hr
from handle_resolver import AsyncResolver, BatchResult, Resolver
from handle_resolver.testing import TestNetwork

P = "20.500.1"
OWNER = f"100 HS_ADMIN 86400 1110 ADMIN 300:111111111111:0.NA/{P}"


def batch(tag: str) -> str:
    return f"""AUTHENTICATE SECKEY:300:0.NA/{P}
test-admin-secret

CREATE {P}/{tag}-1
{OWNER}
1 URL 86400 1110 UTF8 https://example.org/{tag}/1

CREATE {P}/{tag}-2
{OWNER}
1 URL 86400 1110 UTF8 https://example.org/{tag}/2

ADD {P}/{tag}-1
2 EMAIL 86400 1110 UTF8 {tag}@example.org

DELETE {P}/{tag}-2

CREATE {P}/{tag}-1
1 URL 86400 1110 UTF8 https://example.org/{tag}/again

FROBNICATE {P}/{tag}-3
"""


@pytest.fixture(scope="module")
def net() -> Iterator[TestNetwork]:
    with TestNetwork(sites=1, servers_per_site=1) as network:
        yield network


def check(net: TestNetwork, result: BatchResult, tag: str) -> None:
    assert [str(r) for r in result.reports] == [
        f"==>SUCCESS[3]: create:{P}/{tag}-1",
        f"==>SUCCESS[4]: create:{P}/{tag}-2",
        f"==>SUCCESS[5]: add values:{P}/{tag}-1",
        f"==>SUCCESS[6]: delete:{P}/{tag}-2",
        # The blank line after DELETE is a line of the main loop: [8], as the reference.
        f"==>FAILURE[8]: create:{P}/{tag}-1: Error(101): HANDLE ALREADY EXISTS",
        "==>INVALID[9]: error in command line",
    ]
    failure = result.reports[4]
    assert (failure.outcome, failure.code, failure.line) == ("failure", 101, 17)
    assert result.reports[5].outcome == "invalid" and result.reports[5].code is None
    # An invalid command line is not an entry the reference counts.
    assert (result.successes, result.total, result.lines, result.ok) == (4, 5, 9, False)
    assert result.log.endswith("Successes/Total Entries: 4/5\nBatch File Lines: 9\n")
    r = Resolver(server=net.servers[0], cache=False)
    record = r.resolve(f"{P}/{tag}-1")
    assert [v.text for v in record.values if v.type in ("URL", "EMAIL")] == [
        f"https://example.org/{tag}/1",
        f"{tag}@example.org",
    ]
    assert r.resolve_many([f"{P}/{tag}-2"]).__next__()[1].__class__.__name__ == "HandleNotFound"


def test_run_batch(net: TestNetwork, tmp_path: Path) -> None:
    admin = Resolver(server=net.servers[0]).admin(net.admin_identity, net.admin_secret)
    check(net, admin.run_batch(text=batch("text"), concurrency=4), "text")
    file = tmp_path / "ops.batch"
    file.write_text(batch("file"), encoding="utf-8")
    check(net, admin.run_batch(file), "file")
    with pytest.raises(ValueError):
        admin.run_batch()
    with pytest.raises(OSError):
        admin.run_batch(tmp_path / "missing.batch")


def test_run_batch_without_an_identity(net: TestNetwork) -> None:
    """``admin()`` without an identity: the file's AUTHENTICATE lines are the identities, as
    for ``admin batch``; a plain call needing one says so."""
    admin = Resolver(server=net.servers[0]).admin()
    check(net, admin.run_batch(text=batch("anonymous")), "anonymous")
    with pytest.raises(hr.AdminAuthenticationNeeded):
        admin.delete_handle(f"{P}/anonymous-1")


def test_run_batch_async(net: TestNetwork) -> None:
    async def main() -> BatchResult:
        admin = AsyncResolver(server=net.servers[0]).admin(net.admin_identity, net.admin_secret)
        return await admin.run_batch(text=batch("async"))

    check(net, asyncio.run(main()), "async")


def test_changes_need_an_authenticate_line(net: TestNetwork) -> None:
    """As with hdl-genericbatch: a change before the file's first AUTHENTICATE fails; a
    wrong secret fails its identity's changes."""
    text = f"""CREATE {P}/auth-none
{OWNER}

AUTHENTICATE SECKEY:300:0.NA/{P}
not-the-secret

CREATE {P}/auth-wrong
{OWNER}
"""
    admin = Resolver(server=net.servers[0]).admin(net.admin_identity, net.admin_secret)
    result = admin.run_batch(text=text)
    assert [(r.handle, r.outcome) for r in result.reports] == [
        (f"{P}/auth-none", "failure"),
        (f"{P}/auth-wrong", "failure"),
    ]
    assert result.reports[0].message == "No authentication info provided"
    assert result.reports[1].code is not None
