"""b2handle's 10320/LOC rules (``b2handle/handleclient.py``), which pyhandle 1.5.0's tests
still call: a ``<locations>`` element of ``<location id=".." href=".."/>`` children, read from
the record's 10320/LOC entries and changed one URL at a time."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from typing import Any

from ..handleexceptions import BrokenHandleRecordException

LOC = "10320/LOC"


def _root(entry: dict[str, Any]) -> ET.Element:
    data = entry["data"]
    value = data["value"] if isinstance(data, dict) else data
    return ET.fromstring(value if isinstance(value, str) else str(value))


def _hrefs(entries: list[dict[str, Any]]) -> list[str | None]:
    """The ``href`` of each direct ``<location>`` child of every 10320/LOC entry."""
    return [
        location.get("href")
        for entry in entries
        if entry["type"] == LOC
        for location in _root(entry).findall("location")
    ]


def is_empty(entries: list[dict[str, Any]]) -> bool:
    """True when no 10320/LOC entry lists a location with an ``href``."""
    return not any(href is not None for href in _hrefs(entries))


def contains(entries: list[dict[str, Any]], url: str) -> bool:
    """True when a location of a 10320/LOC entry has ``href`` ``url``."""
    return url in _hrefs(entries)


def the_entry(entries: list[dict[str, Any]], handle: str) -> dict[str, Any] | None:
    """The record's one 10320/LOC entry (a copy), ``None`` without one;
    ``BrokenHandleRecordException`` when there are several."""
    found = [entry for entry in entries if entry["type"] == LOC]
    if len(found) > 1:
        raise BrokenHandleRecordException(
            handle=handle, msg=f"There is {len(found)} 10320/LOC entries."
        )
    return copy.deepcopy(found[0]) if found else None


def _set(entry: dict[str, Any], root: ET.Element) -> dict[str, Any]:
    text = ET.tostring(root, encoding="unicode")
    if isinstance(entry["data"], dict):
        entry["data"] = dict(entry["data"], value=text)
    else:
        entry["data"] = text
    entry.pop("timestamp", None)
    return entry


def new_locations(chooseby: str | None) -> ET.Element:
    root = ET.Element("locations")
    if chooseby is not None:
        root.set("chooseby", chooseby)
    return root


def add_urls(
    entry: dict[str, Any] | None,
    urls: list[str],
    new_index: int,
    chooseby: str | None = None,
    **attributes: Any,
) -> dict[str, Any]:
    """The 10320/LOC entry with each URL of ``urls`` it lacks added as a location of the
    first free ``id`` (an entry at ``new_index`` made when there is none). ``attributes``
    (``weight``: a number, outside 0..1 taken as 1; ``http_role``; any other) are set on the
    locations added."""
    if entry is None:
        entry = {"index": new_index, "type": LOC, "data": "add_later"}
        root = new_locations(chooseby)
    else:
        root = _root(entry)
    for url in urls:
        locations = root.findall("location")
        if any(location.get("href") == url for location in locations):
            continue
        ids = sorted(int(i) for loc in locations if (i := loc.get("id")) is not None)
        next_id = 0
        for existing in ids:
            if next_id == existing:
                next_id += 1
        location = ET.SubElement(root, "location")
        location.set("id", str(next_id))
        location.set("href", url)
        _set_attributes(location, **attributes)
    return _set(entry, root)


def _set_attributes(
    location: ET.Element, weight: Any = None, http_role: Any = None, **others: Any
) -> None:
    if weight is not None:
        w = float(weight)
        location.set("weight", str(w if 0 <= w <= 1 else 1))
    if http_role is not None:
        location.set("http_role", str(http_role))
    for key, value in others.items():
        location.set(key, str(value))


def remove_urls(entry: dict[str, Any], urls: tuple[str, ...]) -> dict[str, Any] | None:
    """The entry without the locations of ``urls``; ``None`` when none is left (b2handle
    then drops the entry)."""
    root = _root(entry)
    for url in urls:
        for location in root.findall("location"):
            if location.get("href") == url:
                root.remove(location)
    if not root.findall("location"):
        return None
    return _set(entry, root)


def exchange_url(entry: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """The entry with every ``href`` ``old`` set to ``new`` (ids and other attributes
    kept)."""
    root = _root(entry)
    for location in root.findall("location"):
        if location.get("href") == old:
            location.set("href", new)
    return _set(entry, root)
