"""Fixtures: the loopback test network (in this process), the repository's paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from handle_resolver import Resolver
from handle_resolver.testing import TestNetwork

REPO = Path(__file__).resolve().parents[2]


def owner_value(identity: str, index: int = 100) -> dict[str, Any]:
    """An HS_ADMIN value (REST JSON) naming ``identity`` (``INDEX:HANDLE``) with every
    permission: what a handle needs so that its creator may change it later, as on the
    reference server a prefix's administrators may only create and list."""
    at, handle = identity.split(":", 1)
    return {
        "index": index,
        "type": "HS_ADMIN",
        "data": {
            "format": "admin",
            "value": {"handle": handle, "index": int(at), "permissions": "111111111111"},
        },
    }


@pytest.fixture(scope="module")
def net() -> Iterator[TestNetwork]:
    """A fresh test network per test module (tests that inject faults get their own)."""
    with TestNetwork(http=True) as network:
        network.populate(1000)
        yield network


@pytest.fixture
def resolver(net: TestNetwork) -> Resolver:
    return Resolver(root=net.root, timeout=5.0)


@pytest.fixture(scope="session")
def resolve_cli() -> Path:
    """The `resolve` CLI as ``cargo test`` / ``cargo build --examples`` builds it; the tests
    that use it fail (never skip) when it is missing."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "debug" / "examples" / "resolve"
    assert path.is_file(), f"{path} is missing: run `cargo build --examples --all-features` first"
    return path


@pytest.fixture(scope="session")
def admin_cli() -> Path:
    """The `admin` CLI (keygen, convert-key), built as `resolve_cli` is; missing, the tests
    that use it fail."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "debug" / "examples" / "admin"
    assert path.is_file(), f"{path} is missing: run `cargo build --examples --all-features` first"
    return path
