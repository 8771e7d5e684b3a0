"""handle_resolver.pyhandle's read methods against pyhandle 1.5.0's (when installed), on the
same loopback records: pyhandle over the test server's REST API, ours over the same server's
HTTP interface (native messages over HTTP) and over its native address."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from typing import Any

import pytest

from handle_resolver import HandleValue
from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
from handle_resolver.pyhandle.clientcredentials import PIDClientCredentials
from handle_resolver.pyhandle.handleexceptions import (
    CredentialsFormatError,
    HandleNotFoundException,
    HandleSyntaxError,
    ReverseLookupException,
)
from handle_resolver.pyhandle.pyhandleclient import PyHandleClient
from handle_resolver.testing import TestNetwork

# pyhandle 1.5.0 is installed by scripts/test-all.sh: without it these tests fail (at
# collection), never skip.
if importlib.util.find_spec("pyhandle") is None:
    raise ImportError("pyhandle 1.5.0 is not installed (scripts/test-all.sh installs it)")
P = "20.500.1"
LOC = (
    '<locations><location href="https://a.example.org/" id="0"/>'
    '<location href="https://b.example.org/" id="1"/></locations>'
)
ADMIN = {
    "index": 100,
    "type": "HS_ADMIN",
    "data": {
        "format": "admin",
        "value": {"handle": f"0.NA/{P}", "index": 200, "permissions": "011111110011"},
    },
}
HANDLES = [f"{P}/mixed", f"{P}/emptyloc", f"{P}/plain", f"{P}/missing"]


@pytest.fixture(scope="module")
def one() -> Iterator[TestNetwork]:
    """One server with an HTTP side, holding records of every kind of value."""
    with TestNetwork(sites=1, servers_per_site=1, http=True) as network:
        network.insert(
            f"{P}/mixed",
            [
                HandleValue(1, "URL", "https://example.org/mixed", timestamp=1767225600),
                HandleValue(2, "CHECKSUM", b"\x00\xff\x10"),
                HandleValue(3, "10320/LOC", LOC),
                HandleValue(4, "URL", "https://example.org/second"),
                HandleValue(5, "LATIN1", "caf\xe9".encode("latin-1")),
                ADMIN,
            ],
        )
        network.insert(f"{P}/emptyloc", [HandleValue(1, "10320/LOC", "<locations/>"), ADMIN])
        network.insert(f"{P}/plain", [HandleValue(1, "URL", "https://example.org/plain")])
        yield network


def clients(net: TestNetwork) -> list[RESTHandleClient]:
    rest = net.rest_url
    assert rest is not None
    return [
        RESTHandleClient(rest, HTTPS_verify=False),
        RESTHandleClient.instantiate_for_read_access(f"hdl://{net.servers[0]}"),
    ]


@pytest.fixture(scope="module")
def reference(one: TestNetwork) -> Any:
    from pyhandle.client.resthandleclient import RESTHandleClient as Upstream

    return Upstream(one.rest_url, HTTPS_verify=False)


def test_read_methods_equal_pyhandle(one: TestNetwork, reference: Any) -> None:
    for ours in clients(one):
        for h in HANDLES:
            assert ours.retrieve_handle_record_json(h) == reference.retrieve_handle_record_json(h)
            assert ours.retrieve_handle_record(h) == reference.retrieve_handle_record(h)
            for key in ("URL", "CHECKSUM", "HS_ADMIN", "10320/LOC", "LATIN1", "NONE"):
                if h.endswith("missing"):
                    with pytest.raises(HandleNotFoundException):
                        ours.get_value_from_handle(h, key)
                    continue
                assert ours.get_value_from_handle(h, key) == reference.get_value_from_handle(h, key)
            for indices in ([1], ["3", 100]):
                assert ours.retrieve_handle_record_json(
                    h, indices=indices
                ) == reference.retrieve_handle_record_json(h, indices=indices)
        doc = ours.retrieve_handle_record_json(f"{P}/mixed")
        assert doc is not None
        for key in ("URL", "HS_ADMIN", "NONE"):
            assert ours.get_handlerecord_indices_for_key(
                key, doc["values"]
            ) == reference.get_handlerecord_indices_for_key(key, doc["values"])


def test_values_as_expected(one: TestNetwork) -> None:
    for ours in clients(one):
        record = ours.retrieve_handle_record(f"{P}/mixed")
        assert record is not None
        assert record["URL"] == "https://example.org/mixed"
        assert ours.get_value_from_handle(f"{P}/mixed", "HS_ADMIN")["index"] == 200
        assert ours.retrieve_handle_record_json(f"{P}/missing") is None
        assert ours.retrieve_handle_record(f"{P}/missing") is None


def test_b2handle_10320loc_helpers(one: TestNetwork) -> None:
    for ours in clients(one):
        assert ours.is_10320LOC_empty(f"{P}/mixed") is False
        assert ours.is_10320LOC_empty(f"{P}/emptyloc") is True
        assert ours.is_10320LOC_empty(f"{P}/plain") is True
        assert ours.is_URL_contained_in_10320LOC(f"{P}/mixed", "https://b.example.org/")
        assert not ours.is_URL_contained_in_10320LOC(f"{P}/mixed", "https://c.example.org/")
        assert not ours.is_URL_contained_in_10320LOC(f"{P}/plain", "https://a.example.org/")
        with pytest.raises(HandleNotFoundException):
            ours.is_10320LOC_empty(f"{P}/missing")


def test_syntax_errors_and_names(one: TestNetwork) -> None:
    ours = clients(one)[1]
    for bad in ("noslash", "/suffix", "prefix/"):
        with pytest.raises(HandleSyntaxError) as info:
            ours.retrieve_handle_record_json(bad)
        assert info.value.handle == bad
    name = ours.generate_PID_name(P)
    assert name.startswith(f"{P}/") and len(name) == len(P) + 37
    assert "/" not in ours.generate_PID_name()
    with pytest.raises(ReverseLookupException):
        ours.search_handle(URL="https://example.org/*")


def test_factories_and_credentials(one: TestNetwork, tmp_path: Any) -> None:
    creds_file = tmp_path / "credentials.json"
    creds_file.write_text(
        json.dumps(
            {
                "handle_server_url": f"hdl://{one.servers[0]}",
                "username": f"300:{P}/admin",
                "password": "s",
                "prefix": P,
                "extra": 7,
            }
        )
    )
    # pyhandle checks at instantiation that the username's handle exists.
    one.add_identity(f"300:{P}/admin", secret="s")
    creds = PIDClientCredentials.load_from_JSON(str(creds_file))
    assert creds.get_username() == f"300:{P}/admin" and creds.get_prefix() == P
    assert creds.get_config() == {"extra": 7}
    client = RESTHandleClient.instantiate_with_credentials(creds)
    assert client.get_value_from_handle(f"{P}/plain", "URL") == "https://example.org/plain"
    factory = PyHandleClient("rest")
    read = factory.instantiate_for_read_access(handle_server_url=one.rest_url)
    assert read.get_value_from_handle(f"{P}/plain", "URL") == "https://example.org/plain"
    with pytest.raises(ValueError):
        PyHandleClient("soap")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CredentialsFormatError):
        PIDClientCredentials.load_from_JSON(str(bad))
    with pytest.raises(HandleSyntaxError):
        PIDClientCredentials(username="admin", password="s")


def test_exceptions_are_caught_as_pyhandle_s() -> None:
    from pyhandle import handleexceptions as upstream

    err = HandleNotFoundException(handle=f"{P}/x", msg="gone")
    assert isinstance(err, upstream.HandleNotFoundException)
    assert isinstance(err, upstream.PyhandleBaseException)
    assert err.handle == f"{P}/x" and err.response is None and "gone" in str(err)
