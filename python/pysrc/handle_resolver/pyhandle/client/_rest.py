"""The drop-in's other way to a handle server: its REST API, where the server's HTTP interface
takes no native requests (its site does not list it for them, so it refuses them:
``Received query request on non-query interface``). Reads (``GET /api/handles/...``) and
writes (``PUT``/``DELETE`` with Basic credentials) go through
:class:`handle_resolver.RestAdmin`, with pyhandle's ``HTTPS_verify``, and the answers become
what pyhandle 1.5.0 makes of them, status by status."""

from __future__ import annotations

import json
from typing import Any

from ... import ResolveError, RestAdmin
from ..handleexceptions import (
    GenericHandleError,
    HandleAuthenticationError,
    HandleNotFoundException,
    Response,
)
from ._entries import native_entry

# The reference server's refusals of a native request over an interface its site does not
# list for it (net.handle.hdllib.Interface.canProcessMsg).
REFUSALS = (
    "Received query request on non-query interface",
    "Received admin request on non-admin interface",
)

NATIVE = "native"
REST = "rest"


class Refused(Exception):
    """A native request refused by the server's HTTP interface (see ``REFUSALS``)."""


def is_refusal(e: ResolveError) -> bool:
    """True when ``e`` is the server's refusal of native requests on its HTTP interface."""
    text = f"{e.message} {e}"
    return any(refusal in text for refusal in REFUSALS)


def _response(reply: dict[str, Any]) -> Response:
    doc = {k: reply[k] for k in ("responseCode", "handle", "message") if reply[k] is not None}
    content = json.dumps(doc).encode() if reply["responseCode"] is not None else b""
    return Response(reply["status"], content, reply["url"])


def https_verify(value: Any) -> bool:
    """pyhandle's ``HTTPS_verify``: ``False`` (or ``"false"``, any case) turns the check of an
    ``https://`` server's certificate off; anything else (``True``, a CA bundle's path, which
    is not read here) keeps the web PKI check."""
    if isinstance(value, str):
        return value.lower() != "false"
    return value is not False


def _success(reply: dict[str, Any]) -> bool:
    """pyhandle's ``handle_success``: HTTP 200 or 201 with response code 1."""
    return reply["status"] in (200, 201) and reply["responseCode"] == 1


class RestWay:
    """pyhandle's reads and writes over the REST API (writes with Basic credentials), each
    answer read as pyhandle reads it (``hsresponses``): 401 or code 402 is
    ``HandleAuthenticationError`` (its connector's check), other failures as each method of
    pyhandle's has them."""

    def __init__(self, url: str, username: str | None, password: str | None, verify: bool) -> None:
        if username and password:
            self.admin = RestAdmin(url, identity=username, secret=password, verify=verify)
        else:
            self.admin = RestAdmin(url, verify=verify)
        self.username = username

    def read(
        self, handle: str, indices: list[int] | None, types: list[str] | None, auth: bool
    ) -> dict[str, Any] | None:
        """pyhandle's ``retrieve_handle_record_json``: the server's document, ``None`` on 404
        (code 100), the empty record of code 200, else ``GenericHandleError``."""
        reply = self.admin.get_handle(handle, indexes=indices, types=types, auth=auth)
        doc: dict[str, Any] | None = reply["document"]
        if reply["status"] == 404 and reply["responseCode"] == 100:
            return None
        if doc is not None and _success(reply):
            if doc.get("handle") != handle:
                raise GenericHandleError(
                    operation="retrieving handle record",
                    handle=handle,
                    response=_response(reply),
                    msg="The retrieve returned a different handle than was asked for.",
                )
            return doc
        if doc is not None and reply["status"] == 200 and reply["responseCode"] == 200:
            return doc
        raise GenericHandleError(operation="retrieving", handle=handle, response=_response(reply))

    def __checked(self, reply: dict[str, Any], op: str, handle: str) -> dict[str, Any]:
        if reply["status"] == 401 or reply["responseCode"] == 402:
            raise HandleAuthenticationError(
                operation=op, handle=handle, response=_response(reply), username=self.username
            )
        return reply

    def register(self, handle: str, entries: list[dict[str, Any]], overwrite: bool) -> str:
        """PUT of the whole record; the handle the server names."""
        op = "registering handle"
        values = [native_entry(entry) for entry in entries]
        reply = self.__checked(
            self.admin.put_handle(handle, values, overwrite=overwrite), op, handle
        )
        if _success(reply):
            return str(reply["handle"] or handle)
        payload = json.dumps({"values": entries})
        if reply["status"] in (301, 302, 303, 307):
            msg = f"Temporary redirect from {reply['url']}."
        elif reply["status"] == 404 and reply["responseCode"] == 100:
            msg = "Could not create handle. Possibly you used HTTP instead of HTTPS?"
        else:
            msg = None
        raise GenericHandleError(
            operation=op, handle=handle, response=_response(reply), payload=payload, msg=msg
        )

    def put_values(
        self, handle: str, op: str, entries: list[dict[str, Any]], overwrite: bool
    ) -> None:
        """PUT of the entries at their indexes (pyhandle's modifications, 10320/LOC)."""
        values = [native_entry(entry) for entry in entries]
        reply = self.__checked(
            self.admin.put_values(handle, values, overwrite=overwrite), op, handle
        )
        if not _success(reply):
            raise GenericHandleError(
                operation=op,
                handle=handle,
                response=_response(reply),
                payload=json.dumps({"values": entries}),
            )

    def delete_values(self, handle: str, op: str, indices: list[int]) -> bool:
        """DELETE of the values at ``indices``: False when the server has none of them
        (HTTP 400, code 200: pyhandle passes over it)."""
        reply = self.__checked(self.admin.delete_values(handle, indices), op, handle)
        if _success(reply):
            return True
        if reply["status"] == 400 and reply["responseCode"] == 200:
            return False
        raise GenericHandleError(operation=op, handle=handle, response=_response(reply))

    def delete_handle(self, handle: str) -> str:
        """DELETE of the handle; ``HandleNotFoundException`` on HTTP 404, code 100."""
        op = "deleting handle"
        reply = self.__checked(self.admin.delete_handle(handle), op, handle)
        named = str(reply["handle"] or handle)
        if _success(reply):
            return named
        if reply["status"] == 404 and reply["responseCode"] == 100:
            raise HandleNotFoundException(
                handle=named,
                response=_response(reply),
                msg=f"delete_handle: Handle {named} did not exist, so it could not be deleted.",
            )
        raise GenericHandleError(operation=op, handle=handle, response=_response(reply))
