"""The library's failures as the text of pyhandle's exceptions, each thing said once: those
exceptions name the handle on a line of their own (``Handle: ...``), so the library's
message loses its leading ``HANDLE: ``; the response code is added only where the message
does not give it already."""

from __future__ import annotations

from ... import ResolveError


def detail(e: ResolveError) -> str:
    """``e``'s message for a pyhandle exception that names ``e``'s handle itself.

    >>> from handle_resolver import PrefixNotServed, Timeout
    >>> detail(PrefixNotServed("99.9/x: prefix not served (301)", handle="99.9/x"))
    'prefix not served (301)'
    >>> detail(Timeout("no answer within 5 s", handle="99.9/x"))
    'no answer within 5 s (2)'
    """
    text = e.message
    if e.handle and text.startswith(f"{e.handle}: "):
        text = text[len(e.handle) + 2 :]
    code = f"({e.response_code})"
    return text if code in text else f"{text} {code}"
