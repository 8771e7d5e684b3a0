#!/usr/bin/env python3
"""pyhandle 1.5.0 against the drop-in ``handle_resolver.pyhandle`` (BENCHMARKS.md §13): the
same calls as user code makes them, one at a time, against the loopback test network in this
process (one site of one server with an HTTP side):

- 1,000 reads: ``retrieve_handle_record_json(handle)`` of 1,000 handles of one URL each;
- 200 registrations: ``register_handle(handle, url, checksum=...)`` of new handles (pyhandle
  first reads the handle to refuse an existing one, then creates it; so does the drop-in),
  authenticated as ``300:PREFIX/WRITER`` (HS_SECKEY).

pyhandle goes through the test server's REST API (GET; PUT with Basic credentials, which the
server checks on every request as the reference server does); the drop-in through the
server's HTTP interface (native messages POSTed over HTTP: ``http://``) and through its
native address (``hdl://``: UDP reads, TCP writes); and, for comparison, the package's own
``Resolver`` / ``Admin`` through the network's root, whose site record carries the server's
key so that writes go in one session. The contenders alternate within each
round, ``--rounds`` rounds; the minimum and median of each are printed, with the load
average before and after. It prints figures; it asserts nothing but that every call did what
it should.

    python scripts/bench-pyhandle.py [--reads 1000] [--registrations 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from handle_resolver import HandleNotFound, Resolver
from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
from handle_resolver.testing import TestNetwork

USER_SUFFIX = "WRITER"
SECRET = "bench-secret"


def contenders(net: TestNetwork) -> list[tuple[str, Callable[..., Any]]]:
    """(name, factory of a client for `username`/`password` or read-only)."""
    from pyhandle.client.resthandleclient import RESTHandleClient as Upstream

    rest = net.rest_url
    assert rest is not None
    native = f"hdl://{net.servers[0]}"

    def upstream(**creds: Any) -> Any:
        return Upstream(rest, HTTPS_verify=False, **creds)

    return [
        ("pyhandle 1.5.0 (REST API)", upstream),
        ("drop-in, http:// (native over HTTP)", lambda **c: RESTHandleClient(rest, **c)),
        ("drop-in, hdl:// (UDP / TCP)", lambda **c: RESTHandleClient(native, **c)),
        ("handle_resolver, root= (sessions)", lambda **c: ThroughRoot(net, **c)),
    ]


class ThroughRoot:
    """The same two calls on the package's own API, through the network's root: the
    server's site record (with its key) comes from the service lookup, so that writes go in
    a session set up once (a bare server address has no key to check a session setup with,
    so each write of the drop-in answers a challenge)."""

    def __init__(self, net: TestNetwork, **creds: Any) -> None:
        self.resolver = Resolver(root=net.root, cache=False)
        user = creds.get("username")
        self.admin = None if user is None else self.resolver.admin(user, creds["password"])
        self.owner = {
            "index": 100,
            "type": "HS_ADMIN",
            "data": {
                "format": "admin",
                "value": {"handle": str(user).split(":")[-1], "index": 300},
            },
        }

    def retrieve_handle_record_json(self, handle: str) -> dict[str, Any] | None:
        try:
            return self.resolver.resolve(handle).to_dict()
        except HandleNotFound:
            return None

    def register_handle(self, handle: str, location: str, checksum: str) -> str:
        assert self.admin is not None
        if self.retrieve_handle_record_json(handle) is not None:
            raise RuntimeError(f"{handle} exists already")
        values = [
            self.owner,
            {"index": 1, "type": "URL", "data": {"format": "string", "value": location}},
            {"index": 2, "type": "CHECKSUM", "data": {"format": "string", "value": checksum}},
        ]
        return self.admin.create_handle(handle, values)


def timed(f: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    done = f()
    return time.perf_counter() - start, done


def report(title: str, n: int, figures: dict[str, list[float]]) -> None:
    print(f"\n{title}")
    base = statistics.median(next(iter(figures.values())))
    for name, runs in figures.items():
        med, low = statistics.median(runs), min(runs)
        print(
            f"   {name:<38} min {low * 1000:>8.1f} ms  median {med * 1000:>8.1f} ms "
            f"({med / n * 1e6:>7.0f} µs per call)  {base / med:>5.1f}x pyhandle"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--reads", type=int, default=1000)
    p.add_argument("--registrations", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with TestNetwork(sites=1, servers_per_site=1, http=True) as net:
        net.populate(args.reads)
        user = f"300:{net.prefix}/{USER_SUFFIX}"
        net.add_identity(user, secret=SECRET)
        handles = [f"{net.prefix}/{i}" for i in range(args.reads)]
        clients = contenders(net)
        readers = [(name, make()) for name, make in clients]
        writers = [
            (name, make(username=user, password=SECRET, handleowner=user)) for name, make in clients
        ]
        # Warm-up: connections, the server's first answers, the writers' sessions.
        for (_, r), (_, w) in zip(readers, writers):
            r.retrieve_handle_record_json(handles[0])
            w.register_handle(f"{net.prefix}/warm-{id(w)}", "https://example.org/w", checksum="w")

        reads: dict[str, list[float]] = {}
        writes: dict[str, list[float]] = {}
        for round_no in range(args.rounds):
            for name, client in readers:

                def read_all(client: Any = client) -> int:
                    return sum(client.retrieve_handle_record_json(h) is not None for h in handles)

                secs, done = timed(read_all)
                assert done == args.reads, (name, done)
                reads.setdefault(name, []).append(secs)
            for k, (name, client) in enumerate(writers):
                stems = [f"{net.prefix}/r{round_no}-c{k}-{i}" for i in range(args.registrations)]

                def register_all(client: Any = client, stems: list[str] = stems) -> int:
                    for h in stems:
                        client.register_handle(h, f"https://example.org/{h}", checksum="abc")
                    return len(stems)

                secs, done = timed(register_all)
                assert done == args.registrations
                writes.setdefault(name, []).append(secs)
        report(f"{args.reads} reads, one at a time ({args.rounds} rounds)", args.reads, reads)
        report(
            f"{args.registrations} registrations, one at a time ({args.rounds} rounds)",
            args.registrations,
            writes,
        )
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
