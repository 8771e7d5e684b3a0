"""pyhandle's ``PyHandleClient`` factory: ``PyHandleClient('rest', ...)`` gives the native
``RESTHandleClient``; the ``db`` and ``batch`` clients are not part of the drop-in."""

from __future__ import annotations

from typing import Any

from .client.resthandleclient import RESTHandleClient


class PyHandleClient:
    """``PyHandleClient('rest')`` and its factory methods, as pyhandle's."""

    def __init__(
        self, client: str, credentials: Any = None, batch_file_path: str | None = None
    ) -> None:
        if client not in ("rest", "db", "batch"):
            raise ValueError("Allowed clients: 'rest', 'db' or 'batch'")
        if client != "rest":
            raise NotImplementedError(
                f"the {client!r} client of pyhandle is not part of handle_resolver's drop-in"
            )
        self.client = client
        self.credentials = credentials
        self.batch_file_path = batch_file_path
        self.handle_client = RESTHandleClient()

    def instantiate_for_read_access(self, **config: Any) -> RESTHandleClient:
        return RESTHandleClient.instantiate_for_read_access(**config)

    def instantiate_with_credentials(self, credentials: Any, **config: Any) -> RESTHandleClient:
        return RESTHandleClient.instantiate_with_credentials(credentials, **config)

    def instantiate_with_username_and_password(
        self, handle_server_url: str, username: str, password: str, **config: Any
    ) -> RESTHandleClient:
        return RESTHandleClient.instantiate_with_username_and_password(
            handle_server_url, username, password, **config
        )

    def instantiate_for_read_and_search(
        self,
        handle_server_url: str | None,
        reverselookup_username: str,
        reverselookup_password: str,
        **config: Any,
    ) -> RESTHandleClient:
        return RESTHandleClient.instantiate_for_read_and_search(
            handle_server_url, reverselookup_username, reverselookup_password, **config
        )
