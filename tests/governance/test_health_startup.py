"""/healthz (SPEC §11.4), start-up time, and litellm staying out of every path that calls no model.

The start-up and lazy-import tests run Gavel in fresh processes: the test process
itself has long imported everything, so only a new interpreter can tell.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import OperationalError
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
# A sanity bound only: the figure that matters (under 2 s) is printed and reported, not
# asserted, so a slow or busy machine cannot turn this test red.
STARTUP_SANITY_BOUND = 10.0


# --- /healthz ---
@pytest.mark.django_db
@override_settings(CELERY_BROKER_URL="")  # unset: eager, which counts as reachable
def test_healthz_is_ok_without_a_token(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["X-Request-ID"]
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"] == {"ok": True, "mode": "eager"}


@pytest.mark.django_db
@pytest.mark.skipif(not os.environ.get("CELERY_BROKER_URL", "").startswith("redis"),
                    reason="needs the Redis broker CI provides (CELERY_BROKER_URL)")
def test_healthz_probes_the_configured_redis_broker(client):
    response = client.get("/healthz")
    assert response.status_code == 200, response.content
    assert response.json()["broker"]["ok"] is True and response.json()["broker"]["mode"] == "redis"


@pytest.mark.django_db
@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_healthz_is_503_when_the_broker_is_unreachable(client):
    started = time.monotonic()
    response = client.get("/healthz")
    assert time.monotonic() - started < 5  # the probe has its own timeout
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is False and body["broker"]["mode"] == "redis"


class UnreachableDatabase:
    def cursor(self):
        raise OperationalError('could not connect to server: host "db.internal" password=hunter2')


@pytest.mark.django_db
def test_healthz_is_503_when_the_database_is_unreachable(client, monkeypatch):
    monkeypatch.setattr("governance.health.connection", UnreachableDatabase())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"] == {"ok": False, "error": "OperationalError"}
    assert body["broker"]["ok"] is True
    assert "hunter2" not in response.content.decode() and "db.internal" not in response.content.decode()


# --- fresh processes ---
def _env(database_url: str, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GAVEL_TESTING", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "PYTEST_CURRENT_TEST")}
    env.update({"DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "governance.settings",
                "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def migrated_database(tmp_path_factory) -> Path:
    """A SQLite file with every migration applied, made once for this module."""
    path = tmp_path_factory.mktemp("gavel-db") / "gavel.sqlite3"
    subprocess.run(
        [PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True, timeout=120,
        env=_env(f"sqlite:///{path}", GAVEL_TESTING="1"),
    )
    return path


@pytest.fixture
def database_copy(migrated_database, tmp_path) -> str:
    copy = tmp_path / "gavel.sqlite3"
    shutil.copyfile(migrated_database, copy)
    return f"sqlite:///{copy}"


LAZY_IMPORT_SCRIPT = textwrap.dedent("""
    import json, sys
    import django
    django.setup()
    from django.test import Client
    from governance.models import Configuration, Consumer, Provider
    from termlists.models import TermList

    provider = Provider.objects.create(name="remote", route="openai", api_base="http://127.0.0.1:9/v1")
    configuration = Configuration.objects.create(identifier="newsroom", provider=provider, model="m")
    TermList.objects.create(name="Brand words", forbidden="Kunde").configurations.set([configuration])
    consumer = Consumer(name="cms")
    token = consumer.issue_token()
    consumer.save()
    consumer.configurations.set([configuration])

    client = Client(HTTP_AUTHORIZATION="Bearer " + token)
    finished = " ".join(["Ein ganz gewoehnlicher Satz ueber den Hafen."] * 8)
    statuses, outcomes = [], []
    for text in ("Lieber Kunde, willkommen.", finished, "AKIA" + "IOSFODNN7EXAMPLE"):
        response = client.post("/api/v1/screenings", {"configuration": "newsroom", "text": text},
                               content_type="application/json")
        statuses.append(response.status_code)
        outcomes.append(response.json()["outcome"])
    statuses.append(client.get("/healthz").status_code)
    print(json.dumps({"statuses": statuses, "outcomes": outcomes,
                      "litellm": sorted(name for name in sys.modules if name.split(".")[0] == "litellm")}))
""")


def test_a_screening_that_calls_no_model_never_imports_litellm(database_copy):
    result = subprocess.run(
        [PYTHON, "-c", LAZY_IMPORT_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env=_env(database_copy, GAVEL_TESTING="1"),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["statuses"] == [200, 200, 200, 200]
    assert report["outcomes"] == ["blocked", "allowed", "allowed"]
    assert report["litellm"] == []


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _first_200(url: str, process: subprocess.Popen, deadline: float) -> float | None:
    """Poll until the URL answers 200; the monotonic time it did, or None at the deadline."""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return None
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return time.monotonic()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.01)
    return None


SERVERS = {
    # The README's `make run`: Django's server, embedded defaults.
    "runserver": (["manage.py", "runserver", "127.0.0.1:{port}", "--noreload"],
                  {"GAVEL_EMBEDDED": "1", "DEBUG": "1"}),
    # Production: gunicorn from the venv, DEBUG off.
    "gunicorn": (["-m", "gunicorn", "--bind", "127.0.0.1:{port}", "--workers", "1", "governance.wsgi:application"],
                 {"DEBUG": "0", "SECRET_KEY": "startup-test-secret"}),
}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_start_up_to_the_first_healthz_200(database_copy, tmp_path, server):
    args, extra = SERVERS[server]
    port = _free_port()
    log = (tmp_path / "server.log").open("w+")
    started = time.monotonic()
    process = subprocess.Popen(
        [PYTHON, *[arg.format(port=port) for arg in args]], cwd=ROOT, env=_env(database_copy, **extra),
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        answered = _first_200(f"http://127.0.0.1:{port}/healthz", process, started + STARTUP_SANITY_BOUND)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log.seek(0)
    output = log.read()
    log.close()
    assert answered is not None, f"{server} gave no 200 from /healthz within {STARTUP_SANITY_BOUND} s:\n{output}"
    elapsed = answered - started
    print(f"\nstart-up ({server}): {elapsed:.2f} s from process start to the first 200 from /healthz")
    assert elapsed < STARTUP_SANITY_BOUND
    assert "litellm" not in output.lower()
