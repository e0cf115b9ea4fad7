"""Defect 3 of issue 10: a cache outage never takes the API down, and /healthz says so.

Decision (docs/decisions.md, "Throttling when the cache is down"): the throttle falls back
to counting in the process's own memory, logs a warning, and goes back to the shared cache
once it answers again. Governance checks never read this cache: they stay fail-closed.
"""
import logging

import pytest
from django.test import override_settings

from tests.provider_server import unused_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_cache():
    """CACHE_URL pointing at a port where no Redis listens."""
    url = f"redis://127.0.0.1:{unused_port()}/0"
    config = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                          "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    with override_settings(CACHES=config):  # Django's setting_changed handler drops the old cache
        yield url
    # The throttle's own memory of the outage is per process: start the next test without it.
    from governance.api import auth

    auth._shared_cache_down_until = 0.0
    auth._fallback_cache.clear()


def screen(api, text="A quiet harbour."):
    return api.post("/api/v1/screenings", {"configuration": "newsroom", "text": text}, format="json")


def test_a_screening_is_served_while_the_cache_is_down(api, dead_cache, caplog):
    with caplog.at_level(logging.WARNING, logger="gavel.api"):
        response = screen(api)
    assert response.status_code == 200, response.content
    assert response.json()["outcome"] == "allowed"
    assert any("cache" in record.getMessage() for record in caplog.records)


def test_the_fallback_still_throttles(make_consumer, configuration, dead_cache):
    from rest_framework.test import APIClient

    consumer, token = make_consumer("tight", [configuration], throttle_rate="2/min")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    statuses = [screen(client).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_healthz_reports_a_cache_that_is_down(client, dead_cache):
    response = client.get("/healthz")
    body = response.json()
    assert body["cache"]["ok"] is False and body["cache"]["error"]
    # Screenings still run (the throttle falls back), so the instance stays in rotation: degraded, not down.
    assert response.status_code == 200
    assert body["status"] == "degraded"


def test_healthz_reports_a_working_cache(client):
    body = client.get("/healthz").json()
    assert body["cache"]["ok"] is True
    assert body["status"] == "ok"
