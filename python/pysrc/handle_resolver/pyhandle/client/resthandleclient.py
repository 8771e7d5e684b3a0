"""pyhandle 1.5.0's ``RESTHandleClient``, speaking the native Handle protocol through
:class:`handle_resolver.Resolver` where the server takes it, else the REST API as pyhandle.

The records it returns are the REST API's JSON documents (what pyhandle returns), built from
the native answers. ``handle_server_url`` is a handle server's HTTP interface
(``http(s)://HOST:PORT``: native messages POSTed over HTTP, as the reference client sends
them) or, as an addition, its native address (``hdl://HOST:PORT``: UDP, then TCP). The write
methods (``register_handle``, ``modify_handle_value``, ``delete_handle``, ...) send native
administration requests to it, authenticated as the ``username`` (``300:PREFIX/USER``) with
the ``password`` (HS_SECKEY), or with a private key (``private_key``, ``certificate_and_key``;
HS_PUBKEY). ``search_handle`` needs a reverse-lookup servlet, which is not part of the handle
protocol: it raises ``ReverseLookupException`` as pyhandle does when no search servlet is
configured. b2handle's 10320/LOC helpers (``add_additional_URL``, ...) are here too.

A server takes native requests over its HTTP interface only when its site lists that
interface for them; otherwise it refuses each (``Received query request on non-query
interface``). The client then talks as pyhandle does, once and for all: reads
``GET /api/handles/...``, writes ``PUT``/``DELETE`` with Basic credentials (``username`` and
``password`` only), through :class:`handle_resolver.RestAdmin`, with ``HTTPS_verify``. Its
``protocol`` attribute says which: ``"native"`` or ``"rest"``.
"""

from __future__ import annotations

import copy
import uuid
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
from ..handleexceptions import (
    CredentialsFormatError,
    GenericHandleError,
    HandleAlreadyExistsException,
    HandleAuthenticationError,
    HandleNotFoundException,
    HandleSyntaxError,
    IllegalOperationException,
    ReverseLookupException,
)
from . import _locations as loc
from ._credentials import KeyCredentials
from ._entries import (
    DEFAULT_SERVER_URL,
    admin_entry,
    another_index,
    check_handle_syntax,
    check_handle_syntax_with_index,
    make_entry,
    native_entry,
    resolver_arguments,
    strip_scheme,
)
from ._factories import Factories
from ._loc_methods import LocMethods
from ._messages import detail
from ._modify import modification_plan
from ._rest import NATIVE, REST, Refused, RestWay, https_verify, is_refusal

T = TypeVar("T")
NO_AUTH_MESSAGE = "No credentials passed. Read access only."

__all__ = ["DEFAULT_SERVER_URL", "RESTHandleClient", "check_handle_syntax"]


class RESTHandleClient(Factories, LocMethods):
    """pyhandle's REST client, over the native protocol where the server takes it, else
    over the REST API (see the module's docstring)."""

    def __init__(self, handle_server_url: str | None = None, **args: Any) -> None:
        if handle_server_url is not None:
            args["handle_server_url"] = handle_server_url
        self.__handle_server_url: str | None = args.get("handle_server_url")
        self.__HS_ADMIN_permissions: str = args.get("HS_ADMIN_permissions") or "011111110011"
        self.__modify_HS_ADMIN: bool = bool(args.get("modify_HS_ADMIN", False))
        self.__handleowner: str | None = args.get("handleowner")
        self._loc_chooseby = args.get("10320LOC_chooseby")
        self.__username: str | None = args.get("username") or None
        self.__password: str | None = args.get("password") or None
        self.__search_configured = bool(
            args.get("reverselookup_baseuri") or args.get("reverselookup_username")
        )
        self.__kwargs = resolver_arguments(self.__handle_server_url)
        self.__resolver_made: Resolver | None = None
        self.__rest_made: RestWay | None = None
        self.__verify = https_verify(args.get("HTTPS_verify", True))
        # Native until an HTTP interface refuses a native request; a native address
        # (`hdl://`) has no REST API.
        self.__protocol = NATIVE
        self.__decided = not str(self.__kwargs["server"]).startswith(("http://", "https://"))
        self.__admin_made: Admin | None = None
        self.__keys = KeyCredentials.from_args(args)
        self.__no_auth_message = NO_AUTH_MESSAGE
        # pyhandle's setup for write access: a URL of its own, the username's syntax and
        # existence (a read), the key files' existence.
        wants_write = any(
            args.get(name) is not None
            for name in ("username", "password", "certificate_only", "private_key")
        ) or (args.get("certificate_and_key") is not None)
        if wants_write:
            if self.__handle_server_url is None:
                raise TypeError("No handle_server_url given. Default URL not ok for write access.")
            # As in pyhandle, a key (a client certificate there) wins over a password.
            if self.__keys is None and self.__username and self.__password:
                check_handle_syntax_with_index(self.__username)
                self.check_if_username_exists(self.__username)
            elif self.__keys is None:
                self.__no_auth_message = (
                    "We could not identify which authentication method you would like to use"
                )

    def check_if_username_exists(self, username: str) -> bool:
        """pyhandle's check that the username's handle exists: ``HandleNotFoundException``
        when it does not, ``GenericHandleError`` when the read goes wrong."""
        handle = username.split(":", 1)[-1]
        doc = self.retrieve_handle_record_json(handle)
        if doc is None:
            raise HandleNotFoundException(handle=handle, msg="The username handle does not exist")
        if doc.get("responseCode") != 1 or doc.get("handle") != handle:
            raise GenericHandleError(
                operation="checking if handle exists",
                handle=handle,
                msg="Checking if username exists went wrong",
            )
        return True

    @property
    def protocol(self) -> str:
        """How this client talks to its server: ``"native"`` (the native protocol, over the
        server's HTTP interface for an ``http(s)://`` URL) or ``"rest"`` (the REST API, as
        pyhandle), chosen once: REST from the server's first refusal of a native request
        over its HTTP interface on. Read before any request, it asks the server (a native
        resolution it refuses or not)."""
        if not self.__decided:
            try:
                self.__resolver.resolve("0.NA/0.NA")
            except ResolveError as e:
                if is_refusal(e):
                    self.__protocol = REST
            self.__decided = True
        return self.__protocol

    def __refused(self) -> None:  # a native request refused: REST from now on
        self.__protocol, self.__decided = REST, True

    @property
    def __resolver(self) -> Resolver:
        # Made on first use: creating a read-only client sends nothing and resolves no host
        # name. Reads see the writes just made: no cache (pyhandle has none either).
        if self.__resolver_made is None:
            self.__resolver_made = Resolver(cache=False, **self.__kwargs)
        return self.__resolver_made

    @property
    def __rest_way(self) -> RestWay:
        """The server's REST API, with the credentials (Basic) when there are some."""
        if self.__rest_made is None:
            url = str(self.__kwargs["server"])
            user, password = self.__username, self.__password
            self.__rest_made = RestWay(url, user, password, self.__verify)
        return self.__rest_made

    def __rest(self) -> RestWay:
        """The REST API for a write: Basic credentials only, as pyhandle sends them."""
        if self.__keys is not None:
            raise HandleAuthenticationError(
                msg="This server takes no native requests over its HTTP interface, and "
                "its REST API takes a username and password here (Basic credentials), "
                "not a key"
            )
        if not (self.__username and self.__password):
            raise HandleAuthenticationError(msg=self.__no_auth_message)
        return self.__rest_way

    def __change(
        self, op: str, handle: str, native: Callable[[Admin], T], rest: Callable[[RestWay], T]
    ) -> T:
        """A write: native administration, or the REST API's once the server refused."""
        if self.__protocol == NATIVE:
            try:
                done = self.__write(op, handle, native)
            except Refused:
                self.__refused()
            else:
                self.__decided = True
                return done
        return rest(self.__rest())

    def __admin(self) -> Admin:
        """The native administration client; no credentials is
        ``HandleAuthenticationError``, as in pyhandle."""
        if self.__admin_made is not None:
            return self.__admin_made
        if self.__keys is not None:
            try:
                self.__admin_made = self.__resolver.admin(**self.__keys.admin_arguments())
            except ValueError as e:  # the key does not read (a wrong passphrase, ...)
                raise CredentialsFormatError(msg=str(e)) from e
        elif self.__username and self.__password:
            self.__admin_made = self.__resolver.admin(
                identity=self.__username, secret=self.__password
            )
        else:
            raise HandleAuthenticationError(msg=self.__no_auth_message)
        return self.__admin_made

    def __write(self, op: str, handle: str, call: Callable[[Admin], T]) -> T:
        """``call`` with the administration client, its failures as pyhandle's exceptions."""
        admin = self.__admin()
        try:
            return call(admin)
        except HandleAlreadyExists as e:  # the class's own text says it all
            raise HandleAlreadyExistsException(handle=handle) from e
        except HandleDoesNotExist as e:
            raise HandleNotFoundException(handle=handle) from e
        except (AdminAuthenticationFailed, AdminAuthenticationNeeded) as e:
            raise HandleAuthenticationError(
                operation=op, handle=handle, username=self.__username, msg=detail(e)
            ) from e
        except NotPermitted as e:
            # Allowed no further: pyhandle 1.5.0 raises GenericHandleError for a REST 403
            # (only 401 or code 402 is `hsresponses.not_authenticated`).
            raise GenericHandleError(operation=op, handle=handle, msg=detail(e)) from e
        except InvalidIdentifier as e:
            raise HandleSyntaxError(msg=e.message, handle=handle) from e
        except ValueError as e:  # a value the native encoding cannot hold
            raise GenericHandleError(operation=op, handle=handle, msg=str(e)) from e
        except ResolveError as e:
            if is_refusal(e):
                raise Refused(e.message) from e
            raise GenericHandleError(operation=op, handle=handle, msg=detail(e)) from e

    # Reads:

    def retrieve_handle_record_json(
        self, handle: str, auth: bool = False, indices: Any = None, **hs_options: Any
    ) -> dict[str, Any] | None:
        """The record as the REST API's JSON document, or ``None`` when the handle does not
        exist."""
        check_handle_syntax(handle)
        plain = strip_scheme(handle)
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
        if isinstance(types, (tuple, str)):
            types = [types] if isinstance(types, str) else list(types)
        if self.__protocol == REST:
            return self.__rest_way.read(plain, wanted, types, auth)
        try:
            record = self.__resolver.resolve(plain, types=types, indexes=wanted)
            self.__decided = True
        except ResolveError as e:
            if is_refusal(e):
                self.__refused()
                return self.__rest_way.read(plain, wanted, types, auth)
            self.__decided = True  # the server answered
            return self.__native_failure(handle, plain, e)
        return record.to_dict()

    def __native_failure(self, handle: str, plain: str, e: ResolveError) -> dict[str, Any] | None:
        """A native read's failure as pyhandle's REST read has it."""
        if isinstance(e, HandleNotFound):
            return None
        if isinstance(e, NoMatchingValues):
            return {"responseCode": 200, "handle": plain, "values": []}
        if isinstance(e, InvalidIdentifier):
            raise HandleSyntaxError(msg=e.message, handle=handle) from e
        raise GenericHandleError(operation="retrieving", handle=handle, msg=detail(e)) from e

    def retrieve_handle_record(
        self,
        handle: str,
        handlerecord_json: dict[str, Any] | None = None,
        auth: bool = False,
        indices: Any = None,
        **hs_options: Any,
    ) -> dict[str, str] | None:
        """``{type: value}`` of the first value of each type (as ``str``), or ``None``."""
        doc = self._record_if_necessary(handle, handlerecord_json, auth, indices, **hs_options)
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
        doc = self._record_if_necessary(handle, handlerecord_json, auth, indices, **hs_options)
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
        ``extratypes``; ``additional_URLs`` become a 10320/LOC value as b2handle made it
        (where pyhandle 1.5.0 raises ``NotImplementedError``). Returns the handle;
        ``HandleAlreadyExistsException`` unless ``overwrite``."""
        if location is not None:
            extratypes["URL"] = location
        if checksum is not None:
            extratypes["CHECKSUM"] = checksum
        return self.__register_kv(handle, overwrite, additional_URLs, extratypes)

    def register_handle_kv(self, handle: str, overwrite: bool = False, **kv_pairs: Any) -> str:
        """Registers ``handle`` with a value per key (URL at index 1, HS_ADMIN at 100, others
        from 2) as pyhandle numbers them. Returns the handle."""
        return self.__register_kv(handle, overwrite, None, kv_pairs)

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
            entries.append(self.__admin_entry(another_index(entries, hs_admin=True), handle))
        return self.__register(handle, entries, overwrite)

    def generate_and_register_handle(
        self,
        prefix: str,
        location: Any,
        checksum: Any = None,
        overwrite: bool = False,
        **extratypes: Any,
    ) -> str:
        """Registers ``PREFIX/<random UUID>``; returns the new handle. An
        ``additional_URLs`` keyword is a 10320/LOC value, as b2handle's method took it."""
        handle = self.generate_PID_name(prefix)
        additional = extratypes.pop("additional_URLs", None)
        if location is not None:
            extratypes["URL"] = location
        if checksum is not None:
            extratypes["CHECKSUM"] = checksum
        return self.__register_kv(handle, overwrite, additional, extratypes)

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
        plain = strip_scheme(handle)

        def remove(admin: Admin) -> bool:
            try:
                admin.remove_values(plain, indices)
            except NoSuchValues:  # gone meanwhile: pyhandle passes over a 404 here
                return False
            return True

        op = f'deleting "{keys}"'
        done = self.__change(op, handle, remove, lambda r: r.delete_values(plain, op, indices))
        return plain if done else None

    def delete_handle(self, handle: str, *other: Any) -> str:
        """Deletes ``handle``; ``HandleNotFoundException`` when it does not exist. More
        arguments are a ``TypeError`` (use ``delete_handle_value``), as in pyhandle."""
        check_handle_syntax(handle)
        if other:
            raise TypeError(
                "You specified more than one argument. If you wanted to delete just some "
                'values from a handle, please use the new method "delete_handle_value()".'
            )
        plain = strip_scheme(handle)

        def native(admin: Admin) -> str:
            admin.delete_handle(plain)
            return plain

        try:
            return self.__change(
                "deleting handle", handle, native, lambda r: r.delete_handle(plain)
            )
        except HandleNotFoundException as e:
            if e.response is not None:  # the REST API's 404, as pyhandle raises it
                raise
            raise HandleNotFoundException(
                handle=plain,
                msg=f"delete_handle: Handle {plain} did not exist, so it could not be deleted.",
            ) from e

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

    # Helpers:

    def _put_loc(
        self,
        handle: str,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> None:
        """Writes a changed 10320/LOC value at its own index (b2handle wrote the whole
        record back, which gives the same record): added, replaced or removed."""
        plain = strip_scheme(handle)

        def send(admin: Admin) -> None:
            if before is None and after is not None:
                admin.add_values(plain, [native_entry(after)])
            elif after is not None:
                admin.modify_values(plain, [native_entry(after)])
            elif before is not None:
                admin.remove_values(plain, [int(before["index"])])

        def rest(r: RestWay) -> None:
            if after is not None:
                r.put_values(plain, op, [after], overwrite=before is not None)
            elif before is not None:
                r.delete_values(plain, op, [int(before["index"])])

        self.__change(op, handle, send, rest)

    def __refuse_existing(self, handle: str) -> None:
        if self.retrieve_handle_record_json(handle) is not None:
            raise HandleAlreadyExistsException(handle=handle, msg="Could not register handle")

    def __register_kv(
        self,
        handle: str,
        overwrite: bool,
        additional_urls: list[str] | None,
        kv_pairs: dict[str, Any],
    ) -> str:
        check_handle_syntax(handle)
        if not overwrite:
            self.__refuse_existing(handle)
        entries: list[dict[str, Any]] = [
            self.__admin_entry(another_index([], hs_admin=True), handle)
        ]
        for key, value in kv_pairs.items():
            index = another_index(entries, url=key == "URL")
            entries.append(make_entry(key, value, index))
        if additional_urls:
            entries.append(
                loc.add_urls(
                    None, list(additional_urls), another_index(entries), self._loc_chooseby
                )
            )
        return self.__register(handle, entries, overwrite)

    def __register(self, handle: str, entries: list[dict[str, Any]], overwrite: bool) -> str:
        values = [native_entry(entry) for entry in entries]
        plain = strip_scheme(handle)
        return self.__change(
            "registering handle",
            handle,
            lambda a: a.create_handle(plain, values, overwrite=overwrite),
            lambda r: r.register(plain, entries, overwrite),
        )

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
        changed, added = modification_plan(
            handle, doc["values"], kvpairs, ttl, add_if_not_exist, self.__HS_ADMIN_permissions
        )
        plain = strip_scheme(handle)

        def send(admin: Admin) -> None:
            if changed:
                native = [native_entry(entry) for entry in changed]
                if overwrite:
                    admin.modify_values(plain, native)
                else:
                    admin.add_values(plain, native)
            if added:
                admin.add_values(plain, [native_entry(entry) for entry in added])

        op = "modifying handle values"
        if changed or added:
            self.__change(
                op, handle, send, lambda r: r.put_values(plain, op, changed + added, overwrite)
            )
        return plain

    def __admin_entry(self, index: int, handle: str) -> dict[str, Any]:
        return admin_entry(self.__handleowner, self.__HS_ADMIN_permissions, index, handle)

    def _record_if_necessary(
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
