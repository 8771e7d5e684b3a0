"""What a native extension owes Python: the GIL released while a call waits, Ctrl-C at once,
a working runtime in a forked child."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import time

from handle_resolver import AsyncResolver, Resolver
from handle_resolver.testing import TestNetwork


def test_gil_released_during_resolve() -> None:
    with TestNetwork(sites=1, servers_per_site=1) as net:
        r = Resolver(root=net.root, cache=False)
        r.resolve("20.500.1/demo")
        net.set_faults(delay=0.5, sites_only=True)
        ticks = 0
        stop = threading.Event()

        def spin() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1

        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.05)
        start_ticks = ticks
        start = time.monotonic()
        record = r.resolve("20.500.1/demo")
        took = time.monotonic() - start
        during = ticks - start_ticks
        stop.set()
        t.join()
        assert record.url == "https://example.org/demo"
        assert took >= 0.45
        # A pure-Python loop runs hundreds of thousands of times in 0.5 s when it has the
        # GIL; with the GIL held by the call it would hardly run at all.
        assert during > 10_000, during


CTRL_C = textwrap.dedent(
    """
    import os, signal, threading, time
    from handle_resolver import Resolver
    from handle_resolver.testing import TestNetwork
    net = TestNetwork(sites=1, servers_per_site=1)
    net.set_faults(silent=True)
    r = Resolver(root=net.root, timeout=60.0)
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    try:
        {call}
    except KeyboardInterrupt:
        print("interrupted after", round(time.monotonic() - start, 3))
    """
)


def run_interrupted(call: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CTRL_C.format(call=call)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith("interrupted after"), (out.stdout, out.stderr)
    return float(line.split()[-1])


def test_ctrl_c_interrupts_resolve() -> None:
    took = run_interrupted('r.resolve("20.500.1/demo")')
    assert 0.4 <= took < 1.5, took


def test_ctrl_c_interrupts_resolve_many() -> None:
    took = run_interrupted('list(r.resolve_many(["20.500.1/a", "20.500.1/b"]))')
    assert 0.4 <= took < 1.5, took


def child_resolves(root: str, r: Resolver, conn: object) -> None:
    """In a forked child: the parent's resolver and a new one both work."""
    try:
        a = r.resolve("20.500.1/1").url
        b = Resolver(root=root).resolve("20.500.1/2").url
        os.write(conn, f"{a} {b}".encode())  # type: ignore[arg-type]
    finally:
        os._exit(0)


def test_fork(net: TestNetwork) -> None:
    r = Resolver(root=net.root, cache=False)
    assert r.resolve("20.500.1/demo").url  # the parent's runtime and sockets exist
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        child_resolves(net.root, r, write)
    os.close(write)
    got = b""
    while chunk := os.read(read, 1024):
        got += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    assert got.decode() == "https://example.org/1 https://example.org/2"
    assert r.resolve("20.500.1/3").url == "https://example.org/3"  # the parent's still works


def resolve_in_worker(args: tuple[str, str]) -> str | None:
    root, ident = args
    return (
        WORKER_RESOLVER[0].resolve(ident).url
        if WORKER_RESOLVER
        else Resolver(root=root).resolve(ident).url
    )


WORKER_RESOLVER: list[Resolver] = []


def test_multiprocessing_fork_pool(net: TestNetwork) -> None:
    # A resolver (and the async runtime) made before the fork, used in the workers.
    WORKER_RESOLVER.append(Resolver(root=net.root))
    WORKER_RESOLVER[0].resolve("20.500.1/demo")
    AsyncResolver(root=net.root)
    try:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(2) as pool:
            urls = pool.map(resolve_in_worker, [(net.root, f"20.500.1/{i}") for i in range(20)])
    finally:
        WORKER_RESOLVER.clear()
    assert urls == [f"https://example.org/{i}" for i in range(20)]


def test_async_after_fork(net: TestNetwork) -> None:
    import asyncio

    r = AsyncResolver(root=net.root)

    async def one(ident: str) -> str | None:
        return (await r.resolve(ident)).url

    assert asyncio.run(one("20.500.1/4")) == "https://example.org/4"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.write(write, str(asyncio.run(one("20.500.1/5"))).encode())
        finally:
            os._exit(0)
    os.close(write)
    got = b""
    while chunk := os.read(read, 1024):
        got += chunk
    os.close(read)
    os.waitpid(pid, 0)
    assert got.decode() == "https://example.org/5"
