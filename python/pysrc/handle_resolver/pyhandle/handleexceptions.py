"""pyhandle's exceptions, by name and attributes (the types are in ``handleexceptions.pyi``).

Where pyhandle is installed, each class also subclasses pyhandle's class of the same name, so
that ``except pyhandle.handleexceptions.X`` clauses catch ours. pyhandle's own ``__init__``
is never called (it calls ``super(self.__class__, ...)``, which loops in subclasses).
"""

from __future__ import annotations

from typing import Any

try:  # pragma: no cover - depends on the environment
    from pyhandle import handleexceptions as _upstream_module
except ImportError:  # pragma: no cover
    _upstream_module = None


def _upstream(name: str) -> tuple[type, ...]:
    if _upstream_module is None:
        return ()
    cls = getattr(_upstream_module, name, None)
    return (cls,) if isinstance(cls, type) else ()


class _Request:
    def __init__(self, url: str) -> None:
        self.url = url


class Response:
    """What stands for pyhandle's ``requests`` response: ``status_code``, ``content``
    (bytes) and ``request.url``."""

    def __init__(self, status_code: int, content: bytes, url: str) -> None:
        self.status_code = status_code
        self.content = content
        self.request = _Request(url)

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"


class PyhandleBaseException(*_upstream("PyhandleBaseException"), Exception):  # type: ignore[misc]
    _default_msg = "Handle System error"
    _fields: tuple[str, ...] = ("msg",)

    def __init__(self, **args: Any) -> None:
        for name in self._fields:
            if name != "msg":
                setattr(self, name, args.get(name))
        # pyhandle's GenericHandleError is sometimes given `op=` or `custom_message=`.
        if "operation" in self._fields and self.operation is None:  # type: ignore[attr-defined]
            self.operation = args.get("op")
        self.custom_message = args.get("msg", args.get("custom_message"))
        self.msg = self._message()
        Exception.__init__(self, self.msg)

    def _message(self) -> str:
        msg = self._default_msg
        handle = getattr(self, "handle", None)
        operation = getattr(self, "operation", None)
        if operation is not None:
            msg += f" ({operation})"
        if self.custom_message is not None:
            msg += f": {self.custom_message}"
        # One full stop, also after a message that ends with its own.
        if not msg.endswith("."):
            msg += "."
        if handle is not None:
            msg += f"\n\tHandle: {handle}"
        response = getattr(self, "response", None)
        if response is not None:
            msg += f"\n\tURL: {response.request.url}"
            msg += f"\n\tHTTP Status Code: {response.status_code}"
            msg += f"\n\tResponse: {response.content!r}"
        return msg


class BrokenHandleRecordException(PyhandleBaseException, *_upstream("BrokenHandleRecordException")):
    _default_msg = "Ill-formatted handle record"
    _fields = ("msg", "handle")


class IllegalOperationException(PyhandleBaseException, *_upstream("IllegalOperationException")):
    _default_msg = "Illegal Operation"
    _fields = ("msg", "handle", "operation")


class GenericHandleError(PyhandleBaseException, *_upstream("GenericHandleError")):
    _default_msg = "Error during interaction with Handle Server"
    _fields = ("msg", "handle", "response", "payload", "operation")


class ReverseLookupException(PyhandleBaseException, *_upstream("ReverseLookupException")):
    _default_msg = "Error during Reverse Lookup"
    _fields = ("msg", "query", "response")


class HandleNotFoundException(PyhandleBaseException, *_upstream("HandleNotFoundException")):
    _default_msg = "Handle not found on server"
    _fields = ("msg", "handle", "response")


class HandleSyntaxError(PyhandleBaseException, *_upstream("HandleSyntaxError")):
    _default_msg = "Handle does not have expected syntax"
    _fields = ("msg", "handle", "expected_syntax")


class HandleAlreadyExistsException(
    PyhandleBaseException, *_upstream("HandleAlreadyExistsException")
):
    _default_msg = "Handle already exists"
    _fields = ("msg", "handle")


class HandleAuthenticationError(PyhandleBaseException, *_upstream("HandleAuthenticationError")):
    _default_msg = "Insufficient permission"
    _fields = ("msg", "handle", "operation", "response", "username")


class CredentialsFormatError(PyhandleBaseException, *_upstream("CredentialsFormatError")):
    _default_msg = "Problem with credentials"
    _fields = ("msg",)
