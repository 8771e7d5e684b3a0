"""Resolution through the loopback test network: records, values, filters, JSON, pickling,
parse, URNs; the results checked against the `resolve` CLI's own JSON."""

from __future__ import annotations

import asyncio
import datetime
import json
import pickle
import subprocess
from pathlib import Path

import pytest

import handle_resolver as hr
from handle_resolver import HandleRecord, HandleValue, Resolver
from handle_resolver.testing import TestNetwork


def test_resolve_record(resolver: Resolver) -> None:
    record = resolver.resolve("20.500.1/demo")
    assert isinstance(record, HandleRecord)
    assert record.handle == "20.500.1/demo"
    assert record.url == "https://example.org/demo"
    assert record.urls == ["https://example.org/demo"]
    assert len(record) == 3
    assert [v.type for v in record] == ["URL", "EMAIL", "DESC"]
    assert record[1].text == "demo@example.org"
    assert record[-1].type == "DESC"
    assert [v.index for v in record.values_of_type("email")] == [2]
    assert repr(record) == 'HandleRecord(handle="20.500.1/demo", values=[1:URL, 2:EMAIL, 3:DESC])'
    assert record.source["transport"] == "udp"
    server = record.source["server"]
    assert server is not None and server.startswith("127.0.0.1:")
    assert record.source["site"] in ("test site 0", "test site 1")
    # Root (prefix handle, service handle), then the handle's server.
    assert [a["handle"] for a in record.attempts][-1] == "20.500.1/demo"
    assert all(a["responseCode"] == 1 for a in record.attempts)
    again = resolver.resolve("20.500.1/demo")
    assert again.from_cache and again.attempts == []


def test_identifier_forms(resolver: Resolver) -> None:
    for form in ("hdl:20.500.1/demo", "https://hdl.handle.net/20.500.1/demo", " 20.500.1/demo\n"):
        assert resolver.resolve(form).handle == "20.500.1/demo"
    assert resolver.resolve(hr.parse("hdl:20.500.1/demo")).url == "https://example.org/demo"


def test_filters_and_aliases(net: TestNetwork) -> None:
    r = Resolver(root=net.root, cache=False)
    assert [v.type for v in r.resolve("20.500.1/demo", types="EMAIL")] == ["EMAIL"]
    assert [v.index for v in r.resolve("20.500.1/demo", types=["URL", "DESC"])] == [1, 3]
    assert [v.index for v in r.resolve("20.500.1/demo", indexes=[3])] == [3]
    alias = r.resolve("20.500.1/alias")
    assert [v.type for v in alias] == ["HS_ALIAS"] and alias.url is None
    followed = Resolver(root=net.root, follow_aliases=True).resolve("20.500.1/alias")
    assert followed.handle == "20.500.1/demo"
    assert followed.aliases == ["20.500.1/alias", "20.500.1/demo"]
    assert followed.to_dict()["aliases"] == ["20.500.1/alias", "20.500.1/demo"]


def test_values_typed_and_shaped(net: TestNetwork, resolver: Resolver) -> None:
    loc = (
        '<locations><location href="https://a.example.org/" weight="1"/>'
        '<location href="https://b.example.org/" weight="0"/></locations>'
    )
    admin = {
        "index": 100,
        "type": "HS_ADMIN",
        "data": {
            "format": "admin",
            "value": {"handle": "0.NA/20.500.1", "index": 200, "permissions": "011111110011"},
        },
    }
    net.insert(
        "20.500.1/typed",
        [
            HandleValue(1, "URL", "https://example.org/t", ttl=3600, timestamp=1767225600),
            HandleValue(2, "10320/loc", loc),
            HandleValue(3, "BLOB", b"\x00\xff", permissions="1111"),
            HandleValue(4, "DESC", "until 2033", ttl=2000000000, ttl_type="absolute"),
            admin,
            {
                "index": 101,
                "type": "HS_VLIST",
                "data": {"format": "vlist", "value": [{"handle": "20.500.1/a", "index": 300}]},
            },
        ],
    )
    record = resolver.resolve("20.500.1/typed")
    url, locs, blob, desc, adm, vlist = record.values
    assert url.ttl == 3600 and url.ttl_type == "relative"
    assert url.timestamp == datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    assert desc.ttl_type == "absolute" and desc.ttl == 2000000000
    assert blob.data == b"\x00\xff" and blob.text is None and blob.typed() == b"\x00\xff"
    assert blob.permissions == "1111"
    typed_loc = locs.typed()
    assert isinstance(typed_loc, dict)
    assert [x["href"] for x in typed_loc["locations"]] == [
        "https://a.example.org/",
        "https://b.example.org/",
    ]
    typed_admin = adm.typed()
    assert isinstance(typed_admin, dict)
    assert typed_admin["handle"] == "0.NA/20.500.1" and typed_admin["index"] == 200
    assert adm.to_dict() == admin | {"ttl": 86400}
    assert vlist.typed() == [{"handle": "20.500.1/a", "index": 300}]
    # Every value goes through its dict and back unchanged.
    for v in record:
        assert HandleValue.from_dict(v.to_dict()) == v


def test_pickling(resolver: Resolver) -> None:
    record = resolver.resolve("20.500.1/demo")
    back = pickle.loads(pickle.dumps(record))
    assert back == record
    assert back.to_dict() == record.to_dict()
    assert back.source == record.source and back.attempts == record.attempts
    assert [pickle.loads(pickle.dumps(v)) for v in record] == record.values
    try:
        resolver.resolve("20.500.1/nothere")
    except hr.HandleNotFound as e:
        e2 = pickle.loads(pickle.dumps(e))
        assert type(e2) is hr.HandleNotFound
        assert (e2.response_code, e2.handle, e2.server, str(e2)) == (
            100,
            "20.500.1/nothere",
            e.server,
            str(e),
        )
    else:
        pytest.fail("no HandleNotFound")


def test_to_dict_is_resolve_json(net: TestNetwork, resolver: Resolver, resolve_cli: Path) -> None:
    """`to_dict()` is what `resolve --json` prints, less the `input` it adds."""
    cli = resolve_cli
    ids = ["20.500.1/demo", "20.500.1/secret", "20.500.1/alias"]
    out = subprocess.run(
        [str(cli), "--root", net.root, "--json", "--keep-order", *ids],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    docs = [json.loads(line) for line in out.splitlines()]
    assert len(docs) == 3
    for doc, ident in zip(docs, ids):
        assert doc.pop("input") == ident
        assert resolver.resolve(ident).to_dict() == doc
    followed = subprocess.run(
        [str(cli), "--root", net.root, "--json", "--follow-aliases", "20.500.1/alias"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    doc = json.loads(followed)
    doc.pop("input")
    assert Resolver(root=net.root, follow_aliases=True).resolve("20.500.1/alias").to_dict() == doc


def test_parse_is_check_json(resolve_cli: Path) -> None:
    cli = resolve_cli
    ids = [
        "10.1045/april2006-paskin",
        "hdl://100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "urn:fdc:example.com:2002:A572007",
        "https://doi.org/10.1093/nar/gkaa1100",
    ]
    out = subprocess.run(
        [str(cli), "--check", "--json", *ids],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for line, ident in zip(out.splitlines(), ids):
        assert hr.parse(ident).to_dict() == json.loads(line)
    p = hr.parse("hdl:10.1045/april2006-paskin")
    assert (p.kind, p.prefix, p.suffix, p.hdl_uri) == (
        "handle",
        "10.1045",
        "april2006-paskin",
        "hdl:10.1045/april2006-paskin",
    )
    urn = hr.parse("urn:fdc:example.com:2002:A572007")
    assert urn.kind == "urn" and urn.namespace == "fdc" and urn.handle is None
    assert urn.cordra_handle is None and p.cordra_handle is None
    # A CORDRA id: sent as written, its CORDRA form beside it.
    cordra = hr.parse("hdl://100.102/F58FB49EB1F848f0A606E84CEF294BE5")
    assert cordra.handle == "100.102/F58FB49EB1F848f0A606E84CEF294BE5"
    assert cordra.cordra_handle == "100.102/F58FB49EB1F848F0A606E84CEF294BE5"
    with pytest.raises(hr.InvalidIdentifier) as info:
        hr.parse("hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE", cordra=True)
    assert isinstance(info.value, ValueError) and "31 hex digits" in str(info.value)


def test_resolve_urn(net: TestNetwork) -> None:
    urls = ["https://example.org/reports/7.pdf", "https://mirror.example.net/reports/7.pdf"]
    net.add_urn("urn:fdc:example.org:2024:report-7", urls)
    r = Resolver(urn_resolver=net.rest_url, timeout=5.0)
    assert r.resolve_urn("urn:fdc:example.org:2024:report-7") == urls
    with pytest.raises(hr.UrnNotFound) as info:
        r.resolve_urn("urn:fdc:example.org:2024:nothing")
    assert info.value.response_code == 100


def test_proxy_rest_api(net: TestNetwork) -> None:
    r = Resolver(proxy=net.rest_url, timeout=5.0)
    record = r.resolve("20.500.1/demo")
    assert record.url == "https://example.org/demo"
    assert record.source["transport"] == "rest"


def test_defaults_offline() -> None:
    """A resolver on the global root is built without sending anything (nothing here is
    resolved with it); bad arguments fail at construction."""
    r = Resolver()
    assert r.concurrency == 16 and "the global root" in repr(r)
    assert "the global root" in repr(hr.AsyncResolver())
    for bad in (
        {"transport": "smtp"},
        {"timeout": 0},
        {"concurrency": 0},
        {"root": "127.0.0.1:1", "server": "127.0.0.1:2"},
        {"root": "not a host name or file!"},
    ):
        with pytest.raises(ValueError):
            Resolver(**bad)
    # A key without the identity it is the key of is never dropped silently.
    with pytest.raises(ValueError):
        Resolver().admin(secret="s3cret")


def test_locate_follows_aliases_then_chooses(net: TestNetwork) -> None:
    """``locate``: HS_ALIAS followed first, as the handle.net proxy does, then the location
    chosen by ``locatt``, ``address`` and ``country`` (the library's rules, one test each in
    Rust); sync and asyncio alike."""
    loc = (
        "<locations>"
        '<location href="https://p.example/page" view="html" weight="1"/>'
        '<location href="https://p.example/data.json" view="json" weight="0"/>'
        '<location href="https://nl.example/" country="nl" weight="0"/>'
        '<location href="https://net.example/" addresses="192.0.2.0/24" weight="0"/>'
        "</locations>"
    )
    net.insert("20.500.1/loc-target", [HandleValue(1, "10320/loc", loc)])
    net.insert("20.500.1/loc-hop", [HandleValue(1, "HS_ALIAS", "20.500.1/loc-target")])
    net.insert("20.500.1/loc-start", [HandleValue(1, "HS_ALIAS", "20.500.1/loc-hop")])
    net.insert("20.500.1/loc-none", [HandleValue(1, "EMAIL", "x@example.org")])
    r = Resolver(root=net.root, timeout=5.0)
    start = "20.500.1/loc-start"
    assert r.locate(start, locatt="view:json") == "https://p.example/data.json"
    assert r.locate(start, locatt=["view:pdf", "view:json"]) == "https://p.example/data.json"
    assert r.locate(start) == "https://p.example/page"
    assert r.locate(start, country="NL") == "https://nl.example/"
    assert r.locate(start, address="192.0.2.7") == "https://net.example/"
    assert r.locate("20.500.1/loc-none") is None
    with pytest.raises(hr.HandleNotFound):
        r.locate("20.500.1/no-such-handle")
    with pytest.raises(ValueError):
        r.locate(start, address="not an address")

    async def main() -> str | None:
        return await hr.AsyncResolver(root=net.root).locate(start, locatt="view:json")

    assert asyncio.run(main()) == "https://p.example/data.json"
