"""A drop-in for pyhandle 1.5.0's REST client that speaks the native Handle protocol.

Code written against pyhandle switches by changing its imports::

    from handle_resolver.pyhandle.client.resthandleclient import RESTHandleClient
    from handle_resolver.pyhandle.handleexceptions import HandleNotFoundException

``handle_server_url`` is a handle server's HTTP interface (``http(s)://HOST:PORT``: the native
messages, resolutions and administration alike, are POSTed over HTTP to it) or, as an
addition, a native address ``hdl://HOST:PORT`` (UDP, then TCP). Writes go through
:class:`handle_resolver.Admin`, authenticated as HS_SECKEY (``username`` and ``password``) or
HS_PUBKEY (``private_key`` / ``certificate_and_key``). Where the server refuses native
requests over its HTTP interface (its site does not list it for them), the client talks over
the REST API as pyhandle does (``client.protocol == "rest"``): reads ``GET /api/handles/``,
writes ``PUT``/``DELETE`` with Basic credentials (:class:`handle_resolver.RestAdmin`).
"""

from __future__ import annotations

__all__: list[str] = []
