"""What the exceptions say, exactly (``str(exception)``), each thing once: the handle once
(the library's ``HANDLE: `` prefix, or the ``Handle:`` line of pyhandle's exceptions, not
both), the response code once, one full stop. For a handle that does not exist, a prefix the
server does not serve (301: natively, and the REST API's refusal) and a refused password,
through ``Resolver`` and through the pyhandle drop-in speaking native or REST."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

import handle_resolver as hr
from handle_resolver import HandleValue, Resolver
from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
from handle_resolver.pyhandle.handleexceptions import (
    GenericHandleError,
    HandleAuthenticationError,
    HandleNotFoundException,
)
from handle_resolver.testing import TestNetwork

P = "20.500.1"
MISSING = f"{P}/zzz"


@pytest.fixture(scope="module", params=["adm+qry", None], ids=["native", "rest"])
def net(request: pytest.FixtureRequest) -> Iterator[TestNetwork]:
    """The defaults, the HTTP side listed for native requests (the drop-in speaks native)
    or not at all (the server refuses them there: REST)."""
    with TestNetwork(http=True, http_interface=request.param) as network:
        yield network


def url(net: TestNetwork) -> str:
    assert net.rest_url is not None
    return net.rest_url


def client(net: TestNetwork, password: str | None = None) -> RESTHandleClient:
    return RESTHandleClient.instantiate_with_username_and_password(
        url(net), net.admin_identity, password or net.admin_secret
    )


def text_of(call: Callable[[], object], kind: type[BaseException]) -> str:
    with pytest.raises(kind) as info:
        call()
    return str(info.value)


def test_not_found(net: TestNetwork) -> None:
    r = Resolver(root=net.root, cache=False)
    assert text_of(lambda: r.resolve(MISSING), hr.HandleNotFound) == (
        "20.500.1/zzz: handle not found (100)"
    )
    admin = r.admin(net.admin_identity, secret=net.admin_secret)
    assert text_of(lambda: admin.delete_handle(MISSING), hr.HandleDoesNotExist) == (
        "20.500.1/zzz does not exist"
    )
    c = client(net)
    assert text_of(lambda: c.get_value_from_handle(MISSING, "URL"), HandleNotFoundException) == (
        "Handle not found on server.\n\tHandle: 20.500.1/zzz"
    )
    deleted = text_of(lambda: c.delete_handle(MISSING), HandleNotFoundException)
    said = (
        "Handle not found on server: delete_handle: Handle 20.500.1/zzz did not exist, so it"
        " could not be deleted.\n\tHandle: 20.500.1/zzz"
    )
    if c.protocol == "native":
        assert deleted == said
    else:  # pyhandle's text, with the REST answer it got
        assert deleted == (
            f"{said}\n\tURL: {url(net)}/api/handles/20.500.1/zzz\n\tHTTP Status Code: 404"
            """\n\tResponse: b'{"responseCode": 100, "handle": "20.500.1/zzz"}'"""
        )


def test_prefix_not_served(net: TestNetwork) -> None:
    c = client(net)
    if c.protocol == "native":
        r = Resolver(server=url(net), cache=False)
        assert text_of(lambda: r.resolve("99.9/x"), hr.PrefixNotServed) == (
            "99.9/x: prefix not served by any site of its service (301)"
        )
    refused = text_of(lambda: c.retrieve_handle_record_json("99.9/x"), GenericHandleError)
    if c.protocol == "native":
        assert refused == (
            "Error during interaction with Handle Server (retrieving): prefix not served by"
            " any site of its service (301).\n\tHandle: 99.9/x"
        )
    else:  # the REST API's 400 with code 301, as pyhandle reports it
        assert refused == (
            "Error during interaction with Handle Server (retrieving).\n\tHandle: 99.9/x"
            f"\n\tURL: {url(net)}/api/handles/99.9/x\n\tHTTP Status Code: 400"
            """\n\tResponse: b'{"responseCode": 301, "handle": "99.9/x","""
            """ "message": "That prefix doesn\\'t live here"}'"""
        )


def test_a_refused_password(net: TestNetwork) -> None:
    admin = Resolver(root=net.root).admin(net.admin_identity, secret="wrong")
    refusal = (
        "authentication failed (AUTHENTICATION_FAILED (403)): the server refused the secret"
        " key of 300:0.NA/20.500.1 (a wrong secret, or 0.NA/20.500.1 holds no HS_SECKEY at"
        " index 300)"
    )
    made = [HandleValue(1, "URL", "https://e.org/")]
    assert text_of(lambda: admin.create_handle(f"{P}/x", made), hr.AdminAuthenticationFailed) == (
        f"{P}/x: {refusal}"
    )
    c = client(net, password="wrong")
    said = text_of(lambda: c.register_handle(f"{P}/x", "https://e.org/"), HandleAuthenticationError)
    if c.protocol == "native":
        assert said == (
            f"Insufficient permission (registering handle): {refusal}.\n\tHandle: 20.500.1/x"
        )
    else:
        assert said == (
            "Insufficient permission (registering handle).\n\tHandle: 20.500.1/x"
            f"\n\tURL: {url(net)}/api/handles/20.500.1/x?overwrite=false"
            "\n\tHTTP Status Code: 401\n\tResponse: b''"
        )


def test_a_failure_without_a_code_gives_its_code_once() -> None:
    # Nothing listens on port 1: no answer, the REST API's code 2 for it.
    c = RESTHandleClient("http://127.0.0.1:1")
    assert text_of(lambda: c.retrieve_handle_record_json(f"{P}/x"), GenericHandleError) == (
        "Error during interaction with Handle Server (retrieving): http exchange with"
        " 127.0.0.1:1 failed: connection refused (2).\n\tHandle: 20.500.1/x"
    )
