"""Pytest fixtures around the fake provider server (tests/provider_server.py).

One server per test session on 127.0.0.1 (started on first use); each test
gets it freshly reset. Import ``provider_server`` into a conftest or a test
module; it needs no other fixture in scope.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator

import pytest

from tests.provider_server import ProviderServer

__all__ = ["provider_server", "provider_server_session", "shared_provider_server"]

_lock = threading.Lock()
_shared: ProviderServer | None = None


def shared_provider_server() -> ProviderServer:
    """The session's one server, started on first use and stopped at exit."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = ProviderServer().start()
            atexit.register(_shared.stop)
        return _shared


@pytest.fixture(scope="session")
def provider_server_session() -> ProviderServer:
    """The shared server, not reset (for session-scoped setup)."""
    return shared_provider_server()


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    """The shared server with an empty script, default answer and request log."""
    server = shared_provider_server()
    server.reset()
    yield server
    server.reset()
