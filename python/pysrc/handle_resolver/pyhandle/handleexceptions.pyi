from typing import Any

class _Request:
    url: str

class Response:
    status_code: int
    content: bytes
    request: _Request
    def __init__(self, status_code: int, content: bytes, url: str) -> None: ...

class PyhandleBaseException(Exception):
    msg: str
    custom_message: str | None
    def __init__(self, **args: Any) -> None: ...

class BrokenHandleRecordException(PyhandleBaseException):
    handle: str | None

class IllegalOperationException(PyhandleBaseException):
    handle: str | None
    operation: str | None

class GenericHandleError(PyhandleBaseException):
    handle: str | None
    response: Response | None
    payload: str | None
    operation: str | None

class ReverseLookupException(PyhandleBaseException):
    query: str | None
    response: Response | None

class HandleNotFoundException(PyhandleBaseException):
    handle: str | None
    response: Response | None

class HandleSyntaxError(PyhandleBaseException):
    handle: str | None
    expected_syntax: str | None

class HandleAlreadyExistsException(PyhandleBaseException):
    handle: str | None

class HandleAuthenticationError(PyhandleBaseException):
    handle: str | None
    operation: str | None
    response: Response | None
    username: str | None

class CredentialsFormatError(PyhandleBaseException): ...
