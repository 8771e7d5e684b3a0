"""Every exception class, each from the outcome it stands for, with its response code and
the server and transport involved."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from conftest import owner_value

import handle_resolver as hr
from handle_resolver import HandleValue, Resolver
from handle_resolver.testing import TestNetwork


@pytest.fixture(scope="module")
def net() -> Iterator[TestNetwork]:
    # One site: what admin requests change at the primary site is what resolutions read.
    with TestNetwork(sites=1, servers_per_site=2) as network:
        network.insert("20.500.1/loop-a", [HandleValue(1, "HS_ALIAS", "20.500.1/loop-b")])
        network.insert("20.500.1/loop-b", [HandleValue(1, "HS_ALIAS", "20.500.1/loop-a")])
        yield network


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def raised(r: Resolver, ident: str, cls: type[hr.ResolveError]) -> hr.ResolveError:
    with pytest.raises(cls) as info:
        r.resolve(ident)
    return info.value


def test_hierarchy() -> None:
    for name in hr._errors.__all__:
        cls = getattr(hr, name)
        assert issubclass(cls, hr.ResolveError) and issubclass(cls, Exception)
    assert issubclass(hr.InvalidIdentifier, ValueError)
    assert issubclass(hr.Timeout, TimeoutError)
    assert issubclass(hr.UnknownPrefix, hr.HandleNotFound)
    assert issubclass(hr.HandleAlreadyExists, hr.AdminError)


def test_resolution_outcomes(net: TestNetwork) -> None:
    r = Resolver(root=net.root, timeout=5.0)
    e = raised(r, "20.500.1/nothere", hr.HandleNotFound)
    assert type(e) is hr.HandleNotFound
    assert (e.response_code, e.handle, e.transport) == (100, "20.500.1/nothere", "udp")
    assert e.server in net.servers
    assert e.attempts[-1]["responseCode"] == 100

    e = raised(r, "20.500.9/x", hr.UnknownPrefix)
    assert e.response_code == 100 and e.server == net.root

    with pytest.raises(hr.NoMatchingValues) as info:
        r.resolve("20.500.1/demo", types=["NOSUCHTYPE"])
    assert info.value.response_code == 200

    e = raised(Resolver(server=net.servers[0], timeout=5.0), "20.500.9/x", hr.PrefixNotServed)
    assert e.response_code == 301 and e.server == net.servers[0]

    e = raised(
        Resolver(root=net.root, public_only=False), "20.500.1/secret", hr.AuthenticationNeeded
    )
    assert e.response_code == 402

    wrong = Resolver(root=net.root, identity=net.admin_identity, secret="not the secret")
    e = raised(wrong, "20.500.1/secret", hr.AuthenticationFailed)
    assert e.response_code == 403 and e.server in net.servers

    right = Resolver(root=net.root, identity=net.admin_identity, secret=net.admin_secret)
    assert [v.type for v in right.resolve("20.500.1/secret")] == ["URL", "SECRET", "HS_ADMIN"]

    e = raised(Resolver(root=net.root, certify=True), "20.500.1/demo", hr.SignatureError)
    assert e.response_code == 2 and "no public key" in str(e)

    e = raised(Resolver(root=net.root, follow_aliases=True), "20.500.1/loop-a", hr.ReferralError)
    assert "alias loop" in str(e)

    e = raised(
        Resolver(server=f"127.0.0.1:{free_port()}", timeout=5.0), "20.500.1/x", hr.NetworkError
    )
    assert e.transport == "tcp" and "refused" in str(e)

    e = raised(r, "no slash here", hr.InvalidIdentifier)
    assert isinstance(e, ValueError) and e.response_code == 2 and e.attempts == []


def test_faults(net: TestNetwork) -> None:
    try:
        net.set_faults(garbage=True, sites_only=True)
        e = raised(
            Resolver(root=net.root, transport="tcp", cache=False), "20.500.1/demo", hr.NetworkError
        )
        assert "cannot decode" in str(e)
        net.set_faults(silent=True)
        e = raised(Resolver(root=net.root, timeout=0.3), "20.500.1/demo", hr.Timeout)
        assert isinstance(e, TimeoutError) and e.response_code == 2 and "0.3 s" in str(e)
    finally:
        net.set_faults()
    assert Resolver(root=net.root).resolve("20.500.1/demo").url == "https://example.org/demo"


def test_admin(net: TestNetwork) -> None:
    admin = Resolver(root=net.root, timeout=5.0).admin(net.admin_identity, secret=net.admin_secret)
    hs_admin = {
        "index": 100,
        "type": "HS_ADMIN",
        "data": {
            "format": "admin",
            "value": {"handle": "0.NA/20.500.1", "index": 300, "permissions": "111111111111"},
        },
    }
    created = admin.create_handle(
        "20.500.1/made", [HandleValue(1, "URL", "https://a.example/"), hs_admin]
    )
    assert created == "20.500.1/made"
    r = Resolver(root=net.root, cache=False)
    assert r.resolve("20.500.1/made").url == "https://a.example/"
    admin.add_values("20.500.1/made", [HandleValue(2, "EMAIL", "x@example.org")])
    admin.modify_values(
        "20.500.1/made",
        [{"index": 1, "type": "URL", "data": {"format": "string", "value": "https://b.example/"}}],
    )
    assert r.resolve("20.500.1/made").urls == ["https://b.example/"]
    admin.remove_values("20.500.1/made", [2])
    assert [v.index for v in r.resolve("20.500.1/made")] == [1, 100]
    lister = Resolver(server=net.servers[0]).admin(net.admin_identity, secret=net.admin_secret)
    assert "20.500.1/made" in lister.list_handles("20.500.1")

    with pytest.raises(hr.HandleAlreadyExists) as info:
        admin.create_handle("20.500.1/made", [HandleValue(1, "URL", "https://c.example/")])
    assert info.value.response_code == 101
    with pytest.raises(hr.ValueAlreadyExists):
        admin.add_values("20.500.1/made", [HandleValue(1, "URL", "https://c.example/")])
    with pytest.raises(hr.NoSuchValues):
        admin.remove_values("20.500.1/made", [77])
    with pytest.raises(hr.AdminAuthenticationFailed) as failed:
        Resolver(root=net.root).admin(net.admin_identity, secret="wrong").delete_handle(
            "20.500.1/made"
        )
    assert failed.value.response_code == 403
    net.insert("20.500.1/USER", [HandleValue(300, "HS_SECKEY", "user-secret")])
    with pytest.raises(hr.NotPermitted) as denied:
        Resolver(root=net.root).admin("300:20.500.1/USER", secret=b"user-secret").delete_handle(
            "20.500.1/made"
        )
    assert denied.value.response_code == 400
    with pytest.raises(hr.InvalidIdentifier):
        admin.delete_handle("no slash")

    admin.delete_handle("20.500.1/made")
    with pytest.raises(hr.HandleNotFound):
        r.resolve("20.500.1/made")
    with pytest.raises(hr.HandleDoesNotExist) as gone:
        admin.delete_handle("20.500.1/made")
    assert gone.value.response_code == 100


def test_admin_key_files(net: TestNetwork, tmp_path: object) -> None:
    from pathlib import Path

    secret_file = Path(str(tmp_path)) / "admin.secret"
    secret_file.write_text(net.admin_secret + "\n")
    admin = Resolver(root=net.root).admin(net.admin_identity, secret_file=str(secret_file))
    admin.create_handle(
        "20.500.1/from-file",
        [HandleValue(1, "URL", "https://f.example/"), owner_value(net.admin_identity)],
    )
    admin.delete_handle("20.500.1/from-file")
    with pytest.raises(ValueError):
        Resolver(root=net.root).admin(net.admin_identity, key_file=str(secret_file))
    with pytest.raises(ValueError):
        Resolver(root=net.root).admin(net.admin_identity, secret="a", secret_file=str(secret_file))


def test_admin_private_key_files_of_every_kind(
    net: TestNetwork, tmp_path: object, admin_cli: object
) -> None:
    """One key as encrypted PKCS#8, as a JWK (converted by `admin convert-key`) and beside a
    certificate in one PEM file (pyhandle's `certificate_and_key`): each authenticates."""
    import subprocess
    from pathlib import Path

    d = Path(str(tmp_path))
    who = "300:20.500.1/keyed"
    key_pem, cert_pem = TestNetwork.client_certificate(who, "pass phrase")
    pem = d / "key.pem"
    pem.write_text(key_pem)
    plain = d / "plain.pem"
    pass_file = d / "pass"
    pass_file.write_text("pass phrase")
    convert = [str(admin_cli), "convert-key", "--in-passphrase-file", str(pass_file)]
    subprocess.run(
        [*convert, "--to", "pkcs8-pem", "--no-passphrase", str(pem), str(plain)], check=True
    )
    jwk = d / "key.jwk"
    subprocess.run([*convert, "--to", "jwk", "--no-passphrase", str(pem), str(jwk)], check=True)
    assert '"kty"' in jwk.read_text()
    net.add_identity(who, key_file=str(plain))
    beside = d / "cert_and_key.pem"
    beside.write_text(cert_pem + plain.read_text())
    r = Resolver(root=net.root, timeout=5.0)
    for n, (file, passphrase) in enumerate([(pem, "pass phrase"), (jwk, None), (beside, None)]):
        admin = r.admin(who, key_file=str(file), key_passphrase=passphrase)
        handle = f"20.500.1/keyed-{n}"
        admin.create_handle(handle, [HandleValue(1, "URL", "https://k.example/"), owner_value(who)])
        admin.delete_handle(handle)
    with pytest.raises(ValueError):
        r.admin(who, key_file=str(jwk), key_passphrase="a JWK is never encrypted")


def test_key_file_messages(net: TestNetwork, tmp_path: object) -> None:
    """A key file that is none, a missing one, and an encrypted one without its passphrase:
    each message names the file and what to do."""
    from pathlib import Path

    d = Path(str(tmp_path))
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "auth" / "convert-key"
    passwd = d / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    missing = d / "missing.pem"
    encrypted = fixtures / "rsa_priv_3des.pem"
    r = Resolver(root=net.root)
    who = "300:20.500.1/keyed"
    for file, says in [
        (passwd, f"key_file {passwd}: not a usable private key: not a private key file: "),
        (missing, f"key_file {missing}: cannot read the key file: no such file"),
        (
            encrypted,
            f"key_file {encrypted}: the PKCS#8 key file is encrypted and needs a passphrase: "
            "give the passphrase as key_passphrase=",
        ),
    ]:
        with pytest.raises(ValueError) as info:
            r.admin(who, key_file=str(file))
        assert says in str(info.value), str(info.value)
    # The reference's hdl-convert-key -crypt form reads with its passphrase (OpenSSL made it).
    admin = r.admin(who, key_file=str(encrypted), key_passphrase="grüße-päss-ß-3")
    assert admin is not None


def test_create_handle_overwrite(net: TestNetwork) -> None:
    admin = Resolver(root=net.root, timeout=5.0).admin(net.admin_identity, secret=net.admin_secret)
    r = Resolver(root=net.root, cache=False)
    handle = "20.500.1/overwritten"
    me = owner_value(net.admin_identity)
    admin.create_handle(handle, [HandleValue(1, "URL", "https://one.example/"), me])
    with pytest.raises(hr.HandleAlreadyExists):
        admin.create_handle(
            handle, [HandleValue(1, "URL", "https://two.example/")], overwrite=False
        )
    assert r.resolve(handle).url == "https://one.example/"
    created = admin.create_handle(
        handle,
        [
            HandleValue(1, "URL", "https://two.example/"),
            HandleValue(2, "EMAIL", "x@example.org"),
            me,
        ],
        overwrite=True,
    )
    assert created == handle
    record = r.resolve(handle)
    assert [(v.index, v.type) for v in record] == [(1, "URL"), (2, "EMAIL"), (100, "HS_ADMIN")]
    assert record.url == "https://two.example/"
    # On a handle that does not exist, overwrite creates it.
    admin.create_handle(
        "20.500.1/fresh-ow", [HandleValue(1, "URL", "https://f.example/"), me], True
    )
    assert r.resolve("20.500.1/fresh-ow").url == "https://f.example/"
    admin.delete_handle(handle)
    admin.delete_handle("20.500.1/fresh-ow")
