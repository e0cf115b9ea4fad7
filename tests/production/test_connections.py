"""Defect 2 of issue 10: persistent database connections with health checks, and a database outage
answered as 503 with the error body (never a 500)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import InterfaceError, OperationalError
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[2]


def settings_of(*names, **env) -> str:
    code = ("import django; django.setup(); from django.conf import settings as s; "
            f"d = s.DATABASES['default']; print({', '.join(names)})")
    clean = {k: v for k, v in os.environ.items() if k != "GAVEL_DB_CONN_MAX_AGE"}
    clean.update(DJANGO_SETTINGS_MODULE="governance.settings", **env)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True,
                          timeout=60, check=True).stdout.strip()


def test_connections_persist_by_default_and_are_health_checked():
    assert settings_of("d['CONN_MAX_AGE']", "d['CONN_HEALTH_CHECKS']") == "60 True"


def test_gavel_db_conn_max_age_0_closes_after_each_request_as_pgbouncer_transaction_mode_may_want():
    assert settings_of("d['CONN_MAX_AGE']", "d['CONN_HEALTH_CHECKS']", GAVEL_DB_CONN_MAX_AGE="0") == "0 True"


def test_postgresql_uses_gavels_backend_with_the_same_settings():
    """Gavel's backend only changes how the health check is made (governance/postgresql/base.py):
    persistence, health checks and the connect timeout stay as they are."""
    url = {"DATABASE_URL": "postgres://gavel@db.internal:5432/gavel", "SECRET_KEY": "x"}
    assert settings_of("d['ENGINE']", "d['CONN_MAX_AGE']", "d['CONN_HEALTH_CHECKS']", "d['HOST']", "d['NAME']",
                       "d['OPTIONS']", **url) == "governance.postgresql 60 True db.internal gavel {'connect_timeout': 5}"


def test_a_celery_worker_still_pools_its_connections_on_gavels_backend():
    code = ("import django; django.setup(); from governance.celery import pool_worker_connections; "
            "from django.conf import settings as s; print(pool_worker_connections(), "
            "s.DATABASES['default']['OPTIONS']['pool']['max_size'], s.DATABASES['default']['CONN_MAX_AGE'])")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "governance.settings", "SECRET_KEY": "x",
           "DATABASE_URL": "postgres://gavel@db.internal:5432/gavel", "GAVEL_WORKER_DB_CONNECTIONS": "8"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    assert out == "True 8 0"


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
@pytest.mark.parametrize("debug", [False, True])
def test_a_database_outage_during_a_screening_is_a_503_with_the_error_body(api, monkeypatch, error, debug):
    def unreachable(*args, **kwargs):
        raise error('connection to server at "db.internal" failed: password=hunter2')

    monkeypatch.setattr("governance.screening.service.run_pipeline", unreachable)
    with override_settings(DEBUG=debug):
        response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": "x"}, format="json")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"]
    assert response.json()["error"]["code"] == "unavailable"
    assert set(response.json()["error"]) == {"code", "message", "fields"}
    assert "hunter2" not in response.content.decode() and "db.internal" not in response.content.decode()


def test_a_database_outage_while_authenticating_is_a_503_too(db, client, monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    # Authentication reads the database before any view: make that the failing read.
    with monkeypatch.context() as patched:
        patched.setattr("governance.api.auth.connection.cursor", unreachable)
        response = client.post("/api/v1/screenings", {"text": "x"}, content_type="application/json",
                               HTTP_AUTHORIZATION="Bearer whatever")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"


def test_a_database_outage_on_the_openai_gateway_is_a_503_in_openai_s_error_body(api, monkeypatch):
    """SPEC §11.5: errors under /openai/ use OpenAI's error body, with the statuses of §11.1."""
    def unreachable(*args, **kwargs):
        raise OperationalError('connection to server at "db.internal" failed: password=hunter2')

    with monkeypatch.context() as patched:
        patched.setattr("governance.screening.service.run_pipeline", unreachable)
        patched.setattr("governance.runs.completions.services.resolve_configurations", unreachable)
        response = api.post("/openai/v1/chat/completions",
                            {"model": "newsroom", "messages": [{"role": "user", "content": "Hello"}]}, format="json")
    assert response.status_code == 503 and response["Retry-After"]
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"} and error["type"] == "api_error"
    assert "hunter2" not in response.content.decode() and "db.internal" not in response.content.decode()
