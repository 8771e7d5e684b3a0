"""The same write calls on pyhandle 1.5.0 (REST PUT and DELETE with Basic credentials, to
the test server's REST API) and on handle_resolver.pyhandle (native administration over the
same server's HTTP interface), each against a test network of its own: the same returns, the
same exceptions, the same records afterwards (timestamps aside).

Where they differ, on purpose: an allowed change of HS_ADMIN (``modify_HS_ADMIN=True``),
where pyhandle 1.5.0 fails with ``KeyError`` (it takes the value's timestamp out twice) and
the drop-in changes it; a modification that changes nothing, where pyhandle 1.5.0 fails with
``UnboundLocalError`` (it reads the response it never got) and the drop-in returns the
handle. Left out: the 10320/LOC calls, which pyhandle 1.5.0 no longer has."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
from handle_resolver.testing import TestNetwork

# pyhandle 1.5.0 is installed by scripts/test-all.sh: without it these tests fail (at
# collection), never skip.
if importlib.util.find_spec("pyhandle") is None:
    raise ImportError("pyhandle 1.5.0 is not installed (scripts/test-all.sh installs it)")

P = "20.500.1"
USER = f"300:{P}/WRITER"
SECRET = "compare-secret"
ADMIN = {"handle": f"{P}/WRITER", "index": 300}


def network() -> TestNetwork:
    net = TestNetwork(sites=1, servers_per_site=1, http=True)
    net.add_identity(USER, secret=SECRET)
    return net


@pytest.fixture(scope="module")
def nets() -> Iterator[tuple[TestNetwork, TestNetwork]]:
    """One network for pyhandle, one for the drop-in."""
    with network() as upstream, network() as ours:
        yield upstream, ours


def url(net: TestNetwork) -> str:
    rest = net.rest_url
    assert rest is not None
    return rest


def clients(
    nets: tuple[TestNetwork, TestNetwork], password: str = SECRET, **config: Any
) -> tuple[Any, Any]:
    """pyhandle's client for the first network, ours for the second, as ``USER``."""
    from pyhandle.client.resthandleclient import RESTHandleClient as Upstream

    upstream, ours = nets
    config.setdefault("handleowner", USER)
    return (
        Upstream.instantiate_with_username_and_password(
            url(upstream), USER, password, HTTPS_verify=False, **config
        ),
        RESTHandleClient.instantiate_with_username_and_password(
            url(ours), USER, password, **config
        ),
    )


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What a call gave: ``("return", value)`` or ``("raise", exception class name)``."""
    try:
        return ("return", call())
    except Exception as e:  # the class name, as ours subclass pyhandle's of that name
        return ("raise", type(e).__name__)


def record(net: TestNetwork, handle: str) -> list[tuple[Any, ...]]:
    """The record as (index, type, data, ttl, permissions) read natively, timestamps aside."""
    doc = RESTHandleClient(f"hdl://{net.servers[0]}").retrieve_handle_record_json(handle)
    if doc is None:
        return []
    return sorted(
        (e["index"], e["type"], e["data"], e.get("ttl"), e.get("permissions"))
        for e in doc["values"]
    )


def same(
    nets: tuple[TestNetwork, TestNetwork],
    pair: tuple[Any, Any],
    method: str,
    *args: Any,
    **kwargs: Any,
) -> tuple[str, Any]:
    """Calls `method` on both clients; both outcomes must be equal."""
    up, ours = pair
    a = outcome(lambda: getattr(up, method)(*args, **kwargs))
    b = outcome(lambda: getattr(ours, method)(*args, **kwargs))
    assert a == b, f"{method}{args}{kwargs}: pyhandle {a}, ours {b}"
    return a


def same_records(nets: tuple[TestNetwork, TestNetwork], *handles: str) -> None:
    for h in handles:
        assert record(nets[0], h) == record(nets[1], h), h


def test_registrations(nets: tuple[TestNetwork, TestNetwork]) -> None:
    pair = clients(nets)
    h1, h2, h3 = f"{P}/c1", f"{P}/c2", f"{P}/c3"
    assert same(nets, pair, "register_handle", h1, "https://a/", checksum="c", EMAIL="e") == (
        "return",
        h1,
    )
    same(nets, pair, "register_handle", h1, "https://b/")
    same(nets, pair, "register_handle", h1, "https://b/", overwrite=True)
    same(nets, pair, "register_handle_kv", h2, URL="https://kv/", FOO="bar")
    entries = [
        {"index": 7, "type": "URL", "data": "https://json/"},
        {"index": 8, "type": "NOTE", "data": {"format": "string", "value": "n"}, "ttl": 60},
    ]
    same(nets, pair, "register_handle_json", h3, entries)
    same(nets, pair, "register_handle_json", h3, entries)
    same(nets, pair, "register_handle_json", h3, entries, overwrite=True)
    same_records(nets, h1, h2, h3)
    up, ours = pair
    made_up = up.generate_and_register_handle(P, "https://gen/", checksum="g")
    made_ours = ours.generate_and_register_handle(P, "https://gen/", checksum="g")
    assert record(nets[0], made_up) == record(nets[1], made_ours)
    assert made_up != made_ours and len(made_up) == len(made_ours) == len(P) + 37


def test_modifications_and_deletions(nets: tuple[TestNetwork, TestNetwork]) -> None:
    pair = clients(nets)
    h = f"{P}/m1"
    same(nets, pair, "register_handle", h, "https://a/", CHECKSUM="c")
    same(nets, pair, "modify_handle_value", h, URL="https://m/", NEW="n")
    same(nets, pair, "modify_handle_value", h, ttl=120, MORE="m")
    same(nets, pair, "modify_or_add_handle_value", h, URL="https://m2/", OTHER="o")
    same(nets, pair, "modify_handle_value_not_add", h, URL="https://m3/", ABSENT="a")
    same(nets, pair, "add_handle_value", h, ADDED="x")
    same(nets, pair, "add_handle_value", h, URL="https://again/")
    same(nets, pair, "modify_handle_value", h, HS_ADMIN=ADMIN)
    same_records(nets, h)
    same(nets, pair, "delete_handle_value", h, "NEW")
    same(nets, pair, "delete_handle_value", h, ["MORE", "ADDED", "MORE"])
    same(nets, pair, "delete_handle_value", h, "ABSENT")
    same(nets, pair, "delete_handle_value", h, "HS_ADMIN")
    same_records(nets, h)
    same(nets, pair, "delete_handle", h, "URL")
    same(nets, pair, "delete_handle", h)
    same(nets, pair, "delete_handle", h)
    same(nets, pair, "modify_handle_value", h, URL="x")
    same(nets, pair, "delete_handle_value", h, "URL")
    same_records(nets, h)
    # Broken records (a key twice) are refused before anything is sent. (Stored with
    # timestamps, as a server stores values: pyhandle takes each value's out.)
    stamp = "2026-01-01T00:00:00Z"
    twice = [{"index": i, "type": "URL", "data": f"u{i}", "timestamp": stamp} for i in (1, 2)]
    for net in nets:
        net.insert(f"{P}/twice", twice)
    same(nets, pair, "modify_handle_value", f"{P}/twice", URL="u3")
    same_records(nets, f"{P}/twice")
    # HS_ADMIN changed where allowed: pyhandle 1.5.0 fails with KeyError (it takes the
    # value's timestamp out twice); the drop-in changes it, with the configured permissions.
    up, ours = clients(nets, modify_HS_ADMIN=True, HS_ADMIN_permissions="111111111111")
    same(nets, pair, "register_handle", f"{P}/adm", "https://a/")
    assert outcome(lambda: up.modify_handle_value(f"{P}/adm", HS_ADMIN=dict(ADMIN))) == (
        "raise",
        "KeyError",
    )
    assert ours.modify_handle_value(f"{P}/adm", HS_ADMIN=dict(ADMIN)) == f"{P}/adm"
    admin = [v for v in record(nets[1], f"{P}/adm") if v[1] == "HS_ADMIN"]
    assert admin[0][2]["value"] == dict(ADMIN, permissions="111111111111")


def test_refusals(nets: tuple[TestNetwork, TestNetwork]) -> None:
    from pyhandle.client.resthandleclient import RESTHandleClient as Upstream

    h = f"{P}/refused"
    anonymous = (
        Upstream(url(nets[0]), HTTPS_verify=False),
        RESTHandleClient(url(nets[1])),
    )
    same(nets, anonymous, "register_handle", h, "https://a/")
    same(nets, anonymous, "delete_handle", h)
    wrong = clients(nets, password="not-the-secret")
    same(nets, wrong, "register_handle", h, "https://a/")
    same_records(nets, h)
    assert record(nets[1], h) == []


def test_a_modification_that_changes_nothing(nets: tuple[TestNetwork, TestNetwork]) -> None:
    up, ours = clients(nets)
    for client in (up, ours):
        client.register_handle(f"{P}/same", "https://a/")
    assert outcome(lambda: up.modify_handle_value_not_add(f"{P}/same", NEW="n")) == (
        "raise",
        "UnboundLocalError",
    )
    assert ours.modify_handle_value_not_add(f"{P}/same", NEW="n") == f"{P}/same"
    same_records(nets, f"{P}/same")
