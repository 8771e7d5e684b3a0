"""AsyncResolver: awaitable calls on the shared runtime, `async for` over resolve_many,
cancellation of an awaited resolve and of an iteration."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import owner_value

import handle_resolver as hr
from handle_resolver import AsyncResolver, HandleRecord, HandleValue
from handle_resolver.testing import TestNetwork


def test_resolve_and_errors(net: TestNetwork) -> None:
    async def main() -> None:
        r = AsyncResolver(root=net.root, timeout=5.0)
        record = await r.resolve("20.500.1/demo")
        assert record.url == "https://example.org/demo"
        records = await asyncio.gather(*(r.resolve(f"20.500.1/{i}") for i in range(50)))
        assert [x.url for x in records] == [f"https://example.org/{i}" for i in range(50)]
        with pytest.raises(hr.HandleNotFound) as info:
            await r.resolve("20.500.1/nothere")
        assert info.value.response_code == 100 and info.value.server in net.servers
        with pytest.raises(hr.InvalidIdentifier):
            await r.resolve("nope")
        assert [v.index for v in await r.resolve("20.500.1/demo", types=["EMAIL"])] == [2]

    asyncio.run(main())


def test_resolve_many(net: TestNetwork) -> None:
    async def main() -> None:
        r = AsyncResolver(root=net.root, cache=False)
        ids = [f"20.500.1/{i}" for i in range(300)] + ["20.500.1/nothere"]
        seen = {}
        async for ident, outcome in r.resolve_many(iter(ids), concurrency=16):
            assert ident not in seen
            seen[ident] = outcome
        assert set(seen) == set(ids)
        assert all(isinstance(seen[f"20.500.1/{i}"], HandleRecord) for i in range(300))
        assert isinstance(seen["20.500.1/nothere"], hr.HandleNotFound)

    asyncio.run(main())


def test_urn_and_admin() -> None:
    net = TestNetwork(sites=1, http=True)

    async def main() -> None:
        net.add_urn("urn:fdc:example.org:2024:async", ["https://example.org/async"])
        r = AsyncResolver(root=net.root, urn_resolver=net.rest_url)
        assert await r.resolve_urn("urn:fdc:example.org:2024:async") == [
            "https://example.org/async"
        ]
        admin = r.admin(net.admin_identity, secret=net.admin_secret)
        assert (
            await admin.create_handle(
                "20.500.1/async",
                [HandleValue(1, "URL", "https://x.example/"), owner_value(net.admin_identity)],
            )
            == "20.500.1/async"
        )
        await admin.add_values("20.500.1/async", [HandleValue(2, "DESC", "d")])
        await admin.modify_values("20.500.1/async", [HandleValue(2, "DESC", "e")])
        await admin.remove_values("20.500.1/async", [2])
        with pytest.raises(hr.HandleAlreadyExists):
            await admin.create_handle(
                "20.500.1/async", [HandleValue(1, "URL", "https://y.example/")]
            )
        lister = AsyncResolver(server=net.servers[0]).admin(
            net.admin_identity, secret=net.admin_secret
        )
        assert "20.500.1/async" in await lister.list_handles("20.500.1")
        await admin.delete_handle("20.500.1/async")
        with pytest.raises(hr.HandleDoesNotExist):
            await admin.delete_handle("20.500.1/async")

    with net:
        asyncio.run(main())


def wait_quiet(net: TestNetwork, seconds: float) -> tuple[int, int]:
    before = net.requests()
    time.sleep(seconds)
    return before, net.requests()


def test_cancel_resolve_stops_requests() -> None:
    """A cancelled resolve sends nothing more: without the cancellation its UDP
    retransmissions (0.5 s, then 1 s, ...) and the TCP fallback would reach the server."""
    with TestNetwork(sites=1, servers_per_site=1) as net:

        async def main() -> None:
            r = AsyncResolver(root=net.root, timeout=30.0)
            await r.resolve("20.500.1/demo")  # the service is known
            net.set_faults(silent=True, sites_only=True)
            task = asyncio.ensure_future(r.resolve("20.500.1/1"))
            await asyncio.sleep(0.2)
            assert net.requests() >= 1
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        time.sleep(0.1)
        before, after = wait_quiet(net, 2.0)
        assert after == before


def test_cancel_iteration_stops_requests() -> None:
    with TestNetwork(sites=1, servers_per_site=1) as net:

        async def main() -> None:
            r = AsyncResolver(root=net.root, timeout=30.0)
            await r.resolve("20.500.1/demo")
            net.set_faults(silent=True, sites_only=True)
            many = r.resolve_many((f"20.500.1/{i}" for i in range(100)), concurrency=4)
            step = asyncio.ensure_future(many.__anext__())
            await asyncio.sleep(0.3)
            assert net.requests() >= 4
            step.cancel()
            await many.aclose()
            with pytest.raises(StopAsyncIteration):
                await many.__anext__()

        asyncio.run(main())
        time.sleep(0.1)
        before, after = wait_quiet(net, 2.0)
        assert after == before
