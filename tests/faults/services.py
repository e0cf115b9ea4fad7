"""Private services for the fault tests: a Redis the test may stop, a TCP proxy to PostgreSQL it may cut.

The machine's shared PostgreSQL (5432) and Redis (6379) serve other test runs: a fault test never
stops them. It starts its own redis-server on a free port, and reaches PostgreSQL through a proxy
whose connections it can cut (and whose server-side backends it then terminates).
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

from tests.provider_server import unused_port


class PrivateRedis:
    """redis-server on a free port, in a temporary directory; stop() and start() keep the port."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.port = unused_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> PrivateRedis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


class CuttableProxy:
    """A TCP proxy to host:port. cut() closes every connection and refuses new ones; restore() heals."""

    def __init__(self, host: str, port: int):
        self.upstream = (host, port)
        self.port = unused_port()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.2)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._cut = False
        self._stopped = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            if self._cut:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, server))
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                self._close(sock)

    def _close(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    def cut(self) -> None:
        self._cut = True
        with self._lock:
            sockets = list(self._open)
        for sock in sockets:
            self._close(sock)

    def restore(self) -> None:
        self._cut = False

    def stop(self) -> None:
        self._stopped = True
        self.cut()
        self._listener.close()
        self._thread.join(timeout=2)
