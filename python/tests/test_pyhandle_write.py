"""handle_resolver.pyhandle's write methods over a test server's HTTP interface (native
messages over HTTP), over its native address, and over its REST API (a server whose site
leaves its HTTP interface out, so that it refuses native requests there), authenticated with
the test network's admin identity (HS_SECKEY), with pyhandle 1.5.0's arguments, return values
and exceptions; each call's outcome read back from the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from handle_resolver import HandleValue
from handle_resolver._native import certificate_identity
from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
from handle_resolver.pyhandle.clientcredentials import PIDClientCredentials
from handle_resolver.pyhandle.handleexceptions import (
    BrokenHandleRecordException,
    CredentialsFormatError,
    GenericHandleError,
    HandleAlreadyExistsException,
    HandleAuthenticationError,
    HandleNotFoundException,
    HandleSyntaxError,
    IllegalOperationException,
)
from handle_resolver.testing import TestNetwork

P = "20.500.1"
# The writer: a user handle under the prefix, as pyhandle's users have (pyhandle checks at
# instantiation that the username's handle exists, which a prefix handle at the root does not
# pass at the prefix's own server).
USER = f"300:{P}/ADMIN"
SECRET = "writer-secret"


class Server:
    """A one-server test network and the address the writes go to: its HTTP interface
    (``http://``) or its native address (``hdl://``); the network's attributes pass
    through."""

    def __init__(self, network: TestNetwork, kind: str) -> None:
        self.network = network
        self.kind = kind
        rest = network.rest_url
        assert rest is not None
        self.url = f"hdl://{network.servers[0]}" if kind == "hdl" else rest
        network.add_identity(USER, secret=SECRET)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.network, name)


@pytest.fixture(scope="module", params=["http", "hdl", "rest"])
def net(request: pytest.FixtureRequest) -> Iterator[Server]:
    # "rest": the server's site leaves its HTTP interface out, so that it refuses native
    # requests there and the drop-in writes over the REST API.
    rest = request.param == "rest"
    with TestNetwork(
        sites=1, servers_per_site=1, http=True, http_interface=None if rest else "adm+qry"
    ) as network:
        yield Server(network, request.param)


def address(net: Server) -> str:
    return net.url


def writer(net: Server, **config: Any) -> RESTHandleClient:
    return RESTHandleClient.instantiate_with_username_and_password(
        address(net),
        USER,
        SECRET,
        handleowner=USER,
        **config,
    )


def values(net: Server, handle: str) -> list[tuple[int, str, Any]]:
    """The record as (index, type, data value) read natively, or [] when it is gone."""
    doc = RESTHandleClient(f"hdl://{net.servers[0]}").retrieve_handle_record_json(handle)
    if doc is None:
        return []
    return sorted((e["index"], e["type"], e["data"]["value"]) for e in doc["values"])


def owner(net: Server) -> dict[str, Any]:
    return {"handle": f"{P}/ADMIN", "index": 300, "permissions": "011111110011"}


def test_register_kinds(net: Server) -> None:
    client = writer(net)
    h = f"{P}/reg"
    assert client.register_handle(h, "https://a.example/", checksum="abc", EMAIL="x@y") == h
    # pyhandle numbers the extra types first, then CHECKSUM (URL always at 1).
    assert values(net, h) == [
        (1, "URL", "https://a.example/"),
        (2, "EMAIL", "x@y"),
        (3, "CHECKSUM", "abc"),
        (100, "HS_ADMIN", owner(net)),
    ]
    with pytest.raises(HandleAlreadyExistsException) as exists:
        client.register_handle(h, "https://b.example/")
    assert exists.value.handle == h
    assert values(net, h)[0] == (1, "URL", "https://a.example/")
    assert client.register_handle(h, "https://b.example/", overwrite=True) == h
    assert values(net, h) == [(1, "URL", "https://b.example/"), (100, "HS_ADMIN", owner(net))]

    kv = f"{P}/kv"
    assert client.register_handle_kv(kv, URL="https://kv.example/", FOO="bar") == kv
    assert values(net, kv) == [
        (1, "URL", "https://kv.example/"),
        (2, "FOO", "bar"),
        (100, "HS_ADMIN", owner(net)),
    ]

    js = f"{P}/json"
    entries = [
        {"index": 7, "type": "URL", "data": "https://json.example/"},
        {"index": 8, "type": "NOTE", "data": {"format": "string", "value": "n"}, "ttl": 60},
    ]
    assert client.register_handle_json(js, entries) == js
    assert entries[0]["index"] == 7 and len(entries) == 2  # the caller's list is not changed
    assert values(net, js) == [
        (7, "URL", "https://json.example/"),
        (8, "NOTE", "n"),
        (100, "HS_ADMIN", owner(net)),
    ]
    doc = client.retrieve_handle_record_json(js)
    assert doc is not None
    assert {e["index"]: e["ttl"] for e in doc["values"]}[8] == 60
    with pytest.raises(HandleAlreadyExistsException):
        client.register_handle_json(js, entries)

    made = client.generate_and_register_handle(P, "https://gen.example/", checksum="c1")
    assert made.startswith(f"{P}/") and len(made) == len(P) + 1 + 36
    assert values(net, made)[:2] == [(1, "URL", "https://gen.example/"), (2, "CHECKSUM", "c1")]

    loc = f"{P}/loc"
    client.register_handle(loc, "https://l.example/", additional_URLs=["https://x/", "https://y/"])
    assert client.is_URL_contained_in_10320LOC(loc, "https://y/")
    assert not client.is_10320LOC_empty(loc)


def test_modify_add_delete(net: Server) -> None:
    client = writer(net)
    h = f"{P}/mod"
    client.register_handle(h, "https://a.example/", CHECKSUM="c")
    assert client.modify_handle_value(h, URL="https://m.example/", NEW="n") == h
    assert values(net, h) == [
        (1, "URL", "https://m.example/"),
        (2, "CHECKSUM", "c"),
        (3, "NEW", "n"),
        (100, "HS_ADMIN", owner(net)),
    ]
    assert client.modify_handle_value(h, add_if_not_exist=False, OTHER="o") == h
    assert [v[1] for v in values(net, h)] == ["URL", "CHECKSUM", "NEW", "HS_ADMIN"]
    assert client.modify_handle_value(h, ttl=120, MORE="m") == h
    doc = client.retrieve_handle_record_json(h)
    assert doc is not None
    more = [e for e in doc["values"] if e["type"] == "MORE"]
    assert more[0]["index"] == 4 and more[0]["ttl"] == 120

    assert client.add_handle_value(h, ADDED="x") == h
    assert (5, "ADDED", "x") in values(net, h)
    with pytest.raises(GenericHandleError):
        client.add_handle_value(h, URL="https://again.example/")
    assert values(net, h)[0] == (1, "URL", "https://m.example/")

    with pytest.raises(IllegalOperationException):
        client.modify_handle_value(h, HS_ADMIN={"handle": f"0.NA/{P}", "index": 300})
    admin_ok = writer(net, modify_HS_ADMIN=True, HS_ADMIN_permissions="111111111111")
    admin_ok.modify_handle_value(h, HS_ADMIN={"handle": f"{P}/ADMIN", "index": 300})
    assert (100, "HS_ADMIN", dict(owner(net), permissions="111111111111")) in values(net, h)

    net.insert(f"{P}/twice", [HandleValue(1, "URL", "u1"), HandleValue(2, "URL", "u2")])
    with pytest.raises(BrokenHandleRecordException):
        client.modify_handle_value(f"{P}/twice", URL="u3")

    assert client.delete_handle_value(h, "NEW") == h
    assert "NEW" not in [v[1] for v in values(net, h)]
    assert client.delete_handle_value(h, ["MORE", "ADDED", "MORE"]) == h
    assert [v[1] for v in values(net, h)] == ["URL", "CHECKSUM", "HS_ADMIN"]
    assert client.delete_handle_value(h, "ABSENT") is None
    with pytest.raises(IllegalOperationException):
        client.delete_handle_value(h, "HS_ADMIN")

    with pytest.raises(TypeError):
        client.delete_handle(h, "URL")
    assert client.delete_handle(h) == h
    assert values(net, h) == []
    with pytest.raises(HandleNotFoundException):
        client.delete_handle(h)
    with pytest.raises(HandleNotFoundException):
        client.modify_handle_value(h, URL="x")
    with pytest.raises(HandleNotFoundException):
        client.delete_handle_value(h, "URL")


def test_write_refusals(net: Server) -> None:
    url = address(net)
    h = f"{P}/refused"
    with pytest.raises(HandleAuthenticationError) as no_creds:
        RESTHandleClient(url).register_handle(h, "https://a.example/")
    assert "Read access only" in str(no_creds.value)
    wrong = RESTHandleClient.instantiate_with_username_and_password(url, USER, "not-the-secret")
    with pytest.raises(HandleAuthenticationError) as bad:
        wrong.register_handle(h, "https://a.example/")
    assert bad.value.username == USER
    assert values(net, h) == []


def test_instantiation_checks_the_username(net: Server) -> None:
    """As pyhandle: the username's syntax and its handle's existence, at instantiation."""
    url = address(net)
    with pytest.raises(HandleSyntaxError):
        RESTHandleClient.instantiate_with_username_and_password(url, f"0.NA/{P}", "s")
    with pytest.raises(HandleNotFoundException):
        RESTHandleClient.instantiate_with_username_and_password(url, f"300:{P}/nobody", "s")
    with pytest.raises(TypeError):
        RESTHandleClient(username=USER, password="s")
    half = RESTHandleClient(url, username=USER)
    with pytest.raises(HandleAuthenticationError) as no_method:
        half.delete_handle(f"{P}/x")
    assert "authentication method" in str(no_method.value)


def test_key_credentials(net: Server, tmp_path: Path) -> None:
    """pyhandle's client-certificate credentials as HS_PUBKEY: the private key answers the
    challenges, as the identity the certificate names (or ``username``)."""
    who = f"300:{P}/KEYUSER"
    key_pem, cert_pem = TestNetwork.client_certificate(who)
    key = tmp_path / "key.pem"
    key.write_text(key_pem)
    cert = tmp_path / "cert.pem"
    cert.write_text(cert_pem)
    both = tmp_path / "both.pem"
    both.write_text(key_pem + cert_pem)
    net.add_identity(who, key_file=str(key))

    client = RESTHandleClient(address(net), certificate_and_key=str(both), handleowner=who)
    h = f"{P}/by-key"
    if net.kind == "rest":
        # Over the REST API the drop-in writes with Basic credentials only (pyhandle sends
        # a TLS client certificate there): a key is refused before anything is sent.
        with pytest.raises(HandleAuthenticationError, match="not a key"):
            client.register_handle(h, "https://k.example/")
        assert client.protocol == "rest" and values(net, h) == []
        return
    assert client.register_handle(h, "https://k.example/") == h
    assert values(net, h)[0] == (1, "URL", "https://k.example/")
    separate = RESTHandleClient(address(net), certificate_only=str(cert), private_key=str(key))
    assert separate.modify_handle_value(h, URL="https://k2.example/") == h
    by_name = RESTHandleClient(address(net), private_key=str(key), username=who)
    assert by_name.delete_handle(h) == h
    assert values(net, h) == []
    creds = tmp_path / "credentials.json"
    creds.write_text(
        f'{{"handle_server_url": "{address(net)}", "certificate_and_key": "{both.name}"}}'
    )
    from_file = RESTHandleClient.instantiate_with_credentials(
        PIDClientCredentials.load_from_JSON(str(creds))
    )
    assert from_file.register_handle(f"{P}/by-key-file", "https://k3.example/")
    with pytest.raises(CredentialsFormatError):
        RESTHandleClient(address(net), certificate_and_key=str(tmp_path / "missing.pem"))
    # The key encrypted (PKCS#8 PEM, PBES2), beside the certificate, with its passphrase:
    # what pyhandle cannot use.
    locked_pem, _ = TestNetwork.client_certificate(who, passphrase="open sesame")
    assert "ENCRYPTED PRIVATE KEY" in locked_pem
    locked = tmp_path / "locked.pem"
    locked.write_text(locked_pem + cert_pem)
    client = RESTHandleClient(
        address(net), certificate_and_key=str(locked), passphrase="open sesame"
    )
    assert client.register_handle(f"{P}/by-locked-key", "https://k4.example/")
    with pytest.raises(CredentialsFormatError) as wrong_passphrase:
        RESTHandleClient(
            address(net), certificate_and_key=str(locked), passphrase="wrong"
        ).register_handle(f"{P}/by-wrong-passphrase", "https://k5.example/")
    assert "passphrase" in str(wrong_passphrase.value)
    assert values(net, f"{P}/by-wrong-passphrase") == []
    # The key as an identity whose key value is not this key (an HS_SECKEY): refused.
    stranger = RESTHandleClient(address(net), private_key=str(key), username=USER)
    with pytest.raises(HandleAuthenticationError):
        stranger.register_handle(f"{P}/stranger", "https://s.example/")
    assert values(net, f"{P}/stranger") == []


def test_certificate_identity() -> None:
    """The identity a client certificate names: its subject's UID (PEM, in a file with the
    key too, or DER); none in other bytes."""
    key_pem, cert_pem = TestNetwork.client_certificate("300:20.500.1/X")
    assert certificate_identity(cert_pem.encode()) == "300:20.500.1/X"
    assert certificate_identity((key_pem + cert_pem).encode()) == "300:20.500.1/X"
    with pytest.raises(ValueError):
        certificate_identity(b"no certificate here")


def test_b2handle_location_helpers(net: Server) -> None:
    """b2handle's 10320/LOC changes: locations added with the first free id (attributes on
    the new ones, a weight outside 0..1 taken as 1), exchanged in place, removed (the value
    with its last location)."""
    client = writer(net, **{"10320LOC_chooseby": "locatt,weighted"})
    h = f"{P}/locs"
    client.register_handle(h, "https://a.example/", additional_URLs=["http://x/", "http://y/"])

    def loc() -> Any:
        return client.get_value_from_handle(h, "10320/LOC")

    assert loc() == (
        '<locations chooseby="locatt,weighted"><location id="0" href="http://x/" />'
        '<location id="1" href="http://y/" /></locations>'
    )
    client.add_additional_URL(h, "http://y/", "http://z/", weight=7, http_role="conneg")
    assert loc().endswith(
        '<location id="2" href="http://z/" weight="1" http_role="conneg" /></locations>'
    )
    client.add_additional_URL(h, "http://x/")  # there already: nothing changes
    client.exchange_additional_URL(h, "http://x/", "http://x2/")
    assert '<location id="0" href="http://x2/" />' in loc()
    client.exchange_additional_URL(h, "http://absent/", "http://new/")
    assert "http://new/" not in loc()
    client.remove_additional_URL(h, "http://x2/", "http://y/")
    assert client.is_URL_contained_in_10320LOC(h, "http://z/")
    assert not client.is_URL_contained_in_10320LOC(h, "http://y/")
    index = client.get_handlerecord_indices_for_key(
        "10320/LOC",
        client.retrieve_handle_record_json(h)["values"],  # type: ignore[index]
    )
    client.remove_additional_URL(h, "http://z/")
    assert loc() is None and client.is_10320LOC_empty(h)
    # Added again: a new value at the first free index, with the first id.
    client.add_additional_URL(h, "http://w/", weight="0.5")
    assert loc() == (
        '<locations chooseby="locatt,weighted">'
        '<location id="0" href="http://w/" weight="0.5" /></locations>'
    )
    assert (
        client.get_handlerecord_indices_for_key(
            "10320/LOC",
            client.retrieve_handle_record_json(h)["values"],  # type: ignore[index]
        )
        == index
    )
    with pytest.raises(HandleNotFoundException):
        client.add_additional_URL(f"{P}/no-such-handle", "http://w/")
