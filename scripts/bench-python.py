#!/usr/bin/env python3
"""The Python package's figures for BENCHMARKS.md §10, side by side in one run, against the
loopback test network in this process (one site of one server, cache off):

1. ``Resolver.resolve_many`` over N resolutions against the Rust library's
   ``blocking::Resolver::resolve_many`` at the same concurrency (server mode, as ``loadgen``);
2. one blocking ``resolve`` at a time: the Python overhead per call over the same call on
   ``blocking::Resolver``;
3. 1,000 handles read by pyhandle 1.5.0 (``RESTHandleClient.retrieve_handle_record_json``,
   the test server's REST API) against ``resolve_many`` and ``resolve`` (native protocol;
   and through the same REST API with ``proxy=``), when pyhandle is installed.

Each pair alternates (Rust, Python, Rust, ...) ``--rounds`` times so that both meet the same
background load; the medians are printed, with the load average before and after. It prints
figures; it asserts nothing.

    python scripts/bench-python.py [--n 100000] [--concurrency 16,64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from handle_resolver import HandleRecord, Resolver, _native
from handle_resolver.testing import TestNetwork

HANDLES = 1000


def timed(f: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    ok = f()
    return time.perf_counter() - start, ok


def py_many(server: str, ids: list[str], concurrency: int) -> tuple[float, int]:
    r = Resolver(server=server, cache=False)

    def run() -> int:
        return sum(isinstance(o, HandleRecord) for _, o in r.resolve_many(ids, concurrency))

    return timed(run)


def py_one_by_one(server: str, ids: list[str]) -> tuple[float, int]:
    r = Resolver(server=server, cache=False)

    def run() -> int:
        ok = 0
        for i in ids:
            r.resolve(i)
            ok += 1
        return ok

    return timed(run)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=100_000, help="resolutions per resolve_many run")
    p.add_argument("--concurrency", default="16,64")
    p.add_argument("--one-by-one", type=int, default=10_000, help="resolutions per resolve run")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()}")

    with TestNetwork(sites=1, servers_per_site=1, http=True) as net:
        net.populate(HANDLES)
        server = net.servers[0]
        ids = [f"{net.prefix}/{i % HANDLES}" for i in range(args.n)]
        # Warm-up (sockets, the server's first answers).
        _native._bench_rust_resolve_many(server, ids[:2000], 16)
        py_many(server, ids[:2000], 16)

        print(f"\n1. resolve_many, {args.n} resolutions, server mode, cache off (rate/s)")
        for c in (int(x) for x in args.concurrency.split(",")):
            rust, py = [], []
            for _ in range(args.rounds):
                secs, ok = _native._bench_rust_resolve_many(server, ids, c)
                assert ok == args.n
                rust.append(args.n / secs)
                secs, ok = py_many(server, ids, c)
                assert ok == args.n
                py.append(args.n / secs)
            r, q = statistics.median(rust), statistics.median(py)
            print(
                f"   concurrency {c:>4}: Rust {r:>9,.0f}/s  Python {q:>9,.0f}/s  "
                f"Python/Rust {q / r:.2f}  (runs: Rust {[round(x) for x in rust]}, "
                f"Python {[round(x) for x in py]})"
            )

        n1 = args.one_by_one
        chunk = 200
        print(
            f"\n2. one blocking resolve at a time, {n1} resolutions each, in chunks of {chunk}"
            " alternating Rust and Python (µs per call)"
        )
        for cache in (False, True):
            rust_r = _native._RustBaseline(server, cache=cache)
            py_r = Resolver(server=server, cache=cache)
            # With the cache on, every call after the first is a cache hit: no packet, so
            # what remains is each layer's own cost.
            chunk_ids = ids[:chunk] if not cache else [f"{net.prefix}/1"] * chunk
            rust_r.resolve_each(chunk_ids)
            rust, py = [], []
            for _ in range(n1 // chunk):
                secs, ok = rust_r.resolve_each(chunk_ids)
                assert ok == chunk
                rust.append(secs / chunk * 1e6)
                start = time.perf_counter()
                for i in chunk_ids:
                    py_r.resolve(i)
                py.append((time.perf_counter() - start) / chunk * 1e6)
            diffs = [q - r for r, q in zip(rust, py)]
            quartiles = statistics.quantiles(diffs, n=4)
            print(
                f"   cache {'on (hits)' if cache else 'off'}: "
                f"Rust blocking::Resolver {statistics.median(rust):.2f} µs  "
                f"Python Resolver.resolve {statistics.median(py):.2f} µs  "
                f"Python overhead {statistics.median(diffs):+.2f} µs per call (median of "
                f"{len(diffs)} paired chunks; quartiles "
                f"{quartiles[0]:+.1f} / {quartiles[2]:+.1f})"
            )

        print(f"\n3. {HANDLES} handles: pyhandle 1.5.0 (REST API) against handle_resolver")
        try:
            import pyhandle
            from pyhandle.client.resthandleclient import RESTHandleClient
        except ImportError:
            print("   pyhandle is not installed (pip install pyhandle==1.5.0): skipped")
        else:
            rest = net.rest_url
            assert rest is not None
            handles = [f"{net.prefix}/{i}" for i in range(HANDLES)]
            client = RESTHandleClient(handle_server_url=rest, HTTPS_verify=False)

            def with_pyhandle() -> int:
                return sum(client.retrieve_handle_record_json(h) is not None for h in handles)

            proxy = Resolver(proxy=rest, cache=False)

            def via_proxy() -> int:
                return sum(isinstance(o, HandleRecord) for _, o in proxy.resolve_many(handles, 64))

            contenders: list[tuple[str, Callable[[], tuple[float, int]]]] = [
                (f"pyhandle {pyhandle.__version__} one by one", lambda: timed(with_pyhandle)),
                ("resolve_many, native, concurrency 64", lambda: py_many(server, handles, 64)),
                ("resolve_many, REST API (proxy=), concurrency 64", lambda: timed(via_proxy)),
                ("resolve one by one, native", lambda: py_one_by_one(server, handles)),
            ]
            figures: dict[str, list[float]] = {}
            for _ in range(args.rounds):
                for name, run in contenders:
                    secs, ok = run()
                    assert ok == HANDLES, (name, ok)
                    figures.setdefault(name, []).append(secs)
            base = statistics.median(next(iter(figures.values())))
            for name, runs in figures.items():
                m = statistics.median(runs)
                print(f"   {name:<48} {m * 1000:>8.1f} ms  {base / m:>6.1f}x pyhandle")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
