"""pyhandle's ``PIDClientCredentials``: the arguments of a client, from keywords or from a
JSON credentials file (``load_from_JSON``)."""

from __future__ import annotations

import json
import os
from typing import Any

from .handleexceptions import CredentialsFormatError, HandleSyntaxError

_KNOWN = (
    "client",
    "handle_server_url",
    "username",
    "password",
    "private_key",
    "certificate_only",
    "certificate_and_key",
    "prefix",
    "handleowner",
    "reverselookup_password",
    "reverselookup_username",
    "reverselookup_baseuri",
    "credentials_filename",
    "db_host",
    "db_user",
    "db_password",
    "db_name",
    "passphrase",
)


def check_username_syntax(username: str) -> None:
    """``INDEX:PREFIX/SUFFIX`` or raise ``HandleSyntaxError``."""
    index, sep, handle = username.partition(":")
    if not sep or not index.isdigit() or "/" not in handle or handle.startswith("/"):
        raise HandleSyntaxError(
            msg="The username is not a handle value reference",
            handle=username,
            expected_syntax="index:prefix/suffix",
        )


class PIDClientCredentials:
    """The credentials (and further configuration) of a client."""

    @staticmethod
    def load_from_JSON(json_filename: str) -> PIDClientCredentials:  # noqa: N802 (pyhandle's name)
        """Reads a credentials file: a JSON object of the keyword arguments (every key that
        is not a credential is kept as configuration, ``get_config``)."""
        try:
            with open(json_filename, encoding="utf-8") as f:
                content = json.load(f)
        except ValueError as exc:
            raise CredentialsFormatError(msg=f"Invalid JSON syntax: {exc}") from exc
        if not isinstance(content, dict):
            raise CredentialsFormatError(msg="The credentials file is not a JSON object")
        return PIDClientCredentials(credentials_filename=json_filename, **content)

    def __init__(self, **args: Any) -> None:
        for name in _KNOWN:
            args.setdefault(name, None)
        self.__all_args: dict[str, Any] = args
        self.__config = {k: v for k, v in args.items() if k not in _KNOWN} or None
        username = args["username"]
        if username is not None:
            check_username_syntax(username)
        if username is not None and args["password"] is None and args["private_key"] is None:
            if args["certificate_and_key"] is None:
                raise CredentialsFormatError(
                    msg="username needs a password, a private_key or certificate_and_key"
                )
        base = os.path.dirname(args["credentials_filename"] or "")
        for key in ("private_key", "certificate_only", "certificate_and_key"):
            path = args[key]
            if path is not None and not os.path.isabs(path):
                path = os.path.join(base, path)
            if path is not None and not os.path.exists(path):
                raise CredentialsFormatError(msg=f"The {key} file {path} does not exist")
            args[key] = path

    def get_all_args(self) -> dict[str, Any]:
        return self.__all_args

    def get_client(self) -> str | None:
        return self.__all_args["client"]  # type: ignore[no-any-return]

    def get_username(self) -> str | None:
        return self.__all_args["username"]  # type: ignore[no-any-return]

    def get_password(self) -> str | None:
        return self.__all_args["password"]  # type: ignore[no-any-return]

    def get_server_URL(self) -> str | None:  # noqa: N802
        return self.__all_args["handle_server_url"]  # type: ignore[no-any-return]

    def get_prefix(self) -> str | None:
        return self.__all_args["prefix"]  # type: ignore[no-any-return]

    def get_handleowner(self) -> str | None:
        return self.__all_args["handleowner"]  # type: ignore[no-any-return]

    def get_config(self) -> dict[str, Any] | None:
        return self.__config

    def get_path_to_private_key(self) -> str | None:
        return self.__all_args["private_key"]  # type: ignore[no-any-return]

    def get_path_to_file_certificate(self) -> str | None:
        a = self.__all_args
        return a["certificate_only"] or a["certificate_and_key"]  # type: ignore[no-any-return]

    def get_path_to_file_certificate_only(self) -> str | None:
        return self.__all_args["certificate_only"]  # type: ignore[no-any-return]

    def get_path_to_file_certificate_and_key(self) -> str | None:
        return self.__all_args["certificate_and_key"]  # type: ignore[no-any-return]

    def get_reverselookup_username(self) -> str | None:
        return self.__all_args["reverselookup_username"]  # type: ignore[no-any-return]

    def get_reverselookup_password(self) -> str | None:
        return self.__all_args["reverselookup_password"]  # type: ignore[no-any-return]

    def get_reverselookup_baseuri(self) -> str | None:
        return self.__all_args["reverselookup_baseuri"]  # type: ignore[no-any-return]

    def get_key_passphrase(self) -> str | None:
        return self.__all_args["passphrase"]  # type: ignore[no-any-return]
