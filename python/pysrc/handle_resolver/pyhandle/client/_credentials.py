"""pyhandle's client-certificate credentials (``certificate_and_key``, or
``certificate_only`` with ``private_key``), used as the reference's HS_PUBKEY authentication:
the private key answers the server's challenges (PEM, also passphrase-encrypted with
``passphrase``, or the reference's key file), as the identity ``username`` or else the one
the certificate names (its subject's UID, else CN, else O: ``300:PREFIX/USER``), as a handle
server reads a client certificate's identity."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..._native import certificate_identity
from ..handleexceptions import CredentialsFormatError
from ._entries import check_handle_syntax_with_index


@dataclass(frozen=True)
class KeyCredentials:
    """The private key file, its passphrase and the identity it answers as."""

    key_file: str
    identity: str
    passphrase: str | None

    @staticmethod
    def from_args(args: dict[str, Any]) -> KeyCredentials | None:
        """The key credentials of a client's arguments; ``None`` without a key.
        ``CredentialsFormatError`` for a missing file or no identity."""
        both = args.get("certificate_and_key")
        cert_only = args.get("certificate_only")
        key = args.get("private_key")
        if both is None and key is None:
            return None
        missing = [
            f"The {name} file was not found at the specified path: {path}"
            for name, path in (("certificate", both or cert_only), ("private key", key))
            if path is not None and not os.path.isfile(path)
        ]
        if missing:
            raise CredentialsFormatError(msg="\n".join(missing))
        key_file = key if key is not None else both
        assert key_file is not None
        identity = args.get("username")
        if identity is None:
            identity = _identity_of(both or cert_only)
        check_handle_syntax_with_index(identity)
        return KeyCredentials(str(key_file), str(identity), args.get("passphrase"))

    def admin_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``Resolver.admin`` for this key."""
        return {
            "identity": self.identity,
            "key_file": self.key_file,
            "key_passphrase": self.passphrase,
        }


def _identity_of(certificate: Any) -> str:
    if certificate is None:
        raise CredentialsFormatError(
            msg="A private key without a username needs a certificate that names the "
            "identity (its subject's UID, e.g. 300:PREFIX/USER)"
        )
    try:
        with open(certificate, "rb") as f:
            found = certificate_identity(f.read())
    except (OSError, ValueError) as e:  # unreadable, or no certificate in it
        raise CredentialsFormatError(msg=f"The certificate {certificate}: {e}") from e
    if found is None or ":" not in found:
        raise CredentialsFormatError(
            msg=f"The certificate {certificate} names no identity INDEX:HANDLE in its "
            "subject (UID, CN or O): give username as well"
        )
    return found
