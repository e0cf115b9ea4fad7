"""What the benchmarks share to time POST /api/v1/screenings in-process: a fresh SQLite database with
Gavel's migrations, a consumer's client, and one timed request."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django(prefix: str, *, in_memory: bool = False, postgres: str | None = None) -> None:
    """Configure and start Django on a new SQLite file in a temporary directory (or in memory, where
    disk syncs would drown what is timed), migrated. With `postgres` (a server URL such as
    postgres://postgres@127.0.0.1:5432), on a new PostgreSQL database of that server instead, dropped
    when the process exits."""
    workdir = tempfile.mkdtemp(prefix=prefix)
    if postgres:
        os.environ["DATABASE_URL"] = new_postgres_database(postgres.rstrip("/"), prefix)
    else:
        os.environ["DATABASE_URL"] = "sqlite://:memory:" if in_memory else f"sqlite:///{workdir}/bench.sqlite3"
    os.environ.setdefault("GAVEL_TESTING", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "governance.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def new_postgres_database(server: str, prefix: str) -> str:
    """Create an empty database on the server; drop it at exit. Returns its URL."""
    import atexit

    import psycopg

    name = f"{prefix.strip('-').replace('-', '_')}_{os.getpid()}"
    admin = server.replace("postgres://", "postgresql://", 1) + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop():
        from django.db import connections

        connections.close_all()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    atexit.register(drop)
    return f"{server}/{name}"


@contextmanager
def provider_in_another_process(default_answer: dict) -> Iterator[str]:
    """The test provider server (tests/provider_server.py) in a child process, answering every
    request with `default_answer`; yields its API base. In the timing process its handler threads
    would compete with the request being timed for the interpreter lock, as a remote provider never does."""
    code = ("import json, sys; from tests.provider_server import ProviderServer; "
            "server = ProviderServer().start(); server.set_default(json.loads(sys.argv[1])); "
            "print(server.base_url, flush=True); sys.stdin.read(); server.stop()")
    child = subprocess.Popen([sys.executable, "-c", code, json.dumps(default_answer)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        yield child.stdout.readline().strip()
    finally:
        child.stdin.close()
        child.wait(timeout=10)


def consumer_client(configurations: Iterable):
    """A test client holding a new consumer's token, allowed `configurations` and never throttled."""
    from django.test import Client

    from governance.models import Consumer

    consumer = Consumer(name="bench", throttle_rate="1000000/min")
    token = consumer.issue_token()
    consumer.save()
    consumer.configurations.set(configurations)
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def screening_timer(client, text: str) -> Callable[[str], float]:
    """post(identifier): seconds one screening of `text` under that configuration takes; it must be
    answered 200 and delivered, so a comparison never times a refusal."""

    def post(identifier: str) -> float:
        body = {"text": text, "configuration": identifier}
        start = time.perf_counter()
        response = client.post("/api/v1/screenings", body, content_type="application/json")
        elapsed = time.perf_counter() - start
        assert response.status_code == 200, response.content
        assert response.json()["outcome"] == "allowed", response.json()
        return elapsed

    return post
