"""handle_resolver: a native client for the Handle System (RFC 3650-3652): handles, DOIs,
CORDRA ids and URNs, resolved over the native protocol (UDP, TCP, HTTP) from the global
root down to the right server, concurrently, with challenges answered for non-public values
and administration.

    >>> from handle_resolver import Resolver
    >>> r = Resolver()  # the global root; or root="HOST:PORT", server=..., proxy=...
    >>> record = r.resolve("10.1045/april2006-paskin")       # doctest: +SKIP
    >>> record.url                                            # doctest: +SKIP

``Resolver`` blocks (without the GIL; Ctrl-C interrupts it), ``AsyncResolver`` is for
asyncio; both have ``resolve``, ``resolve_many`` (lazy input, completion order),
``resolve_urn`` and ``admin``. Failures are ``ResolveError`` subclasses with the
``response_code`` that ``resolve --json`` prints. ``handle_resolver.testing.TestNetwork`` is
a loopback Handle System for tests.
"""

from __future__ import annotations

from ._errors import (
    AdminAuthenticationFailed,
    AdminAuthenticationNeeded,
    AdminError,
    AdminRefused,
    AuthenticationFailed,
    AuthenticationNeeded,
    HandleAlreadyExists,
    HandleDoesNotExist,
    HandleNotFound,
    InvalidIdentifier,
    NetworkError,
    NoMatchingValues,
    NoSuchValues,
    NotPermitted,
    PrefixNotServed,
    ProtocolError,
    ReferralError,
    ResolveError,
    ServerError,
    SignatureError,
    Timeout,
    UnknownPrefix,
    UrnError,
    UrnNotFound,
    ValueAlreadyExists,
)
from ._native import (
    Admin,
    AsyncAdmin,
    AsyncResolveMany,
    AsyncResolver,
    BatchReport,
    BatchResult,
    HandleRecord,
    HandleValue,
    Identifier,
    ResolveMany,
    Resolver,
    RestAdmin,
    __version__,
    parse,
)

__all__ = [
    "Admin",
    "AdminAuthenticationFailed",
    "AdminAuthenticationNeeded",
    "AdminError",
    "AdminRefused",
    "AsyncAdmin",
    "AsyncResolveMany",
    "AsyncResolver",
    "AuthenticationFailed",
    "AuthenticationNeeded",
    "BatchReport",
    "BatchResult",
    "HandleAlreadyExists",
    "HandleDoesNotExist",
    "HandleNotFound",
    "HandleRecord",
    "HandleValue",
    "Identifier",
    "InvalidIdentifier",
    "NetworkError",
    "NoMatchingValues",
    "NoSuchValues",
    "NotPermitted",
    "PrefixNotServed",
    "ProtocolError",
    "ReferralError",
    "ResolveError",
    "ResolveMany",
    "Resolver",
    "RestAdmin",
    "ServerError",
    "SignatureError",
    "Timeout",
    "UnknownPrefix",
    "UrnError",
    "UrnNotFound",
    "ValueAlreadyExists",
    "__version__",
    "parse",
]
