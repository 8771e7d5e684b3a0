"""pyhandle 1.5.0's ``RESTHandleClient``, speaking the native Handle protocol through
:class:`handle_resolver.Resolver` instead of sending REST requests.

The records it returns are the REST API's JSON documents (what pyhandle returns), built from
the native answers. The write methods (``register_handle``, ``modify_handle_value``,
``delete_handle``, ...) send native administration requests, authenticated as HS_SECKEY with the
``username`` (``300:PREFIX/USER``) and ``password``; they need a native address
(``handle_server_url="hdl://HOST:PORT"``): over ``http(s)://`` they raise
``NativeAddressNeeded``. ``search_handle`` needs a reverse-lookup servlet, which is not part of
the handle protocol: it raises ``ReverseLookupException`` as pyhandle does when no search
servlet is configured.
"""

from __future__ import annotations

import copy
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any, TypeVar

from ... import (
    Admin,
    AdminAuthenticationFailed,
    AdminAuthenticationNeeded,
    HandleAlreadyExists,
    HandleDoesNotExist,
    HandleNotFound,
    InvalidIdentifier,
    NoMatchingValues,
    NoSuchValues,
    NotPermitted,
    ResolveError,
    Resolver,
)
from ...pyhandle.handleexceptions import (
    BrokenHandleRecordException,
    GenericHandleError,
    HandleAlreadyExistsException,
    HandleAuthenticationError,
    HandleNotFoundException,
    HandleSyntaxError,
    IllegalOperationException,
    ReverseLookupException,
)

T = TypeVar("T")
NO_AUTH_MESSAGE = "No credentials passed. Read access only."


class NativeAddressNeeded(GenericHandleError, NotImplementedError):
    """A write over a server's HTTP interface (``http(s)://``): this client writes over the
    native protocol only, so give ``handle_server_url="hdl://HOST:PORT"``."""


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
        self.__admin_made: Admin | None = None

    @property
    def __resolver(self) -> Resolver:
        # Made on first use: creating a client sends nothing and resolves no host name.
        # Reads see the writes just made: no cache (pyhandle has none either).
        if self.__resolver_made is None:
            self.__resolver_made = Resolver(cache=False, **self.__kwargs)
        return self.__resolver_made

    def __admin(self, op: str, handle: str) -> Admin:
        """The native administration client, as pyhandle checks write access: no credentials
        is ``HandleAuthenticationError``; an HTTP address is ``NativeAddressNeeded``."""
        if self.__username is None or self.__password is None:
            raise HandleAuthenticationError(msg=NO_AUTH_MESSAGE)
        if not str(self.__handle_server_url).startswith("hdl://"):
            raise NativeAddressNeeded(
                operation=op,
                handle=handle,
                msg="writes go over the native protocol only: give handle_server_url="
                '"hdl://HOST:PORT" (the server\'s native address), not its HTTP interface',
            )
        if self.__admin_made is None:
            self.__admin_made = self.__resolver.admin(
                identity=self.__username, secret=self.__password
            )
        return self.__admin_made

    def __write(self, op: str, handle: str, call: Callable[[Admin], T]) -> T:
        """``call`` with the administration client, its failures as pyhandle's exceptions."""
        admin = self.__admin(op, handle)
        try:
            return call(admin)
        except HandleAlreadyExists as e:
            raise HandleAlreadyExistsException(handle=handle, msg=e.message) from e
        except HandleDoesNotExist as e:
            raise HandleNotFoundException(handle=handle, msg=e.message) from e
        except (AdminAuthenticationFailed, AdminAuthenticationNeeded, NotPermitted) as e:
            raise HandleAuthenticationError(
                operation=op, handle=handle, username=self.__username, msg=e.message
            ) from e
        except InvalidIdentifier as e:
            raise HandleSyntaxError(msg=e.message, handle=handle) from e
        except ValueError as e:  # a value the native encoding cannot hold
            raise GenericHandleError(operation=op, handle=handle, msg=str(e)) from e
        except ResolveError as e:
            raise GenericHandleError(
                operation=op, handle=handle, msg=f"{e.message} ({e.response_code})"
            ) from e

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

    # Writes (native administration; see the module's docstring):

    def register_handle(
        self,
        handle: str,
        location: Any,
        checksum: Any = None,
        additional_URLs: list[str] | None = None,  # noqa: N803
        overwrite: bool = False,
        **extratypes: Any,
    ) -> str:
        """Registers ``handle`` with a URL (``location``), an optional CHECKSUM and
        ``extratypes``; ``additional_URLs`` become a 10320/LOC value (``<locations>`` of
        ``<location id href>``), where pyhandle 1.5.0 raises ``NotImplementedError``.
        Returns the handle; ``HandleAlreadyExistsException`` unless ``overwrite``."""
        if location is not None:
            extratypes["URL"] = location
        if checksum is not None:
            extratypes["CHECKSUM"] = checksum
        if additional_URLs:
            locations = ET.Element("locations")
            for i, url in enumerate(additional_URLs):
                ET.SubElement(locations, "location", {"id": str(i), "href": url})
            extratypes["10320/LOC"] = ET.tostring(locations, encoding="unicode")
        return self.register_handle_kv(handle, overwrite, **extratypes)

    def register_handle_kv(self, handle: str, overwrite: bool = False, **kv_pairs: Any) -> str:
        """Registers ``handle`` with a value per key (URL at index 1, HS_ADMIN at 100, others
        from 2) as pyhandle numbers them. Returns the handle."""
        check_handle_syntax(handle)
        if not overwrite:
            self.__refuse_existing(handle)
        entries: list[dict[str, Any]] = [
            self.__admin_entry(self.__another_index([], hs_admin=True), handle)
        ]
        for key, value in kv_pairs.items():
            index = self.__another_index(entries, url=key == "URL")
            entries.append(self.__entry(key, value, index))
        return self.__register(handle, entries, overwrite)

    def register_handle_json(
        self, handle: str, list_of_entries: list[dict[str, Any]], overwrite: bool = False
    ) -> str:
        """Registers ``handle`` with REST-shaped entries (``index``, ``type``, ``data``,
        optional ``ttl``), adding an HS_ADMIN value when there is none. Returns the handle."""
        check_handle_syntax(handle)
        if not overwrite:
            self.__refuse_existing(handle)
        entries = copy.deepcopy(list_of_entries)
        if not any(entry["type"] == "HS_ADMIN" for entry in entries):
            entries.append(self.__admin_entry(self.__another_index(entries, hs_admin=True), handle))
        return self.__register(handle, entries, overwrite)

    def generate_and_register_handle(
        self,
        prefix: str,
        location: Any,
        checksum: Any = None,
        overwrite: bool = False,
        **extratypes: Any,
    ) -> str:
        """Registers ``PREFIX/<random UUID>``; returns the new handle."""
        handle = self.generate_PID_name(prefix)
        if location is not None:
            extratypes["URL"] = location
        if checksum is not None:
            extratypes["CHECKSUM"] = checksum
        return self.register_handle_kv(handle, overwrite, **extratypes)

    def modify_handle_value(
        self, handle: str, ttl: int | None = None, add_if_not_exist: bool = True, **kvpairs: Any
    ) -> str:
        """Replaces the value of each key (adding the missing ones when
        ``add_if_not_exist``); returns the handle. HS_ADMIN only with ``modify_HS_ADMIN``."""
        return self.__modification(handle, ttl, add_if_not_exist, True, **kvpairs)

    def modify_or_add_handle_value(
        self, handle: str, ttl: int | None = None, **kvpairs: Any
    ) -> str:
        return self.__modification(handle, ttl, True, True, **kvpairs)

    def modify_handle_value_not_add(
        self, handle: str, ttl: int | None = None, **kvpairs: Any
    ) -> str:
        return self.__modification(handle, ttl, False, True, **kvpairs)

    def add_handle_value(self, handle: str, ttl: int | None = None, **kvpairs: Any) -> str:
        """Adds a value per key; a key the record has already is refused by the server
        (``GenericHandleError``), as pyhandle's PUT without overwrite is."""
        return self.__modification(handle, ttl, True, False, **kvpairs)

    def delete_handle_value(self, handle: str, key: str | list[str]) -> str | None:
        """Removes every value of type ``key`` (or of each key of a list); returns the
        handle, or ``None`` when the record has no such value."""
        doc = self.retrieve_handle_record_json(handle, True)
        if doc is None:
            raise HandleNotFoundException(handle=handle, msg="Cannot modify unexisting handle")
        keys = key if isinstance(key, list) else [key]
        indices: list[int] = []
        for one in dict.fromkeys(keys):
            if one == "HS_ADMIN":
                raise IllegalOperationException(operation='deleting "HS_ADMIN"', handle=handle)
            indices.extend(
                int(i) for i in self.get_handlerecord_indices_for_key(one, doc["values"])
            )
        if not indices:
            return None
        plain = _strip_scheme(handle)

        def remove(admin: Admin) -> bool:
            try:
                admin.remove_values(plain, indices)
            except NoSuchValues:  # gone meanwhile: pyhandle passes over a 404 here
                return False
            return True

        return handle if self.__write(f'deleting "{keys}"', handle, remove) else None

    def delete_handle(self, handle: str, *other: Any) -> str:
        """Deletes ``handle``; ``HandleNotFoundException`` when it does not exist. More
        arguments are a ``TypeError`` (use ``delete_handle_value``), as in pyhandle."""
        check_handle_syntax(handle)
        if other:
            raise TypeError(
                "You specified more than one argument. If you wanted to delete just some "
                'values from a handle, please use the new method "delete_handle_value()".'
            )
        op = "deleting handle"
        try:
            self.__write(op, handle, lambda a: a.delete_handle(_strip_scheme(handle)))
        except HandleNotFoundException as e:
            raise HandleNotFoundException(
                handle=handle,
                msg=f"delete_handle: Handle {handle} did not exist, so it could not be deleted.",
            ) from e
        return handle

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

    def __refuse_existing(self, handle: str) -> None:
        if self.retrieve_handle_record_json(handle) is not None:
            raise HandleAlreadyExistsException(handle=handle, msg="Could not register handle")

    def __register(self, handle: str, entries: list[dict[str, Any]], overwrite: bool) -> str:
        values = [_native_entry(entry) for entry in entries]
        plain = _strip_scheme(handle)
        self.__write(
            "registering handle",
            handle,
            lambda a: a.create_handle(plain, values, overwrite=overwrite),
        )
        return handle

    def __modification(
        self,
        handle: str,
        ttl: int | None,
        add_if_not_exist: bool,
        overwrite: bool,
        **kvpairs: Any,
    ) -> str:
        doc = self.retrieve_handle_record_json(handle, True)
        if doc is None:
            raise HandleNotFoundException(handle=handle, msg="Cannot modify unexisting handle")
        if "HS_ADMIN" in kvpairs and not self.__modify_HS_ADMIN:
            raise IllegalOperationException(
                msg="You may not modify HS_ADMIN", operation="modifying HS_ADMIN", handle=handle
            )
        existing: list[dict[str, Any]] = doc["values"]
        every = list(existing)
        changed: list[dict[str, Any]] = []
        added: list[dict[str, Any]] = []
        for key, newval in kvpairs.items():
            matches = [entry for entry in existing if entry["type"] == key]
            if len(matches) > 1:
                raise BrokenHandleRecordException(
                    handle=handle,
                    msg=f'There is several entries of type "{key}". This can lead to '
                    "unexpected behaviour. Please clean up before modifying the record.",
                )
            if matches:
                entry = {k: v for k, v in matches[0].items() if k != "timestamp"}
                if key == "HS_ADMIN":
                    value = dict(newval)
                    value["permissions"] = self.__HS_ADMIN_permissions
                    entry["data"] = {"format": "admin", "value": value}
                else:
                    entry["data"] = newval
                changed.append(entry)
            elif add_if_not_exist:
                entry = self.__entry(key, newval, self.__another_index(every), ttl)
                added.append(entry)
                every.append(entry)
        plain = _strip_scheme(handle)
        op = "modifying handle values"

        def send(admin: Admin) -> None:
            if changed:
                native = [_native_entry(entry) for entry in changed]
                if overwrite:
                    admin.modify_values(plain, native)
                else:
                    admin.add_values(plain, native)
            if added:
                admin.add_values(plain, [_native_entry(entry) for entry in added])

        if changed or added:
            self.__write(op, handle, send)
        return handle

    def __entry(self, key: str, data: Any, index: int, ttl: int | None = None) -> dict[str, Any]:
        if key == "HS_ADMIN":
            raise IllegalOperationException(
                operation="creating HS_ADMIN entry",
                msg="This method can not create HS_ADMIN entries.",
            )
        entry: dict[str, Any] = {"index": index, "type": key, "data": data}
        if ttl is not None:
            entry["ttl"] = ttl
        return entry

    def __admin_entry(self, index: int, handle: str) -> dict[str, Any]:
        """pyhandle's HS_ADMIN value: ``handleowner`` (``index:handle``), else
        ``200:0.NA/PREFIX`` of the handle."""
        if self.__handleowner is None:
            owner_index, owner = 200, "0.NA/" + _strip_scheme(handle).split("/")[0]
        else:
            parts = self.__handleowner.split(":")
            if len(parts) > 2:
                raise HandleSyntaxError(
                    msg="Too many colons",
                    handle=self.__handleowner,
                    expected_syntax="index:prefix/suffix",
                )
            owner_index = int(parts[0]) if len(parts) == 2 else 200
            owner = parts[-1]
        value = {
            "index": owner_index,
            "handle": owner,
            "permissions": self.__HS_ADMIN_permissions,
        }
        return {"index": index, "type": "HS_ADMIN", "data": {"format": "admin", "value": value}}

    @staticmethod
    def __another_index(
        entries: list[dict[str, Any]], url: bool = False, hs_admin: bool = False
    ) -> int:
        """pyhandle's choice of a free index: 1 is for URL, 100-199 for HS_ADMIN, others
        from 2."""
        prohibited = {1} | set(range(100, 200))
        start = 2
        if url:
            prohibited -= {1}
            start = 1
        elif hs_admin:
            prohibited -= set(range(100, 200))
            start = 100
        taken = {int(entry["index"]) for entry in entries} | prohibited
        return next(i for i in range(start, max(start, max(taken)) + 2) if i not in taken)

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


def _native_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A pyhandle entry (``data`` a plain value or ``{"format", "value"}``) in the REST shape
    that ``Admin`` takes."""
    data = entry["data"]
    if isinstance(data, dict) and "value" in data:
        data = dict(data)
        data.setdefault("format", "string")
        if data["format"] == "admin" and isinstance(data["value"], dict):
            admin = dict(data["value"])
            admin["index"] = int(admin["index"])
            data["value"] = admin
    else:
        data = {"format": "string", "value": data if isinstance(data, str) else str(data)}
    out: dict[str, Any] = {"index": int(entry["index"]), "type": entry["type"], "data": data}
    if entry.get("ttl") is not None:
        out["ttl"] = entry["ttl"]
    return out
