"""Type stubs of the extension module ``handle_resolver._native``."""

import datetime
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Sequence
from os import PathLike
from types import TracebackType
from typing import Any, Generic, Literal, TypedDict, TypeVar

from typing_extensions import Self, TypeAlias

from ._errors import ResolveError

__version__: str

Transport: TypeAlias = Literal["udp", "tcp", "http"]
StrPath: TypeAlias = str | PathLike[str]
Secret: TypeAlias = str | bytes
Types: TypeAlias = str | Sequence[str] | None
ValueLike: TypeAlias = HandleValue | dict[str, Any]

class Source(TypedDict):
    server: str | None
    transport: str
    site: str | None
    siteSerial: int
    certified: bool
    authoritative: bool
    url: str | None
    fromCache: bool

class Attempt(TypedDict):
    attempt: int
    handle: str
    server: str | None
    transport: str
    url: str | None
    rttMs: float
    transmissions: int
    responseCode: int | None
    outcome: str

class HandleValue:
    """One handle value: index, type, data bytes, TTL, timestamp, permissions, references."""

    def __init__(
        self,
        index: int,
        type: str,
        data: str | bytes,
        *,
        ttl: int = 86400,
        ttl_type: Literal["relative", "absolute"] = "relative",
        permissions: str = "1110",
        timestamp: int = 0,
        references: Sequence[tuple[str, int]] | None = None,
    ) -> None: ...
    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HandleValue:
        """A value from its REST API JSON shape (what ``to_dict()`` returns)."""
    @property
    def index(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def data(self) -> bytes: ...
    @property
    def text(self) -> str | None:
        """The data as text when it is UTF-8, else ``None``."""
    @property
    def ttl(self) -> int: ...
    @property
    def ttl_type(self) -> str:
        """``"relative"`` or ``"absolute"`` (then ``ttl`` is seconds since 1970)."""
    @property
    def timestamp(self) -> datetime.datetime | None:
        """When the value was last changed (UTC), or ``None``."""
    @property
    def permissions(self) -> str:
        """Admin read, admin write, public read, public write, as ``"1110"``."""
    @property
    def references(self) -> list[tuple[str, int]]: ...
    def typed(self) -> str | bytes | dict[str, Any] | list[Any]:
        """The data read by its type: ``str`` for text types, a dict for HS_ADMIN,
        HS_SITE, HS_PUBKEY and 10320/loc, a list for HS_VLIST, ``bytes`` otherwise."""
    def to_dict(self) -> dict[str, Any]:
        """The value in the REST API's JSON shape."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class HandleRecord:
    """The values of one handle and where they came from."""

    @property
    def handle(self) -> str: ...
    @property
    def values(self) -> list[HandleValue]: ...
    @property
    def url(self) -> str | None:
        """The data of the first URL value, or ``None``."""
    @property
    def urls(self) -> list[str]: ...
    def values_of_type(self, t: str) -> list[HandleValue]: ...
    @property
    def aliases(self) -> list[str]: ...
    @property
    def from_cache(self) -> bool: ...
    @property
    def source(self) -> Source: ...
    @property
    def attempts(self) -> list[Attempt]: ...
    def to_dict(self) -> dict[str, Any]:
        """The REST API's JSON document, as ``resolve --json`` prints it (without
        ``input``)."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> HandleValue: ...
    def __iter__(self) -> Iterator[HandleValue]: ...
    def __eq__(self, other: object) -> bool: ...

class Identifier:
    """An identifier read offline by ``parse``."""

    @property
    def input(self) -> str: ...
    @property
    def kind(self) -> Literal["handle", "cordra", "urn"]: ...
    @property
    def handle(self) -> str | None:
        """The handle as a resolver sends it: the prefix normalized, the suffix as written;
        ``None`` for a URN."""
    @property
    def cordra_handle(self) -> str | None:
        """A CORDRA id's upper-case CORDRA form (``None`` for other identifiers)."""
    @property
    def prefix(self) -> str | None: ...
    @property
    def suffix(self) -> str | None: ...
    @property
    def query(self) -> str | None: ...
    @property
    def fragment(self) -> str | None: ...
    @property
    def hdl_uri(self) -> str | None: ...
    @property
    def urn(self) -> str | None: ...
    @property
    def namespace(self) -> str | None: ...
    @property
    def resolver_urls(self) -> list[str]: ...
    @property
    def notes(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]:
        """What ``resolve --check --json`` prints for it."""

def parse(identifier: str, *, cordra: bool = False, lenient: bool = False) -> Identifier:
    """Reads an identifier offline; raises ``InvalidIdentifier``."""

def certificate_identity(data: bytes) -> str | None:
    """The Handle identity (``"INDEX:HANDLE"``) a client certificate (PEM or DER) names in
    its subject: UID, else CN, else O; ``None`` when none. ``ValueError`` for no
    certificate."""

class ResolveMany(Iterator[tuple[Any, HandleRecord | ResolveError]]):
    def __iter__(self) -> Self: ...
    def __next__(self) -> tuple[Any, HandleRecord | ResolveError]: ...
    def close(self) -> None:
        """Stops reading the input and cancels the resolutions in flight."""
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...

class AsyncResolveMany(AsyncIterator[tuple[Any, HandleRecord | ResolveError]]):
    def __aiter__(self) -> Self: ...
    def __anext__(self) -> Awaitable[tuple[Any, HandleRecord | ResolveError]]: ...
    def aclose(self) -> Awaitable[None]: ...
    def close(self) -> None: ...

class BatchReport:
    """One line of a batch run's log: a command's outcome, or an invalid line's; ``str()``
    gives the reference's log line (``==>SUCCESS[3]: create:20.500.1/x``)."""

    @property
    def line(self) -> int:
        """Physical line number of the command (1-based)."""
    @property
    def n(self) -> int:
        """The reference's ``[n]``: the command's place among the file's top-level lines."""
    @property
    def op(self) -> str:
        """The reference's name of the operation (``create``, ...); empty for an invalid
        line."""
    @property
    def handle(self) -> str: ...
    @property
    def outcome(self) -> Literal["success", "failure", "invalid"]: ...
    @property
    def code(self) -> int | None:
        """The server's response code of a failure, when a server answered."""
    @property
    def message(self) -> str:
        """Why it failed or is invalid; empty on success."""

class BatchResult:
    """What ``Admin.run_batch`` did."""

    @property
    def reports(self) -> list[BatchReport]:
        """Every log line's report, in file order."""
    @property
    def successes(self) -> int: ...
    @property
    def total(self) -> int:
        """Commands counted as the reference counts them (``Total Entries``)."""
    @property
    def lines(self) -> int:
        """Top-level lines of the file (``Batch File Lines``)."""
    @property
    def ok(self) -> bool:
        """True when every command succeeded (no failure, no invalid line)."""
    @property
    def log(self) -> str:
        """The reference's log: every line in file order, then its count lines."""

# The blocking classes and their asyncio twins take the same arguments and have the same
# calls; a call returns its result on the one and an awaitable of it on the other. Each pair
# is typed once, by a generic base of these stubs alone (at run time each class is a class
# of its own), whose parameters are what the calls return.
_Created = TypeVar("_Created")
_Done = TypeVar("_Done")
_Handles = TypeVar("_Handles")
_Batch = TypeVar("_Batch")
_Record = TypeVar("_Record")
_Urls = TypeVar("_Urls")
_Url = TypeVar("_Url")
_Many = TypeVar("_Many")
_Admin = TypeVar("_Admin")

class _Administering(Generic[_Created, _Done, _Handles, _Batch]):
    """``Admin`` and ``AsyncAdmin``: administration of handles as one identity. Each request
    goes to a primary site of the handle's prefix over TCP (or HTTP), answering the
    server's challenge as the identity. Values are ``HandleValue`` objects or REST-shaped
    dicts (``{"index": 1, "type": "URL", "data": {"format": "string", "value": "..."}}``)."""

    def create_handle(
        self, handle: str, values: Iterable[ValueLike], overwrite: bool = False
    ) -> _Created:
        """Creates ``handle`` with ``values`` (give an HS_ADMIN value, or nobody may change
        it afterwards); returns the handle as created. With ``overwrite``, an existing
        handle's values are replaced instead of failing with ``HandleAlreadyExists``."""
    def add_values(self, handle: str, values: Iterable[ValueLike]) -> _Done:
        """Adds ``values`` to ``handle`` (their indexes must be free)."""
    def modify_values(self, handle: str, values: Iterable[ValueLike]) -> _Done:
        """Replaces the values of ``handle`` at the indexes of ``values``."""
    def remove_values(self, handle: str, indexes: Sequence[int]) -> _Done:
        """Removes the values of ``handle`` at ``indexes``."""
    def delete_handle(self, handle: str) -> _Done:
        """Deletes ``handle``."""
    def list_handles(self, prefix: str) -> _Handles:
        """Every handle under ``prefix``."""
    def run_batch(
        self,
        file: StrPath | None = None,
        *,
        text: str | None = None,
        concurrency: int = 16,
        base_dir: StrPath | None = None,
    ) -> _Batch:
        """Runs a batch file of the reference's ``hdl-genericbatch`` (``file``, or its
        ``text``): independent commands at once (at most ``concurrency``), one handle's
        commands in file order, as the identities of its AUTHENTICATE lines (a change before
        the first fails, as with ``hdl-genericbatch``) with this admin's settings (servers,
        root, transports, deadline). A failed command is in the result, not raised."""

class Admin(_Administering[str, None, list[str], BatchResult]):
    """Administration of handles as one identity (``Resolver.admin``)."""

class AsyncAdmin(
    _Administering[Awaitable[str], Awaitable[None], Awaitable[list[str]], Awaitable[BatchResult]]
):
    """``Admin`` with awaitable calls (``AsyncResolver.admin``)."""

class _Resolving(Generic[_Record, _Urls, _Many, _Admin, _Url]):
    """``Resolver`` and ``AsyncResolver``: a Handle System resolver."""

    def __init__(
        self,
        root: str | None = None,
        server: str | None = None,
        proxy: str | None = None,
        urn_resolver: str | None = None,
        transport: Transport = "udp",
        timeout: float = 10.0,
        certify: bool = False,
        authoritative: bool = False,
        follow_aliases: bool = False,
        cache: bool = True,
        concurrency: int = 16,
        *,
        public_only: bool | None = None,
        identity: str | None = None,
        secret: Secret | None = None,
        secret_file: StrPath | None = None,
        key_file: StrPath | None = None,
        key_passphrase: Secret | None = None,
    ) -> None:
        """``root``: where resolution starts (``HOST[:PORT]``, ``http://HOST:PORT`` or a
        root file; default the global root); ``server``: the one server asked, without the
        service lookup; ``proxy``: resolve through a handle proxy's REST API instead (without
        ``root`` and ``server``); ``urn_resolver``: the RFC 2169 resolver of every URN;
        ``transport``: ``"udp"`` (then TCP, then HTTP), ``"tcp"`` or ``"http"``;
        ``timeout``: seconds per identifier; ``certify``: verify the answers' signatures
        (not with ``server`` or ``proxy``); ``authoritative``: primary sites only, no cache;
        ``follow_aliases``: follow HS_ALIAS values; ``cache``: keep answers;
        ``concurrency``: ``resolve_many``'s default; ``public_only``: ask for public values
        only (default: when there is no identity); ``identity`` (``"INDEX:HANDLE"``) with
        ``secret``, ``secret_file`` or ``key_file`` (``key_passphrase``): who answers the
        servers' challenges, and ``admin()``'s default identity."""
    def resolve(
        self,
        identifier: str | Identifier,
        types: Types = None,
        indexes: Sequence[int] | None = None,
    ) -> _Record:
        """Resolves one identifier (any form: ``PREFIX/SUFFIX``, ``hdl:``, ``doi:``,
        resolver URLs, CORDRA ids) to its values; ``types`` and ``indexes`` select values
        (any type OR any index). Raises a ``ResolveError`` subclass when there are none."""
    def resolve_many(
        self,
        identifiers: Iterable[str | Identifier],
        concurrency: int | None = None,
        *,
        types: Types = None,
        indexes: Sequence[int] | None = None,
    ) -> _Many:
        """Resolves every identifier of ``identifiers`` (read lazily: at most
        ``concurrency`` ahead of what has been read back), yielding ``(input, HandleRecord |
        ResolveError)`` in completion order. Closing the iterator (``close()``,
        ``aclose()``) or dropping it cancels the resolutions in flight."""
    def resolve_urn(self, urn: str) -> _Urls:
        """Resolves a URN (``urn:fdc:``, ``urn-3:``) over RFC 2169 to its URLs, in the
        resolver's order of preference."""
    def locate(
        self,
        identifier: str | Identifier,
        *,
        locatt: str | Sequence[str] | None = None,
        address: str | None = None,
        country: str | None = None,
    ) -> _Url:
        """The URL the handle.net proxy would redirect to: HS_ALIAS values followed first
        (at most 20 hops), then one location of the handle's ``10320/loc`` and ``URL``
        values chosen as the proxy chooses, by the ``locatt`` wishes (``"view:json"``, or
        several in order), the client's ``address`` and ``country``; ``None`` when there is
        none."""
    def admin(
        self,
        identity: str | None = None,
        secret: Secret | None = None,
        secret_file: StrPath | None = None,
        key_file: StrPath | None = None,
        key_passphrase: Secret | None = None,
    ) -> _Admin:
        """Administration as ``identity`` (``"INDEX:HANDLE"``), whose key is ``secret``
        (HS_SECKEY), ``secret_file`` or ``key_file`` (HS_PUBKEY; ``key_passphrase`` for an
        encrypted one). Without arguments, the resolver's own identity; without either, no
        identity: ``run_batch`` authenticates with the file's AUTHENTICATE lines (as ``admin
        batch`` does), and any other call needing one raises ``AdminAuthenticationNeeded``."""
    def clear_cache(self) -> None:
        """Forgets every cached answer and service."""
    @property
    def concurrency(self) -> int:
        """The default number of resolutions ``resolve_many`` runs at once."""

class Resolver(_Resolving[HandleRecord, list[str], ResolveMany, Admin, str | None]):
    """A blocking Handle System resolver (releases the GIL; Ctrl-C interrupts its calls)."""

class AsyncResolver(
    _Resolving[
        Awaitable[HandleRecord],
        Awaitable[list[str]],
        AsyncResolveMany,
        AsyncAdmin,
        Awaitable[str | None],
    ]
):
    """The asyncio resolver: the same arguments as ``Resolver``; awaitable calls."""

class RestAdmin:
    """Reads and writes through a handle server's REST API (``GET``/``PUT``/``DELETE
    {url}/api/handles/...``) with Basic credentials (or none), as pyhandle does;
    ``verify=False`` accepts any certificate (pyhandle's ``HTTPS_verify=False``). Each method
    returns the server's answer, ``{"status", "responseCode", "handle", "message", "url",
    "document"}`` (a failure's too); ``NetworkError``/``Timeout``/``ProtocolError`` when there
    is no answer in the REST API's JSON."""

    def __init__(
        self,
        url: str,
        *,
        identity: str | None = None,
        secret: str | None = None,
        timeout: float = 30.0,
        verify: bool = True,
    ) -> None: ...
    @property
    def url(self) -> str: ...
    def get_handle(
        self,
        handle: str,
        *,
        indexes: list[int] | None = None,
        types: list[str] | None = None,
        auth: bool = False,
    ) -> dict[str, Any]: ...
    def put_handle(
        self, handle: str, values: Iterable[ValueLike], *, overwrite: bool = False
    ) -> dict[str, Any]: ...
    def put_values(
        self, handle: str, values: Iterable[ValueLike], *, overwrite: bool = False
    ) -> dict[str, Any]: ...
    def delete_handle(self, handle: str) -> dict[str, Any]: ...
    def delete_values(self, handle: str, indexes: list[int]) -> dict[str, Any]: ...

class TestNetwork:
    """A loopback Handle System in this process: a root and a service of several sites."""

    def __init__(
        self,
        *,
        sites: int = 2,
        servers_per_site: int = 1,
        prefix: str = "20.500.1",
        http: bool = False,
        admin_secret: str = "test-admin-secret",
        http_interface: Literal["adm+qry", "adm", "qry", "out-of-service"] | None = "adm+qry",
    ) -> None:
        """With ``http``, the servers' records list their HTTP sides as ``http_interface``
        (``None``: not at all); a native request over HTTP of a kind not listed is refused
        as the reference refuses it, while the REST API answers all the same. A site of
        several servers answers each native resolution at the server its hash picks only
        (301 elsewhere, as the reference), so ``rest_url`` serves every handle of the prefix
        natively with one server per site (the default). Every site serves a copy of
        ``0.NA/PREFIX``: the admin identity (``admin_identity``, ``admin_secret``) and the
        admin group ``200:0.NA/PREFIX`` that pyhandle's default HS_ADMIN names (an HS_VLIST
        listing the identity)."""
    @property
    def root(self) -> str: ...
    @property
    def prefix(self) -> str: ...
    @property
    def admin_identity(self) -> str: ...
    @property
    def admin_secret(self) -> str: ...
    @property
    def servers(self) -> list[str]: ...
    @property
    def rest_url(self) -> str | None:
        """With ``http``: the first server's HTTP side (``http://127.0.0.1:PORT``), for
        ``Resolver(server=...)``, ``RestAdmin`` and the pyhandle drop-in; ``None``
        without."""
    def server_for(self, handle: str) -> str | None: ...
    def insert(self, handle: str, values: Iterable[ValueLike]) -> None: ...
    def add_identity(
        self, identity: str, *, secret: str | None = None, key_file: StrPath | None = None
    ) -> None:
        """Makes ``identity`` (``"INDEX:HANDLE"``) an administrator of the prefix: its
        handle (served by every site, whatever its prefix) gets an HS_SECKEY value holding
        ``secret`` (not public) or an HS_PUBKEY value with the public key of ``key_file``,
        and the prefix handle an HS_ADMIN value naming it. As on the reference server, a
        prefix's administrators may create handles and list them; to change a handle
        afterwards, give it an HS_ADMIN value naming them."""
    @staticmethod
    def client_certificate(identity: str, passphrase: str | None = None) -> tuple[str, str]:
        """``(key_pem, certificate_pem)``: an RSA key (encrypted PKCS#8 with ``passphrase``)
        and a self-signed certificate for it whose subject's UID is ``identity``."""
    def add_urn(self, urn: str, urls: list[str]) -> None: ...
    def populate(self, count: int) -> None: ...
    def remove(self, handle: str) -> bool: ...
    def handles(self) -> int: ...
    def set_faults(
        self,
        *,
        silent: bool = False,
        delay: float = 0.0,
        drop_ratio: float = 0.0,
        garbage: bool = False,
        block_udp: bool = False,
        block_tcp: bool = False,
        sites_only: bool = False,
    ) -> None: ...
    def requests(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...

def _record_from_state(state: dict[str, Any]) -> HandleRecord: ...
def _bench_rust_resolve_many(
    server: str, ids: list[str], concurrency: int
) -> tuple[float, int]: ...
def _bench_rust_resolve(server: str, ids: list[str]) -> tuple[float, int]: ...

class _RustBaseline:
    def __init__(self, server: str, cache: bool = False) -> None: ...
    def resolve_each(self, ids: list[str]) -> tuple[float, int]: ...
