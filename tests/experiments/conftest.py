"""The store-backed experiment tests run on every backend the store tests use; the
integration tests (LangChain, LlamaIndex) run offline."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.store.conftest import postgres_server, store_url  # noqa: F401

_LOCAL = {"localhost", "127.0.0.1", "::1"}


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection or name lookup beyond this machine fails at once, so a library that
    would download something (a tokenizer, NLTK data) fails the test instead of passing
    where the network is up, or hanging where it is down."""
    connect, lookup = socket.socket.connect, socket.getaddrinfo

    def local_connect(self: socket.socket, address: Any) -> None:
        if self.family == getattr(socket, "AF_UNIX", None) or address[0] in _LOCAL:
            return connect(self, address)
        raise OSError(f"the test is offline: connection to {address} refused")

    def local_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is None or host in _LOCAL:
            return lookup(host, *args, **kwargs)
        raise OSError(f"the test is offline: lookup of {host!r} refused")

    monkeypatch.setattr(socket.socket, "connect", local_connect)
    monkeypatch.setattr(socket, "getaddrinfo", local_lookup)
