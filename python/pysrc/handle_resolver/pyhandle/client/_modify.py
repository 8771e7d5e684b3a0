"""What pyhandle 1.5.0's value modifications change: the entries of existing keys to
replace and the entries of new keys to add, with pyhandle's indexes."""

from __future__ import annotations

from typing import Any

from ..handleexceptions import BrokenHandleRecordException
from ._entries import another_index, make_entry


def modification_plan(
    handle: str,
    existing: list[dict[str, Any]],
    kvpairs: dict[str, Any],
    ttl: int | None,
    add_if_not_exist: bool,
    hs_admin_permissions: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(changed, added)``: an existing key's entry with its new data (an HS_ADMIN value's
    permissions set to ``hs_admin_permissions``), a missing key's new entry when
    ``add_if_not_exist``. A key the record holds more than once is
    ``BrokenHandleRecordException``."""
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
                value["permissions"] = hs_admin_permissions
                entry["data"] = {"format": "admin", "value": value}
            else:
                entry["data"] = newval
            changed.append(entry)
        elif add_if_not_exist:
            entry = make_entry(key, newval, another_index(every), ttl)
            added.append(entry)
            every.append(entry)
    return changed, added
