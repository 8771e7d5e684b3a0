"""Fixtures: the loopback test network (in this process), the repository's paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from handle_resolver import Resolver
from handle_resolver.testing import TestNetwork

REPO = Path(__file__).resolve().parents[2]


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
