"""handle_resolver.pyhandle against servers whose site does not list their HTTP interface for
queries (``http_interface="adm"``) or at all (``None``): the server refuses native requests
there as the reference does, the drop-in switches to the REST API once (its ``protocol``
says ``"rest"``), and reads and writes go on as pyhandle's would; where the site lists it
(``"adm+qry"``), it stays ``"native"``. ``RestAdmin``'s answers directly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from handle_resolver import Resolver, RestAdmin
from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
from handle_resolver.pyhandle.handleexceptions import (
    GenericHandleError,
    HandleAuthenticationError,
    HandleNotFoundException,
)
from handle_resolver.testing import TestNetwork

P = "20.500.1"
USER = f"300:{P}/ADMIN"
SECRET = "rest-writer-secret"


@pytest.fixture(params=["adm", None])
def net(request: pytest.FixtureRequest) -> Iterator[TestNetwork]:
    with TestNetwork(
        sites=1, servers_per_site=1, http=True, http_interface=request.param
    ) as network:
        network.add_identity(USER, secret=SECRET)
        yield network


def url_of(net: TestNetwork) -> str:
    url = net.rest_url
    assert url is not None
    return url


def test_native_over_http_is_refused_as_the_reference_refuses_it(net: TestNetwork) -> None:
    with pytest.raises(Exception, match="Received query request on non-query interface"):
        Resolver(server=url_of(net), cache=False).resolve(f"{P}/demo")


def test_the_drop_in_talks_rest_where_native_is_refused(net: TestNetwork) -> None:
    client = RESTHandleClient.instantiate_with_username_and_password(
        url_of(net), USER, SECRET, handleowner=USER
    )
    # The username check at instantiation was refused natively: REST from then on.
    assert client.protocol == "rest"
    h = f"{P}/over-rest"
    assert client.register_handle(h, "https://example.org/1", TEST="a") == h
    assert client.get_value_from_handle(h, "URL") == "https://example.org/1"
    assert client.modify_handle_value(h, URL="https://example.org/2", NEW="b") == h
    record = client.retrieve_handle_record(h)
    assert record is not None
    assert (record["URL"], record["NEW"], record["TEST"]) == ("https://example.org/2", "b", "a")
    assert client.delete_handle_value(h, "TEST") == h
    assert client.delete_handle_value(h, "TEST") is None
    client.add_additional_URL(h, "https://example.org/loc")
    assert client.is_URL_contained_in_10320LOC(h, "https://example.org/loc")
    client.remove_additional_URL(h, "https://example.org/loc")
    assert client.is_10320LOC_empty(h)
    assert client.delete_handle(h) == h
    assert client.retrieve_handle_record_json(h) is None
    with pytest.raises(HandleNotFoundException, match="did not exist"):
        client.delete_handle(h)
    assert client.protocol == "rest"


def test_a_read_only_client_decides_when_asked(net: TestNetwork) -> None:
    client = RESTHandleClient(url_of(net))
    assert client.protocol == "rest"
    assert client.get_value_from_handle(f"{P}/demo", "URL") == "https://example.org/demo"
    # pyhandle's options: a type (or a list of them), indexes, auth.
    only = client.retrieve_handle_record_json(f"{P}/demo", True, type="EMAIL")
    assert only is not None and [v["type"] for v in only["values"]] == ["EMAIL"]
    some = client.retrieve_handle_record_json(f"{P}/demo", indices=[1, 3])
    assert some is not None and [v["index"] for v in some["values"]] == [1, 3]
    assert client.retrieve_handle_record_json(f"{P}/missing") is None


def test_rest_failures_raise_what_pyhandle_raises(net: TestNetwork, tmp_path: Path) -> None:
    url = url_of(net)
    # The REST API answers a wrong password with 401: HandleAuthenticationError.
    wrong = RESTHandleClient.instantiate_with_username_and_password(url, USER, "wrong")
    with pytest.raises(HandleAuthenticationError):
        wrong.register_handle(f"{P}/not-made", "https://example.org/")
    # Over REST, writes take Basic credentials only.
    key_pem, cert_pem = TestNetwork.client_certificate(USER)
    key = tmp_path / "key.pem"
    key.write_text(key_pem)
    cert = tmp_path / "cert.pem"
    cert.write_text(cert_pem)
    keyed = RESTHandleClient(url, certificate_only=str(cert), private_key=str(key))
    with pytest.raises(HandleAuthenticationError, match="not a key"):
        keyed.register_handle(f"{P}/not-made", "https://example.org/")
    # A handle outside the server's prefixes: the REST API's refusal, GenericHandleError.
    client = RESTHandleClient.instantiate_with_username_and_password(url, USER, SECRET)
    with pytest.raises(GenericHandleError):
        client.register_handle("99.999/elsewhere", "https://example.org/")


def test_rest_admin_returns_every_answer(net: TestNetwork) -> None:
    admin = RestAdmin(url_of(net), identity=USER, secret=SECRET)
    h = f"{P}/rest-admin"
    value = {"index": 1, "type": "URL", "data": {"format": "string", "value": "https://x.org/"}}
    # An HS_ADMIN value naming the writer, so that it may delete the handle again.
    admin_value = {
        "index": 100,
        "type": "HS_ADMIN",
        "data": {
            "format": "admin",
            "value": {"handle": USER.split(":")[1], "index": 300, "permissions": "111111111111"},
        },
    }
    made = admin.put_handle(h, [admin_value, value])
    assert (made["status"], made["responseCode"], made["handle"]) == (201, 1, h)
    again = admin.put_handle(h, [admin_value, value])
    assert (again["status"], again["responseCode"]) == (409, 101)
    got = admin.get_handle(h, indexes=[1], types=["URL"], auth=True)
    assert got["url"].endswith("?index=1&type=URL&auth=true")
    assert [v["data"]["value"] for v in got["document"]["values"]] == ["https://x.org/"]
    anonymous = RestAdmin(url_of(net)).get_handle(f"{P}/missing")
    assert (anonymous["status"], anonymous["responseCode"]) == (404, 100)
    assert admin.delete_handle(h)["responseCode"] == 1
    assert admin.delete_handle(h)["status"] == 404
    bad = RestAdmin(url_of(net), identity=USER, secret="wrong").delete_handle(h)
    assert (bad["status"], bad["responseCode"]) == (401, None)


def test_native_stays_where_the_site_lists_http_for_queries() -> None:
    with TestNetwork(sites=1, servers_per_site=1, http=True) as network:
        network.add_identity(USER, secret=SECRET)
        url = url_of(network)
        client = RESTHandleClient.instantiate_with_username_and_password(url, USER, SECRET)
        assert client.protocol == "native"
        h = f"{P}/native"
        assert client.register_handle(h, "https://example.org/n") == h
        assert client.protocol == "native"
        assert RESTHandleClient(f"hdl://{network.servers[0]}").protocol == "native"
