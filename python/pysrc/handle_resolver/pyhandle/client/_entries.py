"""The record entries pyhandle 1.5.0 writes (the REST API's JSON shape), its handle syntax
checks and its choice of indexes, and their translation into what :class:`Admin` takes."""

from __future__ import annotations

from typing import Any

from ..handleexceptions import HandleSyntaxError, IllegalOperationException

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
        check_handle_syntax_with_index(handle, base_already_checked=True)
    return True


def check_handle_syntax_with_index(value: Any, base_already_checked: bool = False) -> bool:
    """pyhandle's check of a value reference ``index:prefix/suffix``, else
    ``HandleSyntaxError``."""
    expected = "index:prefix/suffix"
    if not isinstance(value, str):
        raise HandleSyntaxError(msg="The provided handle is None.", expected_syntax=expected)
    parts = value.split(":")
    if len(parts) > 2:
        raise HandleSyntaxError(msg="Too many colons", handle=value, expected_syntax=expected)
    if len(parts) < 2:
        raise HandleSyntaxError(msg="No colon", handle=value, expected_syntax=expected)
    try:
        int(parts[0])
    except ValueError:
        raise HandleSyntaxError(
            msg="Index is not an integer", handle=value, expected_syntax=expected
        ) from None
    if not base_already_checked:
        check_handle_syntax(value)
    return True


def strip_scheme(handle: str) -> str:
    for scheme in ("hdl:", "doi:"):
        if handle.startswith(scheme):
            return handle[len(scheme) :]
    return handle


def resolver_arguments(url: str | None) -> dict[str, Any]:
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


def another_index(entries: list[dict[str, Any]], url: bool = False, hs_admin: bool = False) -> int:
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


def make_entry(key: str, data: Any, index: int, ttl: int | None = None) -> dict[str, Any]:
    """An entry of any type but HS_ADMIN."""
    if key == "HS_ADMIN":
        raise IllegalOperationException(
            operation="creating HS_ADMIN entry",
            msg="This method can not create HS_ADMIN entries.",
        )
    entry: dict[str, Any] = {"index": index, "type": key, "data": data}
    if ttl is not None:
        entry["ttl"] = ttl
    return entry


def admin_entry(
    handleowner: str | None, permissions: str, index: int, handle: str
) -> dict[str, Any]:
    """pyhandle's HS_ADMIN value: ``handleowner`` (``index:handle``), else
    ``200:0.NA/PREFIX`` of the handle."""
    if handleowner is None:
        owner_index, owner = 200, "0.NA/" + strip_scheme(handle).split("/")[0]
    else:
        parts = handleowner.split(":")
        if len(parts) > 2:
            raise HandleSyntaxError(
                msg="Too many colons", handle=handleowner, expected_syntax="index:prefix/suffix"
            )
        owner_index = int(parts[0]) if len(parts) == 2 else 200
        owner = parts[-1]
    value = {"index": owner_index, "handle": owner, "permissions": permissions}
    return {"index": index, "type": "HS_ADMIN", "data": {"format": "admin", "value": value}}


def native_entry(entry: dict[str, Any]) -> dict[str, Any]:
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
