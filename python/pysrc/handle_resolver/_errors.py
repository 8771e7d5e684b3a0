"""The exceptions of handle_resolver: one class per outcome, each with the ``response_code``
that ``resolve --json`` prints for it (the handle.net REST API's ``responseCode``) and, where
one was involved, the server and transport."""

from __future__ import annotations

from typing import Any


class ResolveError(Exception):
    """A resolution that gave no values, and why.

    ``response_code`` is the REST API's code for the outcome (100 not found, 200 no matching
    values, 301, 402, the server's own code, 2 for failures without one); ``handle`` the
    handle asked for; ``server`` (``"HOST:PORT"``) and ``transport`` (``"udp"``, ``"tcp"``,
    ``"http"``, ...) where a server was involved; ``attempts`` every request sent, as
    ``HandleRecord.attempts``.
    """

    default_code = 2

    def __init__(
        self,
        message: str,
        *,
        response_code: int | None = None,
        handle: str | None = None,
        server: str | None = None,
        transport: str | None = None,
        attempts: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.response_code = self.default_code if response_code is None else response_code
        self.handle = handle
        self.server = server
        self.transport = transport
        self.attempts = list(attempts or [])

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword arguments survive pickling (Dask ships failures between processes).
        return (
            _rebuild,
            (
                type(self),
                self.message,
                {
                    "response_code": self.response_code,
                    "handle": self.handle,
                    "server": self.server,
                    "transport": self.transport,
                    "attempts": self.attempts,
                },
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """The failure as ``resolve --json`` prints it: ``responseCode``, ``handle``,
        ``message``."""
        doc: dict[str, Any] = {"responseCode": self.response_code, "message": self.message}
        if self.handle is not None:
            doc["handle"] = self.handle
        return doc


def _rebuild(cls: type[ResolveError], message: str, kwargs: dict[str, Any]) -> ResolveError:
    return cls(message, **kwargs)


class HandleNotFound(ResolveError):
    """100: the handle does not exist."""

    default_code = 100


class UnknownPrefix(HandleNotFound):
    """100: the prefix has no service information (its prefix handle is not found or holds
    no HS_SITE / HS_SERV values)."""


class NoMatchingValues(ResolveError):
    """200: the handle exists, but no value matches the type / index filter (or none is
    public)."""

    default_code = 200


class PrefixNotServed(ResolveError):
    """301: no site of the responsible service serves the prefix."""

    default_code = 301


class AuthenticationNeeded(ResolveError):
    """402: the values asked for need authentication and the resolver has no identity."""

    default_code = 402


class AuthenticationFailed(ResolveError):
    """The server refused the identity (400, 401, 403, 404: ``response_code`` is the
    server's), or its challenge could not be answered (2)."""


class ServerError(ResolveError):
    """A server answered another error code (2 ERROR, 3 SERVER_TOO_BUSY, ...):
    ``response_code`` is the server's."""


class Timeout(ResolveError, TimeoutError):
    """No answer within the resolver's deadline."""


class NetworkError(ResolveError):
    """Every server tried failed at the transport level (refused, reset, unreachable), a
    handle proxy could not be asked, or a server is not answering at all lately."""


class ProtocolError(ResolveError):
    """A server answered something that is not an acceptable response."""


class SignatureError(ResolveError):
    """A certified answer (or the root's trust chain) failed verification."""


class ReferralError(ResolveError):
    """A referral or alias loop, an alias that is not a handle, or too many hops."""


class InvalidIdentifier(ResolveError, ValueError):
    """The identifier does not parse (nothing was sent)."""


class UrnError(ResolveError):
    """An RFC 2169 URN resolution failed (``response_code`` 100 when the resolver does not
    know the URN, 2 otherwise)."""


class UrnNotFound(UrnError):
    """100: the URN resolver does not know the URN."""

    default_code = 100


class AdminError(ResolveError):
    """An administration request the server refused (failures without an answer are the
    other ``ResolveError`` classes: ``Timeout``, ``NetworkError``, ...)."""


class HandleAlreadyExists(AdminError):
    """101: the handle to create exists already."""

    default_code = 101


class HandleDoesNotExist(AdminError):
    """100: the handle to change or delete does not exist."""

    default_code = 100


class ValueAlreadyExists(AdminError):
    """201: a value exists at one of the indexes given."""

    default_code = 201


class NoSuchValues(AdminError):
    """200: none of the values named exist."""

    default_code = 200


class NotPermitted(AdminError):
    """400 INVALID_ADMIN or 401 INSUFFICIENT_PERMISSIONS: the identity may not do this."""

    default_code = 401


class AdminAuthenticationFailed(AdminError):
    """403 or 404: the server did not accept the identity's answer to its challenge."""

    default_code = 403


class AdminAuthenticationNeeded(AdminError):
    """402: the server asks for authentication and the resolver has no identity."""

    default_code = 402


class AdminRefused(AdminError):
    """Any other code from the server (``response_code``)."""


__all__ = [
    "AdminAuthenticationFailed",
    "AdminAuthenticationNeeded",
    "AdminError",
    "AdminRefused",
    "AuthenticationFailed",
    "AuthenticationNeeded",
    "HandleAlreadyExists",
    "HandleDoesNotExist",
    "HandleNotFound",
    "InvalidIdentifier",
    "NetworkError",
    "NoMatchingValues",
    "NoSuchValues",
    "NotPermitted",
    "PrefixNotServed",
    "ProtocolError",
    "ReferralError",
    "ResolveError",
    "ServerError",
    "SignatureError",
    "Timeout",
    "UnknownPrefix",
    "UrnError",
    "UrnNotFound",
    "ValueAlreadyExists",
]
