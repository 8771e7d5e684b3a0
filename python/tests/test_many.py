"""`resolve_many`: every input once, in completion order, the input read lazily through a
bounded window, memory that does not grow with the input, closing that stops the work."""

from __future__ import annotations

import gc
import itertools
import tracemalloc
from collections.abc import Iterator

import handle_resolver as hr
from handle_resolver import HandleRecord, Resolver
from handle_resolver.testing import TestNetwork


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize()


class Counting:
    """An input that counts how far it has been read."""

    def __init__(self, items: Iterator[str]) -> None:
        self.items = items
        self.pulled = 0

    def __iter__(self) -> Counting:
        return self

    def __next__(self) -> str:
        item = next(self.items)
        self.pulled += 1
        return item


def test_every_input_once(net: TestNetwork, resolver: Resolver) -> None:
    ids = [f"20.500.1/{i}" for i in range(500)] + ["20.500.1/nothere", "bad id", "20.500.1/demo"]
    seen: dict[str, object] = {}
    for ident, outcome in resolver.resolve_many(ids, concurrency=32):
        assert ident not in seen
        seen[ident] = outcome
    assert set(seen) == set(ids)
    for i in range(500):
        record = seen[f"20.500.1/{i}"]
        assert isinstance(record, HandleRecord) and record.url == f"https://example.org/{i}"
    assert isinstance(seen["20.500.1/nothere"], hr.HandleNotFound)
    assert isinstance(seen["bad id"], hr.InvalidIdentifier)


def test_completion_order(net: TestNetwork) -> None:
    """An invalid identifier fails at once, before the network answers the ones before it."""
    r = Resolver(root=net.root, cache=False)
    r.resolve("20.500.1/demo")  # the service is known: later requests go straight to a site
    net.set_faults(delay=0.2, sites_only=True)
    try:
        order = [
            i for i, _ in r.resolve_many(["20.500.1/1", "20.500.1/2", "not valid"], concurrency=3)
        ]
    finally:
        net.set_faults()
    assert order[0] == "not valid" and sorted(order[1:]) == ["20.500.1/1", "20.500.1/2"]


def test_lazy_bounded_window(net: TestNetwork, resolver: Resolver) -> None:
    source = Counting(f"20.500.1/{i % 1000}" for i in range(10_000))
    it = resolver.resolve_many(source, concurrency=8)
    assert source.pulled == 0  # nothing is read before the first result is asked for
    read = 0
    for _ in it:
        read += 1
        # At most `concurrency` identifiers are read ahead of the results handed back.
        assert source.pulled - read <= 8
    assert read == source.pulled == 10_000


def test_close_stops_reading(net: TestNetwork, resolver: Resolver) -> None:
    source = Counting(f"20.500.1/{i}" for i in itertools.count())
    with resolver.resolve_many(source, concurrency=4) as it:
        first = next(it)
        assert first[0].startswith("20.500.1/")
    pulled = source.pulled
    assert pulled <= 5
    assert list(it) == []
    assert source.pulled == pulled
    it2 = resolver.resolve_many(source, concurrency=4)
    next(it2)
    it2.close()
    assert list(it2) == []


def test_100k_without_memory_growth(net: TestNetwork) -> None:
    """100,000 resolutions (cache off): the window holds at most `concurrency` inputs, so
    neither Python's allocations nor the process's resident memory grow with the input."""
    r = Resolver(root=net.root, cache=False, timeout=10.0)
    n = 100_000
    source = Counting(f"20.500.1/{i % 1000}" for i in range(n))
    gc.collect()
    tracemalloc.start()
    ok = 0
    rss_after_warmup = 0
    for count, (_, outcome) in enumerate(r.resolve_many(source, concurrency=64), 1):
        ok += isinstance(outcome, HandleRecord)
        if count == 10_000:
            gc.collect()
            rss_after_warmup = rss_bytes()
            tracemalloc.reset_peak()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    gc.collect()
    grown = rss_bytes() - rss_after_warmup
    assert ok == n and source.pulled == n
    # Python objects alive at once: the window's 64 inputs and results, not 100,000.
    assert peak < 2 * 1024 * 1024, peak
    # 90,000 more resolutions after the warm-up: the resident memory stays put (a list of
    # 90,000 results would take tens of MB).
    assert grown < 16 * 1024 * 1024, grown
