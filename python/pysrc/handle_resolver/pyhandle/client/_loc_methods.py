"""b2handle's 10320/LOC helpers of the drop-in's ``RESTHandleClient`` (a base class of it):
reading and changing the locations of a record's 10320/LOC value."""

from __future__ import annotations

from typing import Any

from ..handleexceptions import HandleNotFoundException
from . import _locations as loc
from ._entries import another_index


class LocMethods:
    """The 10320/LOC methods; the client gives the record reads and the write."""

    _loc_chooseby: str | None = None

    def retrieve_handle_record_json(
        self, handle: str, auth: bool = False, indices: Any = None, **hs_options: Any
    ) -> dict[str, Any] | None:
        raise NotImplementedError

    def _record_if_necessary(
        self,
        handle: str,
        handlerecord_json: dict[str, Any] | None,
        auth: bool,
        indices: Any,
        **hs_options: Any,
    ) -> dict[str, Any] | None:
        raise NotImplementedError

    def _put_loc(
        self,
        handle: str,
        op: str,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> None:
        raise NotImplementedError

    def _existing(self, handle: str, msg: str) -> dict[str, Any]:
        doc = self.retrieve_handle_record_json(handle)
        if doc is None:
            raise HandleNotFoundException(handle=handle, msg=msg)
        return doc

    def is_10320LOC_empty(  # noqa: N802
        self, handle: str, handlerecord_json: dict[str, Any] | None = None
    ) -> bool:
        """True when no 10320/LOC value lists a location with an ``href``
        (``HandleNotFoundException`` when the handle does not exist)."""
        doc = self._record_if_necessary(handle, handlerecord_json, False, None)
        if doc is None:
            raise HandleNotFoundException(handle=handle)
        return loc.is_empty(doc["values"])

    def is_URL_contained_in_10320LOC(  # noqa: N802
        self, handle: str, url: str, handlerecord_json: dict[str, Any] | None = None
    ) -> bool:
        """True when a location of the record's 10320/LOC values has ``href`` ``url``."""
        doc = self._record_if_necessary(handle, handlerecord_json, False, None)
        if doc is None:
            raise HandleNotFoundException(handle=handle)
        return loc.contains(doc["values"], url)

    def add_additional_URL(self, handle: str, *urls: str, **attributes: Any) -> None:  # noqa: N802
        """Adds each URL the record's 10320/LOC value lacks as a location (the value is made
        when there is none); nothing when every URL is there already. ``attributes``
        (``weight``, ``http_role``, others) are set on the locations added."""
        doc = self._existing(handle, "Cannot add URLS to unexisting handle!")
        entries: list[dict[str, Any]] = doc["values"]
        if all(loc.contains(entries, url) for url in urls):
            return
        before = loc.the_entry(entries, handle)
        after = loc.add_urls(
            before, list(urls), another_index(entries), self._loc_chooseby, **attributes
        )
        self._put_loc(handle, "adding URLs", before, after)

    def remove_additional_URL(self, handle: str, *urls: str) -> None:  # noqa: N802
        """Removes the locations of ``urls`` from the record's 10320/LOC value (the value
        goes when no location is left)."""
        doc = self._existing(handle, "Cannot remove URLs from unexisting handle")
        before = loc.the_entry(doc["values"], handle)
        if before is None:
            return
        self._put_loc(handle, "removing URLs", before, loc.remove_urls(before, urls))

    def exchange_additional_URL(self, handle: str, old: str, new: str) -> None:  # noqa: N802
        """Sets the ``href`` of the locations of ``old`` to ``new``, ids and other
        attributes kept; nothing when ``old`` is not there."""
        doc = self._existing(handle, "Cannot exchange URLs in unexisting handle")
        if not loc.contains(doc["values"], old):
            return
        before = loc.the_entry(doc["values"], handle)
        if before is not None:
            self._put_loc(handle, "exchanging URLs", before, loc.exchange_url(before, old, new))
