"""pyhandle's factory methods of ``RESTHandleClient`` (a base class of the drop-in's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Self


class Factories:
    """``instantiate_*`` and ``check_client``, as pyhandle has them."""

    HANDLE_CLIENT = "rest"

    def __init__(self, handle_server_url: str | None = None, **args: Any) -> None:
        raise NotImplementedError

    @classmethod
    def instantiate_for_read_access(
        cls, handle_server_url: str | None = None, **config: Any
    ) -> Self:
        return cls(handle_server_url, **config)

    @classmethod
    def instantiate_for_read_and_search(
        cls,
        handle_server_url: str | None,
        reverselookup_username: str,
        reverselookup_password: str,
        **config: Any,
    ) -> Self:
        if handle_server_url is None and "reverselookup_baseuri" not in config:
            raise TypeError(
                'You must specify either "handle_server_url" or "reverselookup_baseuri".'
                " Searching not possible without the URL of a search servlet."
            )
        return cls(
            handle_server_url,
            reverselookup_username=reverselookup_username,
            reverselookup_password=reverselookup_password,
            **config,
        )

    @classmethod
    def instantiate_with_username_and_password(
        cls, handle_server_url: str, username: str, password: str, **config: Any
    ) -> Self:
        return cls(handle_server_url, username=username, password=password, **config)

    @classmethod
    def instantiate_with_credentials(cls, credentials: Any, **config: Any) -> Self:
        """``credentials``: ours or pyhandle's ``PIDClientCredentials`` (anything with
        ``get_all_args()``)."""
        args = dict(credentials.get_all_args())
        args.update(config)
        return cls(**args)

    @classmethod
    def check_client(cls, client: str) -> bool:
        return client == cls.HANDLE_CLIENT
