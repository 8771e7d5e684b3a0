"""A loopback Handle System for tests: ``TestNetwork()`` starts, in this process, a root
server and a service of several sites on 127.0.0.1 (the library's ``testing`` module).

    >>> from handle_resolver import Resolver
    >>> from handle_resolver.testing import TestNetwork
    >>> with TestNetwork() as net:
    ...     Resolver(root=net.root).resolve("20.500.1/demo").url
    'https://example.org/demo'
"""

from __future__ import annotations

from ._native import TestNetwork

__all__ = ["TestNetwork"]
