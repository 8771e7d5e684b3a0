"""pyhandle 1.5.0's ``RESTHandleClient``, speaking the native Handle protocol through
:class:`handle_resolver.Resolver` instead of sending REST requests.

The records it returns are the REST API's JSON documents (what pyhandle returns), built from
the native answers. ``search_handle`` needs a reverse-lookup servlet, which is not part of
the handle protocol: it raises ``ReverseLookupException`` as pyhandle does when no search
servlet is configured.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from typing import Any

from ... import HandleNotFound, InvalidIdentifier, NoMatchingValues, ResolveError, Resolver
from ...pyhandle.handleexceptions import (
    GenericHandleError,
    HandleNotFoundException,
    HandleSyntaxError,
    ReverseLookupException,
)

DEFAULT_SERVER_URL = "https://hdl.handle.net"


def check_handle_syntax(handle: Any) -> bool:
    """pyhandle's check: ``prefix/suffix`` (an ``hdl:`` in front allowed), else
    ``HandleSyntaxError``."""
    expected = "prefix/suffix"
    if not isinstance(handle, str):
        raise HandleSyntaxError(msg="The provided handle is None", expected_syntax=expected)
    parts = handle.split("/")
    if len(parts) < 2:
        raise HandleSyntaxError(msg="No slash", handle=handle, expected_syntax=expected)
    if not parts[0]:
        raise HandleSyntaxError(msg="Empty prefix", handle=handle, expected_syntax=expected)
    if not parts[1]:
        raise HandleSyntaxError(msg="Empty suffix", handle=handle, expected_syntax=expected)
    if ":" in handle and not handle.startswith("hdl:"):
        index, _, rest = handle.partition(":")
        if not index.isdigit() or ":" in rest:
            raise HandleSyntaxError(
                msg="Index is not an integer",
                handle=handle,
                expected_syntax="index:prefix/suffix",
            )
    return True


def _strip_scheme(handle: str) -> str:
    for scheme in ("hdl:", "doi:"):
        if handle.startswith(scheme):
            return handle[len(scheme) :]
    return handle


def _resolver_arguments(url: str | None) -> dict[str, Any]:
    """``Resolver`` keyword arguments for a ``handle_server_url``."""
    if url is None:
        url = DEFAULT_SERVER_URL
    url = url.rstrip("/")
    if url.startswith("hdl://"):
        return {"server": url[len("hdl://") :]}
    if url.startswith(("http://", "https://")):
        return {"server": url}
    raise ValueError(
        f"handle_server_url {url!r}: give http(s)://HOST:PORT (a handle server's HTTP "
        "interface) or hdl://HOST:PORT (its native interface)"
    )


class RESTHandleClient:
    """pyhandle's REST client, over the native protocol (see the module's docstring)."""

    HANDLE_CLIENT = "rest"

    def __init__(self, handle_server_url: str | None = None, **args: Any) -> None:
        self.__args = dict(args)
        self.__handle_server_url = handle_server_url or args.get("handle_server_url")
        self.__HS_ADMIN_permissions: str = args.get("HS_ADMIN_permissions") or "011111110011"
        self.__modify_HS_ADMIN: bool = bool(args.get("modify_HS_ADMIN", False))
        self.__handleowner: str | None = args.get("handleowner")
        self.__username: str | None = args.get("username")
        self.__password: str | None = args.get("password")
        self.__key_file: str | None = args.get("private_key") or args.get("certificate_and_key")
        self.__passphrase: str | None = args.get("passphrase")
        self.__search_configured = bool(
            args.get("reverselookup_baseuri") or args.get("reverselookup_username")
        )
        self.__kwargs = _resolver_arguments(self.__handle_server_url)
        self.__resolver_made: Resolver | None = None

    @property
    def __resolver(self) -> Resolver:
        # Made on first use: creating a client sends nothing and resolves no host name.
        # Reads see the writes just made: no cache (pyhandle has none either).
        if self.__resolver_made is None:
            self.__resolver_made = Resolver(cache=False, **self.__kwargs)
        return self.__resolver_made

    # Instantiation, as pyhandle's factory methods:

    @staticmethod
    def instantiate_for_read_access(
        handle_server_url: str | None = None, **config: Any
    ) -> RESTHandleClient:
        return RESTHandleClient(handle_server_url, **config)

    @staticmethod
    def instantiate_for_read_and_search(
        handle_server_url: str | None,
        reverselookup_username: str,
        reverselookup_password: str,
        **config: Any,
    ) -> RESTHandleClient:
        if handle_server_url is None and "reverselookup_baseuri" not in config:
            raise TypeError(
                'You must specify either "handle_server_url" or "reverselookup_baseuri".'
                " Searching not possible without the URL of a search servlet."
            )
        return RESTHandleClient(
            handle_server_url,
            reverselookup_username=reverselookup_username,
            reverselookup_password=reverselookup_password,
            **config,
        )

    @staticmethod
    def instantiate_with_username_and_password(
        handle_server_url: str, username: str, password: str, **config: Any
    ) -> RESTHandleClient:
        return RESTHandleClient(handle_server_url, username=username, password=password, **config)

    @staticmethod
    def instantiate_with_credentials(credentials: Any, **config: Any) -> RESTHandleClient:
        """``credentials``: ours or pyhandle's ``PIDClientCredentials`` (anything with
        ``get_all_args()``)."""
        args = dict(credentials.get_all_args())
        args.update(config)
        return RESTHandleClient(**args)

    @classmethod
    def check_client(cls, client: str) -> bool:
        return client == cls.HANDLE_CLIENT

    # Reads:

    def retrieve_handle_record_json(
        self, handle: str, auth: bool = False, indices: Any = None, **hs_options: Any
    ) -> dict[str, Any] | None:
        """The record as the REST API's JSON document, or ``None`` when the handle does not
        exist."""
        check_handle_syntax(handle)
        plain = _strip_scheme(handle)
        wanted: list[int] | None = None
        index_option = hs_options.get("index")
        if indices is not None or index_option is not None:
            wanted = []
            for group in (indices, index_option):
                if group is None:
                    continue
                items = group if isinstance(group, (list, tuple)) else [group]
                wanted.extend(int(i) for i in items)
        types = hs_options.get("type")
        if isinstance(types, tuple):
            types = list(types)
        try:
            record = self.__resolver.resolve(plain, types=types, indexes=wanted)
        except HandleNotFound:
            return None
        except NoMatchingValues:
            return {"responseCode": 200, "handle": plain, "values": []}
        except InvalidIdentifier as e:
            raise HandleSyntaxError(msg=e.message, handle=handle) from e
        except ResolveError as e:
            raise GenericHandleError(
                operation="retrieving", handle=handle, msg=f"{e.message} ({e.response_code})"
            ) from e
        doc = record.to_dict()
        return doc

    def retrieve_handle_record(
        self,
        handle: str,
        handlerecord_json: dict[str, Any] | None = None,
        auth: bool = False,
        indices: Any = None,
        **hs_options: Any,
    ) -> dict[str, str] | None:
        """``{type: value}`` of the first value of each type (as ``str``), or ``None``."""
        doc = self.__record_if_necessary(handle, handlerecord_json, auth, indices, **hs_options)
        if doc is None:
            return None
        out: dict[str, str] = {}
        for entry in doc["values"]:
            out.setdefault(entry["type"], str(entry["data"]["value"]))
        return out

    def get_value_from_handle(
        self,
        handle: str,
        key: str,
        handlerecord_json: dict[str, Any] | None = None,
        auth: bool = False,
        indices: Any = None,
        **hs_options: Any,
    ) -> Any:
        """The data value of the first value of type ``key``, or ``None``;
        ``HandleNotFoundException`` when the handle does not exist."""
        doc = self.__record_if_necessary(handle, handlerecord_json, auth, indices, **hs_options)
        if doc is None:
            raise HandleNotFoundException(handle=handle)
        for entry in doc["values"]:
            if entry["type"] == key:
                return entry["data"]["value"]
        return None

    def get_handlerecord_indices_for_key(
        self, key: str, list_of_entries: list[dict[str, Any]]
    ) -> list[Any]:
        return [entry["index"] for entry in list_of_entries if entry["type"] == key]

    def generate_PID_name(self, prefix: str | None = None) -> str:  # noqa: N802
        name = str(uuid.uuid4())
        return name if prefix is None else f"{prefix}/{name}"

    def search_handle(self, URL: Any = None, prefix: Any = None, **key_value_pairs: Any) -> Any:  # noqa: N803
        """Reverse lookup is a servlet, not the handle protocol: not available."""
        raise ReverseLookupException(
            msg="No search servlet: reverse lookup is not part of the Handle protocol, which "
            "this client speaks"
            + ("" if self.__search_configured else " (and no search was configured)")
        )

    # b2handle's 10320/LOC helpers:

    def is_10320LOC_empty(  # noqa: N802
        self, handle: str, handlerecord_json: dict[str, Any] | None = None
    ) -> bool:
        """True when the record has no 10320/LOC value or it lists no location
        (``HandleNotFoundException`` when the handle does not exist)."""
        doc = self.__record_if_necessary(handle, handlerecord_json, False, None)
        if doc is None:
            raise HandleNotFoundException(handle=handle)
        locations = self.__locations(doc)
        return locations is None or len(locations) == 0

    def is_URL_contained_in_10320LOC(  # noqa: N802
        self, handle: str, url: str, handlerecord_json: dict[str, Any] | None = None
    ) -> bool:
        """True when a location of the record's 10320/LOC value has ``href`` ``url``."""
        doc = self.__record_if_necessary(handle, handlerecord_json, False, None)
        if doc is None:
            raise HandleNotFoundException(handle=handle)
        locations = self.__locations(doc)
        if locations is None:
            return False
        return any(loc.get("href") == url for loc in locations)

    # Helpers:

    def __locations(self, doc: dict[str, Any]) -> list[ET.Element] | None:
        for entry in doc["values"]:
            if entry["type"] == "10320/LOC":
                value = entry["data"]["value"]
                root = ET.fromstring(value if isinstance(value, str) else str(value))
                return list(root.iter("location"))
        return None

    def __record_if_necessary(
        self,
        handle: str,
        handlerecord_json: dict[str, Any] | None,
        auth: bool,
        indices: Any,
        **hs_options: Any,
    ) -> dict[str, Any] | None:
        if handlerecord_json is None or handlerecord_json.get("handle") != handle:
            return self.retrieve_handle_record_json(handle, auth, indices, **hs_options)
        return handlerecord_json
